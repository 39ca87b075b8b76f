/* micro_rt firmware: vector table, a return trap, and the export table of the first kernels.
 * The reset vector is the device runtime's mrt_start (mrt_runtime.c), which needs no .data or
 * .bss set up: the emulator starts the image there for every inference (kernels' unit tests
 * call kernels directly). */
#include <stdint.h>
#include "arm_nnfunctions.h"
#include "mrt_nnfunctions.h"
#include "mrt_runtime.h"
#include "mrt_support.h"

extern uint32_t __stack_top;

void mrt_reset_handler(void);
void mrt_fault_handler(void);

/* No longer the reset vector (mrt_start is); kept, as firmware.ld lists it first, so that no
 * function moves (cycle figures depend on code addresses). */
__attribute__((noreturn, used)) void mrt_reset_handler(void)
{
    for (;;) {
        __asm volatile("bkpt #0");
    }
}

__attribute__((noreturn, used)) void mrt_fault_handler(void)
{
    for (;;) {
        __asm volatile("bkpt #1");
    }
}

/* A function that only returns: a safe LR target ("bkpt" stop address for the emulator). */
__attribute__((naked, used)) void mrt_return_trap(void)
{
    __asm volatile("bkpt #2\n\tb mrt_return_trap");
}

__attribute__((section(".vectors"), used)) const void *const mrt_vectors[16] = {
    &__stack_top, (const void *)mrt_start, (const void *)mrt_fault_handler,
    (const void *)mrt_fault_handler, (const void *)mrt_fault_handler, (const void *)mrt_fault_handler,
    (const void *)mrt_fault_handler, 0, 0, 0, 0, (const void *)mrt_fault_handler,
    (const void *)mrt_fault_handler, 0, (const void *)mrt_fault_handler, (const void *)mrt_fault_handler,
};


/* The kernels of the first firmware, kept through --gc-sections by this table. Frozen: the
 * table lies before all code (firmware.ld), so a new entry would move every function by 4
 * bytes and change cycle figures. A new kernel needs no entry: firmware.ld keeps every
 * .text.arm_* and .text.mrt_* section. */
__attribute__((section(".mrt_exports"), used)) const void *const mrt_exports[] = {
    (const void *)arm_convolve_wrapper_s8, (const void *)arm_convolve_wrapper_s8_get_buffer_size,
    (const void *)arm_convolve_s8, (const void *)arm_convolve_s8_get_buffer_size,
    (const void *)arm_convolve_1x1_s8_fast, (const void *)arm_convolve_1x1_s8_fast_get_buffer_size,
    (const void *)arm_convolve_1x1_s8, (const void *)arm_convolve_1_x_n_s8,
    (const void *)arm_convolve_1_x_n_s8_get_buffer_size,
    (const void *)arm_depthwise_conv_wrapper_s8, (const void *)arm_depthwise_conv_wrapper_s8_get_buffer_size,
    (const void *)arm_depthwise_conv_s8, (const void *)arm_depthwise_conv_s8_opt,
    (const void *)arm_depthwise_conv_s8_opt_get_buffer_size, (const void *)arm_depthwise_conv_3x3_s8,
    (const void *)arm_fully_connected_s8, (const void *)arm_fully_connected_per_channel_s8,
    (const void *)arm_fully_connected_s8_get_buffer_size,
    (const void *)arm_elementwise_add_s8, (const void *)arm_elementwise_mul_s8,
    (const void *)arm_avgpool_s8, (const void *)arm_avgpool_s8_get_buffer_size, (const void *)arm_max_pool_s8,
    (const void *)arm_softmax_s8, (const void *)arm_softmax_s8_s16, (const void *)arm_reshape_s8,
    (const void *)mrt_strided_copy, (const void *)mrt_fill, (const void *)mrt_copy, (const void *)mrt_binary_s8,
    (const void *)mrt_unary_s8, (const void *)mrt_quantize_f32_s8, (const void *)mrt_dequantize_s8_f32,
    (const void *)mrt_mean_s8, (const void *)mrt_gemm_s8, (const void *)mrt_return_trap,
    (const void *)mrt_conv_f32, (const void *)mrt_depthwise_conv_f32, (const void *)mrt_fully_connected_f32,
    (const void *)mrt_avgpool_f32, (const void *)mrt_maxpool_f32, (const void *)mrt_binary_f32,
    (const void *)mrt_unary_f32, (const void *)mrt_softmax_f32, (const void *)mrt_mean_f32,
    (const void *)mrt_quantize_f32_s16, (const void *)mrt_dequantize_s16_f32,
    (const void *)mrt_conv_s16, (const void *)mrt_binary_s16, (const void *)mrt_unary_int,
};
