/* Two library functions under CMSIS-NN's names (micro_rt's own loops). */
#include "tflm_shaped.h"

__attribute__((noinline)) void arm_convolve_wrapper_s8(int32_t *data, int32_t n) {
    for (int32_t i = 1; i < n; i++) data[i] += data[i - 1] * 3 + (data[i] >> 2);
}

__attribute__((noinline)) void arm_fully_connected_s8(int32_t *data, int32_t n) {
    int32_t acc = 0;
    for (int32_t i = 0; i < n; i++) acc += data[i] * (i + 1);
    data[0] = acc;
}
