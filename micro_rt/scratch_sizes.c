/* micro_rt: the host build of the CMSIS-NN-style kernels' *_get_buffer_size
 * (cortexm/src/mrt_buffer_sizes.h, the code the firmware runs), for micro_rt/cmsis_nn_scratch.py.
 *
 * Built twice as a plain shared library (setup.py, or cmsis_nn_scratch.py at first use): with
 * MRT_DSP=1 for a core with the DSP extension and MRT_DSP=0 for one without. The functions below
 * take a convolution's shape as flat integers, in the field order of kernels/conv_shapes.py's
 * ConvShape, and fill CMSIS-NN's structs by field name, as TFLM's CMSIS-NN glue does in Prepare,
 * so no struct layout is written twice. */
#include "arm_nnfunctions.h"

#ifndef MRT_DSP
#error "build with -DMRT_DSP=1 (a core with the DSP extension) or -DMRT_DSP=0"
#endif
#define MRT_MAX(a, b) ((a) > (b) ? (a) : (b))

#define MRT_SIZES_CONV_S8
#define MRT_SIZES_DEPTHWISE_CONV_S8
#define MRT_SIZES_AVGPOOL_S8
#define MRT_SIZES_AVGPOOL_S16
#define MRT_SIZES_CONV_S16
#define MRT_SIZES_TRANSPOSE_CONV_S8
#include "mrt_buffer_sizes.h"

/* ConvShape's fields, in its order. */
#define MRT_SHAPE_ARGS int32_t n, int32_t ih, int32_t iw, int32_t ic, int32_t oh, int32_t ow, int32_t oc, \
    int32_t fh, int32_t fw, int32_t fc, int32_t sh, int32_t sw, int32_t dh, int32_t dw, int32_t ph, int32_t pw

const char *mrt_scratch_source(void)
{
#ifdef MRT_SCRATCH_SOURCE
    return MRT_SCRATCH_SOURCE;
#else
    return "";
#endif
}

/* CONV_2D's arguments as TFLM's CMSIS-NN glue fills them (int8 and 16x8 alike). */
typedef struct {
    cmsis_nn_conv_params params;
    cmsis_nn_dims input, filter, output;
} conv_args;

static conv_args conv_arguments(MRT_SHAPE_ARGS)
{
    const conv_args a = {.params = {.stride = {.w = sw, .h = sh}, .padding = {.w = pw, .h = ph},
                                    .dilation = {.w = dw, .h = dh}},
                         .input = {.n = n, .h = ih, .w = iw, .c = ic}, .filter = {.n = oc, .h = fh, .w = fw, .c = fc},
                         .output = {.n = n, .h = oh, .w = ow, .c = oc}};
    return a;
}

#define MRT_SHAPE_VALUES n, ih, iw, ic, oh, ow, oc, fh, fw, fc, sh, sw, dh, dw, ph, pw

int32_t mrt_scratch_conv_s8(MRT_SHAPE_ARGS)
{
    const conv_args a = conv_arguments(MRT_SHAPE_VALUES);
    return arm_convolve_wrapper_s8_get_buffer_size(&a.params, &a.input, &a.filter, &a.output);
}

int32_t mrt_scratch_depthwise_conv_s8(MRT_SHAPE_ARGS)
{
    const cmsis_nn_dw_conv_params p = {.ch_mult = ic ? oc / ic : 0, .stride = {.w = sw, .h = sh},
                                       .padding = {.w = pw, .h = ph}, .dilation = {.w = dw, .h = dh}};
    const cmsis_nn_dims in = {.n = n, .h = ih, .w = iw, .c = ic}, f = {.n = 1, .h = fh, .w = fw, .c = oc},
                        out = {.n = n, .h = oh, .w = ow, .c = oc};
    return arm_depthwise_conv_wrapper_s8_get_buffer_size(&p, &in, &f, &out);
}

int32_t mrt_scratch_conv_s16(MRT_SHAPE_ARGS)
{
    const conv_args a = conv_arguments(MRT_SHAPE_VALUES);
    return arm_convolve_wrapper_s16_get_buffer_size(&a.params, &a.input, &a.filter, &a.output);
}

/* reverse: 0 for arm_transpose_conv_s8_get_buffer_size, 1 for its reverse-conv buffer. */
int32_t mrt_scratch_transpose_conv_s8(MRT_SHAPE_ARGS, int32_t reverse)
{
    const cmsis_nn_transpose_conv_params p = {.stride = {.w = sw, .h = sh}, .padding = {.w = pw, .h = ph},
                                              .dilation = {.w = dw, .h = dh}};
    const cmsis_nn_dims in = {.n = n, .h = ih, .w = iw, .c = ic}, f = {.n = oc, .h = fh, .w = fw, .c = fc},
                        out = {.n = n, .h = oh, .w = ow, .c = oc};
    return reverse ? arm_transpose_conv_s8_get_reverse_conv_buffer_size(&p, &in, &f)
                   : arm_transpose_conv_s8_get_buffer_size(&p, &in, &f, &out);
}

int32_t mrt_scratch_avgpool_s8(int32_t output_w, int32_t channels)
{
    return arm_avgpool_s8_get_buffer_size(output_w, channels);
}

int32_t mrt_scratch_avgpool_s16(int32_t output_w, int32_t channels)
{
    return arm_avgpool_s16_get_buffer_size(output_w, channels);
}
