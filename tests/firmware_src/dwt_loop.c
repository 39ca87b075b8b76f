/* A DWT timing loop: the cycle counter enabled as CMSIS does it, each pass of `work` timed by
 * two CYCCNT reads, the deltas and their sum printed. The test checks the printed sum against
 * the profile's cycles of `work`. */
#include <stdint.h>
#include <stdio.h>

#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define DWT_LAR (*(volatile uint32_t *)0xE0001FB0u)

volatile uint32_t sink;
uint32_t deltas[8];

__attribute__((noinline)) void work(uint32_t n) {
    uint32_t acc = 0;
    for (uint32_t i = 0; i < n; i++) acc += i * i ^ (acc >> 3);
    sink = acc;
}

int main(void) {
    DEMCR |= 1u << 24;          /* TRCENA */
    DWT_LAR = 0xC5ACCE55u;      /* unlock (Cortex-M7) */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;             /* CYCCNTENA */
    uint32_t total = 0;
    for (int k = 0; k < 8; k++) {
        uint32_t t0 = DWT_CYCCNT;
        work(100 + 10 * k);
        deltas[k] = DWT_CYCCNT - t0;
        total += deltas[k];
    }
    for (int k = 0; k < 8; k++) printf("delta %d %lu\n", k, (unsigned long)deltas[k]);
    printf("total %lu\n", (unsigned long)total);
    return 0;
}
