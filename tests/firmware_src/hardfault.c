/* A HardFault and the program's own handler: a load from an address no memory holds; the
 * handler reads the fault status registers, prints them and exits with code 7. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CFSR (*(volatile uint32_t *)0xE000ED28u)
#define HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define BFAR (*(volatile uint32_t *)0xE000ED38u)

void HardFault_Handler(void) {
    printf("hardfault CFSR=%08lx HFSR=%08lx BFAR=%08lx\n", (unsigned long)CFSR,
           (unsigned long)HFSR, (unsigned long)BFAR);
    exit(7);
}

__attribute__((noinline)) uint32_t bad_load(volatile uint32_t *p) { return *p; }

int main(void) {
    puts("before");
    return (int)bad_load((volatile uint32_t *)0x30000000u);
}
