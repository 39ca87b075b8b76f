/* A "FULLY_CONNECTED" kernel, the same shape as conv.c. */
#include "tflm_shaped.h"

static int Eval(void *context, Node *node) __asm__(KERNEL_EVAL_NAME);

static int Eval(void *context, Node *node) {
    (void)context;
    arm_fully_connected_s8(node->data, node->n);
    return 0;
}

static const Registration registration = {Eval, "FULLY_CONNECTED"};
const Registration *register_fully_connected(void) { return &registration; }
