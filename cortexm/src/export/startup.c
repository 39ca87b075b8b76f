/* micro-rt export: the vector table and the reset handler.
 *
 * The reset handler copies .data's initial values from flash, clears .bss (the arena, the
 * console), enables the FPU (CPACR) on a core that has one, and sets up the flash interface
 * `micro-rt profile --board` assumed: the flash-control register writes mrt_board.h lists
 * (latency, prefetch, the flash accelerator or cache, from the board catalog's records), and on
 * a Cortex-M7 the L1 instruction and data caches. The core clock stays the reset clock (the
 * clock tree is the user's: README.txt). Then it calls main. Built with -DMRT_SEMIHOSTING,
 * main's return ends the program through semihosting (SYS_EXIT_EXTENDED with main's status);
 * otherwise the core waits for ever. `micro-rt emulate` runs either build from its reset
 * vector, as the core does. */
#include <stdint.h>
#include "mrt_board.h"

extern uint32_t __stack_top;
extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end;

int main(void);
void Reset_Handler(void);
void Default_Handler(void);
#if defined(__ARM_ARCH_6M__)
void SysTick_Handler(void);
#define MRT_SYSTICK SysTick_Handler
#else
#define MRT_SYSTICK Default_Handler
#endif

void Default_Handler(void)
{
    for (;;) {
    }
}

__attribute__((section(".vectors"), used)) const void *const g_mrt_vectors[16] = {
    &__stack_top, (const void *)Reset_Handler,
    (const void *)Default_Handler, (const void *)Default_Handler,     /* NMI, HardFault */
    (const void *)Default_Handler, (const void *)Default_Handler,     /* MemManage, BusFault */
    (const void *)Default_Handler, 0, 0, 0, 0,                         /* UsageFault, reserved */
    (const void *)Default_Handler, (const void *)Default_Handler,     /* SVCall, DebugMonitor */
    0, (const void *)Default_Handler, (const void *)MRT_SYSTICK,       /* reserved, PendSV, SysTick */
};

#define MRT_BARRIERS() __asm volatile("dsb\n\tisb" ::: "memory")

#if MRT_N_FLASH_WRITES > 0
static const mrt_register_write_t g_mrt_flash_writes[MRT_N_FLASH_WRITES] = {MRT_FLASH_WRITES};

/* Each write sets the register's `mask` bits to `value` and keeps the others (a read-modify-
 * write at the register's own width), then reads the register back, so the new latency holds
 * before the next access to flash (the latency comes first, mrt_board.h orders them). */
static void mrt_flash_setup(void)
{
    for (uint32_t i = 0; i < MRT_N_FLASH_WRITES; i++) {
        const mrt_register_write_t *w = &g_mrt_flash_writes[i];
        if (w->bytes == 1u) {
            volatile uint8_t *reg = (volatile uint8_t *)w->address;
            *reg = (uint8_t)((*reg & ~w->mask) | w->value);
            (void)*reg;
        } else if (w->bytes == 2u) {
            volatile uint16_t *reg = (volatile uint16_t *)w->address;
            *reg = (uint16_t)((*reg & ~w->mask) | w->value);
            (void)*reg;
        } else {
            volatile uint32_t *reg = (volatile uint32_t *)w->address;
            *reg = (*reg & ~w->mask) | w->value;
            (void)*reg;
        }
    }
    MRT_BARRIERS();
}
#endif

#if MRT_L1_CACHES
/* The Cortex-M7's L1 caches are disabled at reset (CCR.IC and CCR.DC clear) and must be
 * invalidated before they are enabled: the I-cache whole (ICIALLU), the D-cache line by line,
 * every set and way of level 1 as CCSIDR describes it (DCISW: the way in the top bits, the set
 * above the line offset), each followed by the barriers the architecture asks for. */
#define SCB_CCR     (*(volatile uint32_t *)0xE000ED14u)
#define SCB_CCSIDR  (*(volatile uint32_t *)0xE000ED80u)
#define SCB_CSSELR  (*(volatile uint32_t *)0xE000ED84u)
#define SCB_ICIALLU (*(volatile uint32_t *)0xE000EF50u)
#define SCB_DCISW   (*(volatile uint32_t *)0xE000EF60u)
#define CCR_DC      (1u << 16)
#define CCR_IC      (1u << 17)

static void mrt_l1_caches_on(void)
{
    MRT_BARRIERS();
    SCB_ICIALLU = 0u;
    MRT_BARRIERS();
    SCB_CCR |= CCR_IC;
    MRT_BARRIERS();

    SCB_CSSELR = 0u;                                   /* level 1, data cache */
    __asm volatile("dsb" ::: "memory");
    uint32_t ccsidr = SCB_CCSIDR;
    uint32_t sets = ((ccsidr >> 13) & 0x7FFFu) + 1u;   /* NumSets - 1 */
    uint32_t ways = ((ccsidr >> 3) & 0x3FFu) + 1u;     /* Associativity - 1 */
    uint32_t set_shift = (ccsidr & 7u) + 4u;           /* log2(line bytes) */
    uint32_t way_shift = ways > 1u ? (uint32_t)__builtin_clz(ways - 1u) : 0u;   /* top bits */
    for (uint32_t set = 0; set < sets; set++) {
        for (uint32_t way = 0; way < ways; way++) {
            SCB_DCISW = (way << way_shift) | (set << set_shift);
        }
    }
    __asm volatile("dsb" ::: "memory");
    SCB_CCR |= CCR_DC;
    MRT_BARRIERS();
}
#endif

#if defined(MRT_SEMIHOSTING)
/* SYS_EXIT_EXTENDED (0x20): the parameter block is the reason, ADP_Stopped_ApplicationExit
 * (0x20026), and the exit status (Arm's semihosting specification). A debugger ends the session
 * with the status; `micro-rt emulate` exits with it. */
static void mrt_semihost_exit(int status)
{
    uint32_t block[2] = {0x20026u, (uint32_t)status};
    register uint32_t op __asm("r0") = 0x20u;
    register uint32_t *arg __asm("r1") = block;
    __asm volatile("bkpt #0xab" : "+r"(op) : "r"(arg) : "memory");
}
#endif

void Reset_Handler(void)
{
    uint32_t *src = &__data_load;
    for (uint32_t *dst = &__data_start; dst < &__data_end;) {
        *dst++ = *src++;
    }
    for (uint32_t *dst = &__bss_start; dst < &__bss_end;) {
        *dst++ = 0u;
    }
#if defined(__ARM_FP)
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;      /* CPACR: CP10, CP11 full access */
    MRT_BARRIERS();
#endif
#if MRT_N_FLASH_WRITES > 0
    mrt_flash_setup();
#endif
#if MRT_L1_CACHES
    mrt_l1_caches_on();
#endif
    int status = main();
#if defined(MRT_SEMIHOSTING)
    mrt_semihost_exit(status);
#else
    (void)status;
#endif
    for (;;) {
    }
}
