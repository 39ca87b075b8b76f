/* A program with the shape of a TFLM application, in micro_rt's own C (no TFLM code): the
 * symbols `micro-rt emulate` recognises a TFLM application by (the interpreter's
 * InvokeSubgraph, MicroProfiler's BeginEvent/EndEvent, MicroInterpreter::arena_used_bytes,
 * each kernel's invoke function local to its file under one shared name) and the calls TFLM
 * makes between them (indirect calls from InvokeSubgraph to each node's invoke function and to
 * the profiler's virtual methods). tests/test_emulate_tflm.py runs it. */
#ifndef TFLM_SHAPED_H
#define TFLM_SHAPED_H
#include <stdint.h>

#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)

/* TFLM's mangled names, so the program's symbols read as a TFLM build's do */
#define KERNEL_EVAL_NAME "_ZN6tflite12_GLOBAL__N_14EvalEP13TfLiteContextP10TfLiteNode"

typedef struct { int32_t *data; int32_t n; } Node;
typedef struct { int (*invoke)(void *context, Node *node); const char *name; } Registration;

typedef struct Profiler Profiler;
typedef struct {
    uint32_t (*begin_event)(Profiler *self, const char *tag);
    void (*end_event)(Profiler *self, uint32_t handle);
} ProfilerMethods;
struct Profiler {
    const ProfilerMethods *methods;
    int events;
    const char *tags[8];
    uint32_t start[8], ticks[8];
};

typedef struct {
    const Registration *registrations[8];
    Node nodes[8];
    int n;
    Profiler *profiler;
    uint32_t arena_used;
} Graph;

const Registration *register_conv(void);
const Registration *register_fully_connected(void);
void profiler_init(Profiler *p);
int invoke(Graph *graph) __asm__("_ZN6tflite16MicroInterpreter6InvokeEv");
int invoke_subgraph(Graph *graph, int subgraph) __asm__("_ZN6tflite21MicroInterpreterGraph14InvokeSubgraphEi");
/* TFLM's MicroInterpreter::arena_used_bytes() is inline: what it returns is the allocator's */
uint32_t arena_used_bytes(const Graph *graph) __asm__("_ZNK6tflite14MicroAllocator10used_bytesEv");
void arm_convolve_wrapper_s8(int32_t *data, int32_t n);
void arm_fully_connected_s8(int32_t *data, int32_t n);
#endif
