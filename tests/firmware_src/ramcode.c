/* Code running from RAM with the vectors relocated by VTOR: the start-up leaves .ramcode where
 * the loader put it (RAM), the vector table is copied to RAM and VTOR pointed at it; an SVC then
 * goes through the RAM table to a handler that is itself in RAM. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define VTOR (*(volatile uint32_t *)0xE000ED08u)
extern void (*const vector_table[16])(void);
static void (*ram_vectors[16])(void) __attribute__((aligned(128)));
volatile uint32_t svc_seen;

__attribute__((section(".ramcode"), noinline)) void ram_svc_handler(void) { svc_seen = 0x5C; }

__attribute__((section(".ramcode"), noinline)) uint32_t ram_sum(uint32_t n) {
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; i++) s += i;
    return s;
}

int main(void) {
    memcpy(ram_vectors, vector_table, sizeof ram_vectors);
    ram_vectors[11] = ram_svc_handler;
    VTOR = (uint32_t)ram_vectors;
    __asm__ volatile("svc #0");
    printf("sum %lu svc %lx vtor %lx\n", (unsigned long)ram_sum(100), (unsigned long)svc_seen,
           (unsigned long)VTOR);
    return 0;
}
