/* A "FULLY_CONNECTED" kernel, the same shape as conv.c. */
#include "tflm_shaped.h"

static int Eval(void *context, Node *node) __asm__(KERNEL_EVAL_NAME);

static int Eval(void *context, Node *node) {
    (void)context;
    volatile int32_t scratch[100];     /* 400 B of stack: what invoke_stack_bytes must see */
    for (int32_t i = 0; i < 100; i++) scratch[i] = node->data[i % node->n];
    arm_fully_connected_s8(node->data, node->n);
    return scratch[7] == node->data[7] ? 0 : 1;
}

static const Registration registration = {Eval, "FULLY_CONNECTED"};
const Registration *register_fully_connected(void) { return &registration; }
