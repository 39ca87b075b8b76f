/* An unaligned LDRD (it faults on silicon: LDRD needs word alignment on every Armv7-M core) and
 * an unaligned LDR (allowed: the report names only the first). */
#include <stdint.h>
#include <stdio.h>

uint8_t buffer[16] __attribute__((aligned(8))) = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

__attribute__((noinline)) uint32_t load_pair(const uint8_t *p) {
    uint32_t lo, hi;
    __asm__ volatile("ldrd %0, %1, [%2]" : "=r"(lo), "=r"(hi) : "r"(p));
    return lo ^ hi;
}

int main(void) {
    printf("%lx\n", (unsigned long)load_pair(buffer + 2));
    return 0;
}
