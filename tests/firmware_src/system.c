/* The system parts a firmware touches beyond the core: ITM stimulus port 0 as its console,
 * NVIC interrupts pended by software with their priorities (a higher-priority IRQ preempts a
 * running handler; a lower one waits for it), PendSV pended through ICSR, and the FP context of
 * the interrupted code preserved across a handler that uses the FPU itself. Ends with an AIRCR
 * system reset request (`emulate` reports it) when built with -DRESET_AT_END, else exits 0. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ITM_STIM0 (*(volatile uint32_t *)0xE0000000u)
#define ITM_TER (*(volatile uint32_t *)0xE0000E00u)
#define ITM_TCR (*(volatile uint32_t *)0xE0000E80u)
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ISPR0 (*(volatile uint32_t *)0xE000E200u)
#define NVIC_IPR ((volatile uint8_t *)0xE000E400u)
#define ICSR (*(volatile uint32_t *)0xE000ED04u)
#define VTOR (*(volatile uint32_t *)0xE000ED08u)
#define AIRCR (*(volatile uint32_t *)0xE000ED0Cu)
#define SHPR3 (*(volatile uint32_t *)0xE000ED20u)

extern void (*const vector_table[16])(void);
static void (*ram_vectors[48])(void) __attribute__((aligned(256)));
static char order[16];
static volatile int n_order;
volatile float handler_result;

static void itm_puts(const char *s) {
    if ((ITM_TCR & 1u) && (ITM_TER & 1u))
        for (; *s; s++) ITM_STIM0 = (uint8_t)*s;
}

static void irq1(void) { order[n_order++] = '1'; }
static void irq0(void) {
    order[n_order++] = '0';
    NVIC_ISPR0 = 1u << 1;                  /* IRQ1: higher priority, preempts here */
    NVIC_ISPR0 = 1u << 2;                  /* IRQ2: lower priority, waits for the return */
    order[n_order++] = 'a';
}
static void irq2(void) {
    order[n_order++] = '2';
    volatile float x = 3.0f;               /* the FPU in a handler: the interrupted S0-S15 */
    handler_result = x * x + 0.5f;         /* must come back unchanged */
}
static void pendsv(void) { order[n_order++] = 'P'; }

__attribute__((noinline)) float fp_work(float seed) {
    float acc = seed;
    for (int i = 0; i < 50; i++) {
        acc = acc * 1.0001f + 0.25f;
        if (i == 25) NVIC_ISPR0 = 1u << 0;  /* interrupts in the middle of FP work */
    }
    return acc;
}

int main(void) {
    memcpy(ram_vectors, vector_table, sizeof(void (*)(void)) * 16);
    ram_vectors[14] = pendsv;
    ram_vectors[16] = irq0;
    ram_vectors[17] = irq1;
    ram_vectors[18] = irq2;
    VTOR = (uint32_t)ram_vectors;
    NVIC_IPR[0] = 0x80;                    /* IRQ0 priority 0x80 */
    NVIC_IPR[1] = 0x40;                    /* IRQ1 0x40: preempts IRQ0 */
    NVIC_IPR[2] = 0xC0;                    /* IRQ2 0xC0: does not */
    SHPR3 = 0xFFu << 16;                   /* PendSV lowest */
    NVIC_ISER0 = 7u;
    float expected = 1.0f;
    for (int i = 0; i < 50; i++) expected = expected * 1.0001f + 0.25f;
    float got = fp_work(1.0f);
    ICSR = 1u << 28;                       /* PENDSVSET */
    order[n_order] = 0;
    itm_puts("order ");
    itm_puts(order);
    itm_puts(got == expected && handler_result == 9.5f ? "\nfp ok\n" : "\nfp BAD\n");
#ifdef RESET_AT_END
    AIRCR = (0x05FAu << 16) | (1u << 2);   /* SYSRESETREQ */
    for (;;) {}
#endif
    return 0;
}
