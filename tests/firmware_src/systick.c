/* SysTick interrupts: a 1000-cycle period, a handler that counts ticks; main waits for 20 ticks
 * and prints the CYCCNT at each of the first five (the test checks their spacing). */
#include <stdint.h>
#include <stdio.h>

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)

volatile uint32_t ticks;
volatile uint32_t at[5];

void SysTick_Handler(void) {
    if (ticks < 5) at[ticks] = DWT_CYCCNT;
    ticks++;
}

int main(void) {
    DEMCR |= 1u << 24;
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;
    SYST_RVR = 1000 - 1;
    SYST_CVR = 0;
    SYST_CSR = 7;               /* CLKSOURCE core, TICKINT, ENABLE */
    while (ticks < 20) {}
    SYST_CSR = 0;
    for (int i = 0; i < 5; i++) printf("tick %d at %lu\n", i, (unsigned long)at[i]);
    printf("ticks %lu\n", (unsigned long)ticks);
    return 0;
}
