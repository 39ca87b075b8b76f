/* micro-rt export: one inference of the model, timed, its outputs printed.
 *
 * The inputs (seeded random values, as `micro-rt profile --seed` uses) are copied into the
 * arena, mrt_invoke runs the plan once, and the status, the cycle count and every output byte
 * are printed to the console: a RAM buffer (g_mrt_console, read it with a debugger), and with
 * -DMRT_SEMIHOSTING (`make semihosting`) also the debugger's semihosting console (a debugger
 * must be attached, or the BKPT stops the core); startup.c then ends the program with main's
 * status, which `micro-rt emulate` exits with.
 *
 * Cycles: the DWT cycle counter (Armv7-M, Armv8-M); SysTick on Armv6-M (Cortex-M0+, no DWT
 * counter), counting its 24-bit wraps. `micro-rt emulate` times the mrt_invoke call itself
 * as well (its report's timed calls). */
#include <stdint.h>
#include "mrt_runtime.h"
#include "mrt_model.h"

#ifndef MRT_CONSOLE_BYTES
#define MRT_CONSOLE_BYTES 8192     /* mrt_model.h sizes it for the model's outputs */
#endif

volatile char g_mrt_console[MRT_CONSOLE_BYTES];
volatile uint32_t g_mrt_console_len;

static void mrt_putc(char c)
{
    if (g_mrt_console_len < MRT_CONSOLE_BYTES) {
        g_mrt_console[g_mrt_console_len++] = c;
    }
}

#ifdef MRT_SEMIHOSTING
static void mrt_semihost_write0(const char *s)
{
    register uint32_t op __asm("r0") = 0x04u;     /* SYS_WRITE0 */
    register const char *arg __asm("r1") = s;
    __asm volatile("bkpt #0xab" : "+r"(op) : "r"(arg) : "memory");
}
#endif

static void mrt_puts(const char *s)
{
#ifdef MRT_SEMIHOSTING
    mrt_semihost_write0(s);
#endif
    while (*s) {
        mrt_putc(*s++);
    }
}

static void mrt_put_u32(uint32_t v)
{
    /* By subtraction: no division, so no libgcc helper on cores without a divide instruction. */
    static const uint32_t tens[10] = {1000000000u, 100000000u, 10000000u, 1000000u, 100000u,
                                      10000u, 1000u, 100u, 10u, 1u};
    char text[11];
    int n = 0;
    for (int k = 0; k < 10; k++) {
        char digit = '0';
        while (v >= tens[k]) {
            v -= tens[k];
            digit++;
        }
        if (digit != '0' || n || k == 9) {
            text[n++] = digit;
        }
    }
    text[n] = 0;
    mrt_puts(text);
}

static void mrt_put_hex(const uint8_t *bytes, uint32_t n)
{
    static const char hex[] = "0123456789abcdef";
    char pair[3] = {0, 0, 0};
    for (uint32_t k = 0; k < n; k++) {
        pair[0] = hex[bytes[k] >> 4];
        pair[1] = hex[bytes[k] & 15u];
        mrt_puts(pair);
    }
}

#if defined(__ARM_ARCH_6M__)
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
static volatile uint32_t g_mrt_systick_wraps;
void SysTick_Handler(void) { g_mrt_systick_wraps++; }
static void mrt_cycles_start(void)
{
    SYST_RVR = 0x00FFFFFFu;
    SYST_CVR = 0u;
    SYST_CSR = 7u;                 /* processor clock, interrupt on wrap, enabled */
}
static uint32_t mrt_cycles_now(void)
{
    uint32_t wraps, value;
    do {
        wraps = g_mrt_systick_wraps;
        value = SYST_CVR;
    } while (wraps != g_mrt_systick_wraps);
    return (wraps << 24) + (0x00FFFFFFu - value);
}
#else
#define DEMCR      (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL   (*(volatile uint32_t *)0xE0001000u)
#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)
#define DWT_LAR    (*(volatile uint32_t *)0xE0001FB0u)
static void mrt_cycles_start(void)
{
    DEMCR |= 1u << 24;             /* TRCENA */
    DWT_LAR = 0xC5ACCE55u;         /* unlock (Cortex-M7; ignored where there is no lock) */
    DWT_CYCCNT = 0u;
    DWT_CTRL |= 1u;                /* CYCCNTENA */
}
static uint32_t mrt_cycles_now(void) { return DWT_CYCCNT; }
#endif

static void mrt_copy_in(const mrt_tensor_t *tensors, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = 0; k < tensors[i].size; k++) {
            g_mrt_arena[tensors[i].offset + k] = tensors[i].data[k];
        }
    }
}

int main(void)
{
    mrt_copy_in(g_mrt_variables, MRT_N_VARIABLES);
    mrt_copy_in(g_mrt_inputs, MRT_N_INPUTS);
    mrt_cycles_start();
    uint32_t t0 = mrt_cycles_now();
    int32_t status = mrt_invoke(&g_mrt_plan);
    uint32_t t1 = mrt_cycles_now();
    uint32_t cycles = t1 - t0;
    mrt_puts("model " MRT_MODEL_NAME " on " MRT_BOARD_NAME "\n");
    mrt_puts("status ");
    mrt_put_u32((uint32_t)status);
    mrt_puts("\ncycles ");
    mrt_put_u32(cycles);
    mrt_puts("\n");
    for (uint32_t i = 0; i < MRT_N_OUTPUTS; i++) {
        mrt_puts("output ");
        mrt_put_u32(i);
        mrt_puts(" ");
        mrt_put_hex(&g_mrt_arena[g_mrt_outputs[i].offset], g_mrt_outputs[i].size);
        mrt_puts("\n");
    }
    return status;
}
