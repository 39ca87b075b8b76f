/* micro-rt export: the vector table and the reset handler.
 *
 * The reset handler copies .data's initial values from flash, clears .bss (the arena, the
 * console) and, on a core with an FPU, enables it (CPACR) before calling main. Built with
 * -DMRT_EMULATOR it returns when main does (micro_rt's virtual MCU runs it as a call and has
 * no System Control Block); on a board it then waits for ever. */
#include <stdint.h>

extern uint32_t __stack_top;
extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end;

int main(void);
void Reset_Handler(void);
void Default_Handler(void);
#if defined(__ARM_ARCH_6M__) && !defined(MRT_EMULATOR)
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

void Reset_Handler(void)
{
    uint32_t *src = &__data_load;
    for (uint32_t *dst = &__data_start; dst < &__data_end;) {
        *dst++ = *src++;
    }
    for (uint32_t *dst = &__bss_start; dst < &__bss_end;) {
        *dst++ = 0u;
    }
#if defined(__ARM_FP) && !defined(MRT_EMULATOR)
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;      /* CPACR: CP10, CP11 full access */
    __asm volatile("dsb\n\tisb" ::: "memory");
#endif
    (void)main();
#ifndef MRT_EMULATOR
    for (;;) {
    }
#endif
}
