/* malloc, realloc and free: 10 blocks of 100 B, one grown to 400 B, all freed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *p[10];
    for (int i = 0; i < 10; i++) { p[i] = malloc(100); memset(p[i], i, 100); }
    p[3] = realloc(p[3], 400);
    for (int i = 0; i < 10; i++) free(p[i]);
    puts("heap done");
    return 0;
}
