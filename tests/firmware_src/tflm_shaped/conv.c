/* A "CONV_2D" kernel: its invoke function is local to this file under the name every kernel
 * file uses, and calls a library function with CMSIS-NN's name. */
#include "tflm_shaped.h"

static int Eval(void *context, Node *node) __asm__(KERNEL_EVAL_NAME);

static int Eval(void *context, Node *node) {
    (void)context;
    for (int32_t k = 0; k < 3; k++) arm_convolve_wrapper_s8(node->data, node->n);
    return 0;
}

static const Registration registration = {Eval, "CONV_2D"};
const Registration *register_conv(void) { return &registration; }
