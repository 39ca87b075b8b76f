/* A program that never ends: --max-cycles stops it. */
#include <stdint.h>
volatile uint32_t counter;
int main(void) {
    for (;;) counter++;
}
