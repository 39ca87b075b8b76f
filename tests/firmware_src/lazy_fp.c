/* Lazy FP context preservation (Armv7-M ARM B1.5.7). Thread code holds known values in S0-S15
 * and FPSCR and is interrupted twice: IRQ0's handler does no FP work, IRQ1's does. Each handler
 * reads FPCCR (and IRQ1 FPCAR) before any FP instruction of its own; after its FP work IRQ1
 * reads its frame's FP words, where the save must have put the interrupted values. Built with
 * -DEAGER, main first clears FPCCR.LSPEN, so the context is written at every entry. The program
 * prints what it saw and exits 0 when every check held, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ISPR0 (*(volatile uint32_t *)0xE000E200u)
#define VTOR (*(volatile uint32_t *)0xE000ED08u)
#define CPACR (*(volatile uint32_t *)0xE000ED88u)
#define FPCCR (*(volatile uint32_t *)0xE000EF34u)
#define FPCAR (*(volatile uint32_t *)0xE000EF38u)
#define LSPEN (1u << 30)
#define LSPACT 1u

extern void (*const vector_table[16])(void);
static void (*ram_vectors[48])(void) __attribute__((aligned(256)));
static const uint32_t pattern[17] = {
    0x3f800000u, 0x40000000u, 0x40400000u, 0x40800000u, 0x40a00000u, 0x40c00000u, 0x40e00000u,
    0x41000000u, 0x41100000u, 0x41200000u, 0x41300000u, 0x41400000u, 0x41500000u, 0x41600000u,
    0x41700000u, 0x41800000u, 0x03000000u};   /* 1.0 .. 16.0, then FPSCR: RMode round-to-zero */
static volatile uint32_t irq0_fpccr, irq1_fpccr_before, irq1_fpccr_after, irq1_fpcar, irq1_frame;
static volatile uint32_t irq1_saved[17];
volatile float irq1_result;

/* No FP instruction in IRQ0: on silicon its space is reserved and never written. */
__attribute__((target("general-regs-only"))) static void irq0(void) { irq0_fpccr = FPCCR; }

__attribute__((noinline)) static float irq1_fp_work(void) {
    volatile float x = 1.5f;
    return x * x;
}

/* IRQ1's frame is at MSP on entry (the thread runs on MSP), its FP words from frame + 8. */
__attribute__((used, noinline)) void irq1_body(const uint32_t *frame) {
    irq1_fpccr_before = FPCCR;            /* integer code: no FP instruction yet */
    irq1_fpcar = FPCAR;
    irq1_frame = (uint32_t)frame;
    irq1_result = irq1_fp_work();         /* the first FP instruction: the lazy save */
    irq1_fpccr_after = FPCCR;
    memcpy((void *)irq1_saved, frame + 8, sizeof irq1_saved);
}

__attribute__((naked)) static void irq1(void) {
    __asm volatile("mrs r0, msp\n\tb irq1_body");
}

/* S0-S15 and FPSCR loaded from `in`, IRQ `n` pended, then the registers stored to `out`. */
__attribute__((noinline)) static void interrupted_fp(uint32_t n, uint32_t *out) {
    __asm volatile(
        "vldmia %[in], {s0-s15}\n\t"
        "ldr r3, [%[in], #64]\n\t"
        "vmsr fpscr, r3\n\t"
        "str %[bit], [%[ispr]]\n\t"
        "dsb\n\t"
        "isb\n\t"
        "vstmia %[out], {s0-s15}\n\t"
        "vmrs r3, fpscr\n\t"
        "str r3, [%[out], #64]\n\t"
        :
        : [in] "r"(pattern), [out] "r"(out), [bit] "r"(1u << n), [ispr] "r"(&NVIC_ISPR0)
        : "r3", "memory", "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
          "s12", "s13", "s14", "s15");
}

int main(void) {
    memcpy(ram_vectors, vector_table, sizeof(void (*)(void)) * 16);
    ram_vectors[16] = irq0;
    ram_vectors[17] = irq1;
    VTOR = (uint32_t)ram_vectors;
    NVIC_ISER0 = 3u;
#ifdef EAGER
    FPCCR &= ~LSPEN;
#endif
    uint32_t after0[17], after1[17];
    interrupted_fp(0, after0);
    interrupted_fp(1, after1);
    int kept = !memcmp(after0, pattern, sizeof pattern) && !memcmp(after1, pattern, sizeof pattern);
    int saved = !memcmp((const void *)irq1_saved, pattern, sizeof pattern);
    int lazy = (FPCCR & LSPEN) != 0;
    int flags = (irq0_fpccr & LSPACT) == (lazy ? LSPACT : 0)
                && (irq1_fpccr_before & LSPACT) == (lazy ? LSPACT : 0)
                && !(irq1_fpccr_after & LSPACT) && !(FPCCR & LSPACT)
                && (!lazy || irq1_fpcar == irq1_frame + 0x20);
    printf("kept %d saved %d flags %d result %d\n", kept, saved, flags, (int)(irq1_result * 4));
    return kept && saved && flags && irq1_result == 2.25f ? 0 : 1;
}
