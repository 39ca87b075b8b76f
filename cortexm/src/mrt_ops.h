/* micro_rt: kernels for the operators CMSIS-NN does not cover. Every parameter block is a
 * struct of 32-bit words (pointers, int32, float bit patterns) so the Python glue packs it
 * with struct.pack("<...I"). */
#ifndef MRT_OPS_H
#define MRT_OPS_H
#include <stdint.h>

#define MRT_MAX_DIMS 6

/* Generic strided copy: dst[i0..i5] = src[i0..i5] with byte strides (transpose, slice,
 * concatenation / pack parts, pad interior, reshape). */
typedef struct {
    const uint8_t *src;
    uint8_t *dst;
    int32_t elem_size;                 /* 1, 2, 4 or 8 */
    int32_t count[MRT_MAX_DIMS];       /* outermost first */
    int32_t src_stride[MRT_MAX_DIMS];  /* bytes */
    int32_t dst_stride[MRT_MAX_DIMS];  /* bytes */
} mrt_copy_params;
int32_t mrt_strided_copy(const mrt_copy_params *p);
int32_t mrt_fill(uint8_t *dst, uint32_t value, int32_t count, int32_t elem_size);
int32_t mrt_copy(const uint8_t *src, uint8_t *dst, int32_t nbytes);

/* Broadcasting binary int8 op over 6-D index space (strides in elements, 0 = broadcast). */
enum { MRT_OP_ADD = 0, MRT_OP_SUB = 1, MRT_OP_MUL = 2, MRT_OP_MAX = 3, MRT_OP_MIN = 4 };
typedef struct {
    const int8_t *in1;
    const int8_t *in2;
    int8_t *out;
    int32_t op;
    int32_t count[MRT_MAX_DIMS];
    int32_t stride1[MRT_MAX_DIMS];
    int32_t stride2[MRT_MAX_DIMS];
    int32_t left_shift;
    int32_t in1_offset, in1_mult, in1_shift;
    int32_t in2_offset, in2_mult, in2_shift;
    int32_t out_offset, out_mult, out_shift;
    int32_t act_min, act_max;
} mrt_binary_params;
int32_t mrt_binary_s8(const mrt_binary_params *p);

/* Element-wise unary int8 ops. */
enum {
    MRT_UNARY_REQUANT = 0,   /* QUANTIZE int8->int8, RELU: clamp(out_off + MBQM(x - in_off, m0, s0)) */
    MRT_UNARY_RELU6 = 1,     /* clamp(x, a0, a1) with a0 = zero, a1 = six (raw compare) */
    MRT_UNARY_LEAKY = 2,     /* v>=0 ? MBQM(v, m0, s0) : MBQM(v, m1, s1), + out_off, clamp */
    MRT_UNARY_LOGISTIC = 3,  /* gemmlowp logistic, m0/s0 input multiplier, a0 = radius */
    MRT_UNARY_TANH = 4,      /* gemmlowp tanh */
    MRT_UNARY_HARD_SWISH = 5,/* int16 fixed point: m0/s0 output, m1/s1 reluish (int16 mults) */
};
typedef struct {
    const int8_t *in;
    int8_t *out;
    int32_t n;
    int32_t op;
    int32_t in_off, out_off;
    int32_t m0, s0, m1, s1;
    int32_t a0, a1;          /* op-specific (clamp bounds, radius) */
} mrt_unary_params;
int32_t mrt_unary_s8(const mrt_unary_params *p);

/* QUANTIZE float32 -> int8 / DEQUANTIZE int8 -> float32 (soft-float). */
int32_t mrt_quantize_f32_s8(const float *in, int8_t *out, int32_t n, uint32_t scale_bits, int32_t zero_point);
int32_t mrt_dequantize_s8_f32(const int8_t *in, float *out, int32_t n, uint32_t scale_bits, int32_t zero_point);

/* MEAN int8 over a 4-D input: reduce[d] != 0 marks reduced axes. */
typedef struct {
    const int8_t *in;
    int8_t *out;
    int32_t shape[4];
    int32_t reduce[4];
    int32_t in_zp, out_zp;
    int32_t mult, shift;
    int32_t act_min, act_max;
} mrt_mean_params;
int32_t mrt_mean_s8(const mrt_mean_params *p);

#endif
