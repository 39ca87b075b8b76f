/* A HardFault and the program's own handler: a load from an address no memory holds; the
 * handler reads the fault status registers, prints them, clears them by halfword and byte
 * writes (write-1-to-clear) and exits with code 7. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CFSR (*(volatile uint32_t *)0xE000ED28u)
#define HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define BFAR (*(volatile uint32_t *)0xE000ED38u)

#define UFSR (*(volatile uint16_t *)0xE000ED2Au)
#define BFSR (*(volatile uint8_t *)0xE000ED29u)

void HardFault_Handler(void) {
    printf("hardfault CFSR=%08lx HFSR=%08lx BFAR=%08lx\n", (unsigned long)CFSR,
           (unsigned long)HFSR, (unsigned long)BFAR);
    UFSR = 0xFFFFu;                 /* write-1-to-clear the usage faults: the bus fault stays */
    unsigned long kept = CFSR;
    BFSR = 0xFFu;                   /* and now the bus fault's bits */
    printf("after UFSR clear %08lx, after BFSR clear %08lx\n", kept, (unsigned long)CFSR);
    exit(7);
}

__attribute__((noinline)) uint32_t bad_load(volatile uint32_t *p) { return *p; }

int main(void) {
    puts("before");
    return (int)bad_load((volatile uint32_t *)0x30000000u);
}
