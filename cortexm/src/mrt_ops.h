/* micro_rt: kernels for the operators CMSIS-NN does not cover, and the float32 (mrt_float.c)
 * and int16 (mrt_int16.c) kernels. Every parameter block is a
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

/* Broadcasting binary ops (ADD SUB MUL MAXIMUM MINIMUM) walk a 6-D index space. */
enum { MRT_OP_ADD = 0, MRT_OP_SUB = 1, MRT_OP_MUL = 2, MRT_OP_MAX = 3, MRT_OP_MIN = 4 };
typedef struct {
    int32_t count[MRT_MAX_DIMS];            /* output elements per axis, outermost first */
    int32_t stride1[MRT_MAX_DIMS];          /* in1 element stride per axis, 0 = broadcast */
    int32_t stride2[MRT_MAX_DIMS];          /* in2 element stride per axis, 0 = broadcast */
} mrt_broadcast_dims;
/* TFLM's requantization of a quantized (int8 / int16) binary op. */
typedef struct {
    int32_t left_shift;
    int32_t in1_offset, in1_mult, in1_shift;
    int32_t in2_offset, in2_mult, in2_shift;
    int32_t out_offset, out_mult, out_shift;
    int32_t act_min, act_max;
} mrt_binary_quant;

typedef struct {
    const int8_t *in1;
    const int8_t *in2;
    int8_t *out;
    int32_t op;                             /* MRT_OP_* */
    mrt_broadcast_dims dims;
    mrt_binary_quant quant;
} mrt_binary_s8_params;
int32_t mrt_binary_s8(const mrt_binary_s8_params *p);

/* Element-wise unary int8 ops. */
enum {
    MRT_UNARY_REQUANT = 0,   /* QUANTIZE int8->int8, RELU: clamp(out_off + MBQM(x - in_off, m0, s0)) */
    MRT_UNARY_RELU6 = 1,     /* clamp(x, a0, a1) with a0 = zero, a1 = six (raw compare) */
    MRT_UNARY_LEAKY = 2,     /* v>=0 ? MBQM(v, m0, s0) : MBQM(v, m1, s1), + out_off, clamp */
    MRT_UNARY_LOGISTIC = 3,  /* gemmlowp logistic, m0/s0 input multiplier, a0 = radius */
    MRT_UNARY_TANH = 4,      /* gemmlowp tanh */
    MRT_UNARY_HARD_SWISH = 5,/* int16 fixed point: m0/s0 output, m1/s1 reluish (int16 mults) */
};
/* The requantization of an integer unary op (meaning per op above). */
typedef struct {
    int32_t in_off, out_off;
    int32_t m0, s0, m1, s1;
    int32_t a0, a1;          /* op-specific (clamp bounds, radius) */
} mrt_unary_quant;
typedef struct {
    const int8_t *in;
    int8_t *out;
    int32_t n;
    int32_t op;
    mrt_unary_quant quant;
} mrt_unary_s8_params;
int32_t mrt_unary_s8(const mrt_unary_s8_params *p);

/* QUANTIZE float32 -> int8 / DEQUANTIZE int8 -> float32 (soft-float calling convention). */
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
} mrt_mean_s8_params;
int32_t mrt_mean_s8(const mrt_mean_s8_params *p);

/* ---- float32 (soft-float calling convention; mrt_float.c). Float parameters travel as IEEE bit patterns. ---- */
/* Convolution geometry, shared by the float32 and int16 conv parameter blocks. */
typedef struct {
    int32_t n, ih, iw, ic;
    int32_t oh, ow, oc;
    int32_t fh, fw, fc;      /* filter depth (ic / groups); float depthwise: depth multiplier */
    int32_t sh, sw, dh, dw, ph, pw;
} mrt_conv_geometry;
typedef struct {
    const float *in;
    const float *filter;     /* conv: (oc, fh, fw, fc); depthwise: (1, fh, fw, oc) */
    const float *bias;       /* NULL: none */
    float *out;
    mrt_conv_geometry geom;
    uint32_t act_min, act_max;
} mrt_conv_f32_params;
int32_t mrt_conv_f32(const mrt_conv_f32_params *p);
int32_t mrt_depthwise_conv_f32(const mrt_conv_f32_params *p);

