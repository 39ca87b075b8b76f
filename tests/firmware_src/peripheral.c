/* A write to a peripheral micro_rt does not model (an STM32 GPIO port's ODR): the run stops
 * there, named, unless --ignore-mmio. */
#include <stdint.h>
#include <stdio.h>
int main(void) {
    *(volatile uint32_t *)0x48000414u = 1;
    puts("after the peripheral write");
    return 0;
}
