/* A three-operator "model" run once, with the profiler unless built with -DNO_PROFILER; the
 * profiler's ticks per operator and the arena size printed as a TFLM application prints them. */
#include <stdio.h>
#include "tflm_shaped.h"

#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)

static int32_t buffers[3][64];
static Graph graph;
static Profiler profiler;

int main(void) {
    DEMCR |= 1u << 24;
    DWT_CTRL |= 1u;
    const Registration *kinds[3] = {register_conv(), register_fully_connected(), register_conv()};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 64; j++) buffers[i][j] = i * 64 + j;
        graph.registrations[i] = kinds[i];
        graph.nodes[i].data = buffers[i];
        graph.nodes[i].n = 16 + 24 * i;
    }
    graph.n = 3;
    graph.arena_used = 772;
#ifndef NO_PROFILER
    profiler_init(&profiler);
    graph.profiler = &profiler;
#endif
    int status = invoke(&graph);
    printf("arena_used_bytes %lu\n", (unsigned long)arena_used_bytes(&graph));
    for (int e = 0; e < profiler.events; e++)
        printf("%s took %lu ticks\n", profiler.tags[e], (unsigned long)profiler.ticks[e]);
    return status;
}
