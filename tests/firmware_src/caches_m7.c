/* A Cortex-M7 program that enables its L1 caches as CMSIS's SCB_EnableICache / SCB_EnableDCache
 * do (invalidate, then CCR.IC / CCR.DC) and times the same loop before and after. */
#include <stdint.h>
#include <stdio.h>

#define CCR (*(volatile uint32_t *)0xE000ED14u)
#define CCSIDR (*(volatile uint32_t *)0xE000ED80u)
#define CSSELR (*(volatile uint32_t *)0xE000ED84u)
#define ICIALLU (*(volatile uint32_t *)0xE000EF50u)
#define DCISW (*(volatile uint32_t *)0xE000EF60u)
#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define DWT_LAR (*(volatile uint32_t *)0xE0001FB0u)

static const uint32_t table[256] = {1, 2, 3};
volatile uint32_t sink;

__attribute__((noinline)) uint32_t timed_loop(void) {
    uint32_t t0 = DWT_CYCCNT, acc = 0;
    for (int r = 0; r < 20; r++)
        for (int i = 0; i < 256; i++) acc += table[i] + (uint32_t)i;
    sink = acc;
    return DWT_CYCCNT - t0;
}

static void enable_caches(void) {
    __asm__ volatile("dsb\n isb");
    ICIALLU = 0;
    CCR |= 1u << 17;                               /* IC */
    CSSELR = 0;
    uint32_t ccsidr = CCSIDR;
    uint32_t sets = ((ccsidr >> 13) & 0x7FFF) + 1, ways = ((ccsidr >> 3) & 0x3FF) + 1;
    for (uint32_t s = 0; s < sets; s++)
        for (uint32_t w = 0; w < ways; w++) DCISW = (s << 5) | (w << 30);
    CCR |= 1u << 16;                               /* DC */
    __asm__ volatile("dsb\n isb");
    printf("sets %lu ways %lu\n", (unsigned long)sets, (unsigned long)ways);
}

int main(void) {
    DEMCR |= 1u << 24;
    DWT_LAR = 0xC5ACCE55u;
    DWT_CTRL |= 1u;
    uint32_t off = timed_loop();
    enable_caches();
    uint32_t on = timed_loop();
    printf("caches off %lu on %lu\n", (unsigned long)off, (unsigned long)on);
    return on < off ? 0 : 1;
}
