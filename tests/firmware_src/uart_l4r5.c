/* NUCLEO-L4R5ZI: the flash set up as a clock configuration does it (FLASH_ACR: 5 wait states,
 * prefetch on; RM0432's register, the addresses the board file cites), then a line printed on
 * the ST-LINK's virtual COM port, LPUART1, by polling its TXE flag. */
#include <stdint.h>

#define FLASH_ACR (*(volatile uint32_t *)0x40022000u)
#define LPUART1_ISR (*(volatile uint32_t *)0x4000801Cu)
#define LPUART1_TDR (*(volatile uint32_t *)0x40008028u)

static void put(const char *s) {
    for (; *s; s++) {
        while (!(LPUART1_ISR & (1u << 7))) {}
        LPUART1_TDR = (uint8_t)*s;
    }
}

volatile uint32_t sink;

int main(void) {
    FLASH_ACR = (FLASH_ACR & ~0xFu) | 5u | (1u << 8);
    while ((FLASH_ACR & 0xFu) != 5u) {}
    uint32_t acc = 0;
    for (uint32_t i = 0; i < 2000; i++) acc += i ^ (acc << 1);
    sink = acc;
    put("uart ok\n");
    return 0;
}
