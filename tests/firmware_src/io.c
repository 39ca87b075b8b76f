/* --input and --output: `weights` (.data, an initial image) and `samples` (.bss, written when
 * main is entered) are summed into `result`, which the test reads at the end. */
#include <stdint.h>

int16_t weights[8] = {1, 1, 1, 1, 1, 1, 1, 1};
int16_t samples[8];
int32_t result[2];

int main(void) {
    int32_t dot = 0, sum = 0;
    for (int i = 0; i < 8; i++) { dot += weights[i] * samples[i]; sum += samples[i]; }
    result[0] = dot;
    result[1] = sum;
    return 0;
}
