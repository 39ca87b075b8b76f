/* The vector table of micro_rt's test programs: the initial stack pointer, newlib's `_start`
 * (rdimon's crt0: .bss cleared, constructors, main, exit) and the handlers a program may define;
 * the others spin, so an unexpected exception shows as a run that stops at --max-cycles. */
#include <stdint.h>

extern uint32_t _estack;
extern void _start(void);

void default_handler(void) { for (;;) {} }
void NMI_Handler(void) __attribute__((weak, alias("default_handler")));
void HardFault_Handler(void) __attribute__((weak, alias("default_handler")));
void MemManage_Handler(void) __attribute__((weak, alias("default_handler")));
void BusFault_Handler(void) __attribute__((weak, alias("default_handler")));
void UsageFault_Handler(void) __attribute__((weak, alias("default_handler")));
void SVC_Handler(void) __attribute__((weak, alias("default_handler")));
void PendSV_Handler(void) __attribute__((weak, alias("default_handler")));
void SysTick_Handler(void) __attribute__((weak, alias("default_handler")));

__attribute__((section(".vectors"), used))
void (*const vector_table[16])(void) = {
    (void (*)(void))&_estack, _start, NMI_Handler, HardFault_Handler, MemManage_Handler,
    BusFault_Handler, UsageFault_Handler, 0, 0, 0, 0, SVC_Handler, 0, 0, PendSV_Handler,
    SysTick_Handler,
};
