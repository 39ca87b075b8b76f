/* The interpreter loop and the profiler of tflm_shaped.h. */
#include "tflm_shaped.h"

int invoke_subgraph(Graph *graph, int subgraph) {
    (void)subgraph;
    int status = 0;
    for (int i = 0; i < graph->n; i++) {
        uint32_t handle = 0;
        if (graph->profiler)
            handle = graph->profiler->methods->begin_event(graph->profiler, graph->registrations[i]->name);
        status |= graph->registrations[i]->invoke(0, &graph->nodes[i]);
        if (graph->profiler)
            graph->profiler->methods->end_event(graph->profiler, handle);
    }
    return status;
}

int invoke(Graph *graph) { return invoke_subgraph(graph, 0); }

uint32_t arena_used_bytes(const Graph *graph) { return graph->arena_used; }

static uint32_t begin_event(Profiler *self, const char *tag)
    __asm__("_ZN6tflite13MicroProfiler10BeginEventEPKc");
static void end_event(Profiler *self, uint32_t handle) __asm__("_ZN6tflite13MicroProfiler8EndEventEj");

static uint32_t begin_event(Profiler *self, const char *tag) {
    int e = self->events++;
    self->tags[e] = tag;
    self->start[e] = DWT_CYCCNT;
    return (uint32_t)e;
}

static void end_event(Profiler *self, uint32_t handle) {
    self->ticks[handle] = DWT_CYCCNT - self->start[handle];
}

static const ProfilerMethods methods = {begin_event, end_event};

void profiler_init(Profiler *p) {
    p->methods = &methods;
    p->events = 0;
}
