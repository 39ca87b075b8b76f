/* printf over semihosting (rdimon.specs), then exit with code 5. */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    printf("hello from the virtual MCU %d\n", 42);
    return 5;
}