typedef struct {
    const float *in;
    const float *w;          /* (out_depth, accum) */
    const float *bias;       /* NULL: none */
    float *out;
    int32_t batches, accum, out_depth;
    uint32_t act_min, act_max;
} mrt_fc_f32_params;
int32_t mrt_fully_connected_f32(const mrt_fc_f32_params *p);

typedef struct {
    const float *in;
    float *out;
    int32_t n, ih, iw, c, oh, ow, fh, fw, sh, sw, ph, pw;
    uint32_t act_min, act_max;
} mrt_pool_f32_params;
int32_t mrt_avgpool_f32(const mrt_pool_f32_params *p);
int32_t mrt_maxpool_f32(const mrt_pool_f32_params *p);

typedef struct {
    const float *in1;
    const float *in2;
    float *out;
    int32_t op;              /* MRT_OP_* */
    mrt_broadcast_dims dims;
    uint32_t act_min, act_max;
} mrt_binary_f32_params;
int32_t mrt_binary_f32(const mrt_binary_f32_params *p);

enum {
    MRT_UNARY_F32_RELU = 0, MRT_UNARY_F32_RELU6 = 1, MRT_UNARY_F32_LEAKY = 2,
    MRT_UNARY_F32_LOGISTIC = 3, MRT_UNARY_F32_TANH = 4, MRT_UNARY_F32_HARD_SWISH = 5,
};
typedef struct {
    const float *in;
    float *out;
    int32_t n;
    int32_t op;
    uint32_t alpha;          /* LEAKY_RELU */
} mrt_unary_f32_params;
int32_t mrt_unary_f32(const mrt_unary_f32_params *p);

int32_t mrt_softmax_f32(const float *in, float *out, int32_t rows, int32_t depth, uint32_t beta_bits);

typedef struct {
    const float *in;
    float *out;
    int32_t shape[4];
    int32_t reduce[4];
} mrt_mean_f32_params;
int32_t mrt_mean_f32(const mrt_mean_f32_params *p);

/* QUANTIZE float32 -> int16 / DEQUANTIZE int16 -> float32. */
int32_t mrt_quantize_f32_s16(const float *in, int16_t *out, int32_t n, uint32_t scale_bits, int32_t zero_point);
int32_t mrt_dequantize_s16_f32(const int16_t *in, float *out, int32_t n, uint32_t scale_bits, int32_t zero_point);

/* ---- int16 activations (mrt_int16.c) ---- */
typedef struct {
    const int16_t *in;
    const int8_t *filter;    /* conv / FC: (oc, fh, fw, fc); depthwise: (1, fh, fw, oc) */
    const void *bias;        /* int32 or int64 per channel, see bias_size; NULL: none */
    int16_t *out;
    const int32_t *mult;     /* per channel, or [0] for all when !per_channel */
    const int32_t *shift;
    mrt_conv_geometry geom;
    int32_t depth_multiplier; /* > 0: depthwise */
    int32_t in_off, filter_off, out_off;
    int32_t act_min, act_max;
    int32_t bias_size;       /* 0, 4 or 8 bytes */
    int32_t per_channel;
} mrt_conv_s16_params;
int32_t mrt_conv_s16(const mrt_conv_s16_params *p);

typedef struct {
    const int16_t *in1;
    const int16_t *in2;
    int16_t *out;
    int32_t op;              /* MRT_OP_* */
    mrt_broadcast_dims dims;
    mrt_binary_quant quant;
} mrt_binary_s16_params;
int32_t mrt_binary_s16(const mrt_binary_s16_params *p);

/* Element-wise integer ops between int8 / int16 / int32 (element sizes 1, 2, 4): op is
 * MRT_UNARY_REQUANT (QUANTIZE, RELU), MRT_UNARY_RELU6 or MRT_UNARY_LEAKY; result clamped
 * to [lo, hi]. */
typedef struct {
    const void *in;
    void *out;
    int32_t n;
    int32_t op;
    int32_t in_size, out_size;
    mrt_unary_quant quant;
    int32_t lo, hi;
} mrt_unary_int_params;
int32_t mrt_unary_int(const mrt_unary_int_params *p);

#endif
