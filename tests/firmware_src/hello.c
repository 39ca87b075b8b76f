/* printf over semihosting (rdimon.specs), then exit with a code the test checks. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    printf("hello from the virtual MCU %d\n", 42);
    return 3;
}
