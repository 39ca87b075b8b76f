/* micro_rt firmware: the C library routines the kernels need (newlib's libm supplies only
 * expf / tanhf for the float kernels; its error paths call __errno, defined here). Built with
 * -fno-tree-loop-distribute-patterns so GCC does not turn the loops back into calls. */
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *dst, const void *src, size_t n)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    while (n--) {
        *d++ = *s++;
    }
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    if (d < s) {
        while (n--) {
            *d++ = *s++;
        }
    } else {
        d += n;
        s += n;
        while (n--) {
            *--d = *--s;
        }
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    uint8_t *d = (uint8_t *)dst;
    while (n--) {
        *d++ = (uint8_t)c;
    }
    return dst;
}

/* newlib's libm reports overflow / underflow through errno: one word of .bss. */
static int mrt_errno;

int *__errno(void);
int *__errno(void)
{
    return &mrt_errno;
}
