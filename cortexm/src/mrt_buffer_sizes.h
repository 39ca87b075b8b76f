/* micro_rt: the scratch bytes of the CMSIS-NN-style kernels, their *_get_buffer_size
 * (declared in arm_nnfunctions.h), as TFLM's CMSIS-NN glue asks them in Prepare. Written once
 * for two readers:
 *  - the firmware: each kernel's file defines its section's macro and includes this header
 *    where its size functions stood, so the kernels' translation units, and so their code, are
 *    what they were when the cycle figures were measured;
 *  - the host: micro_rt/native/scratch_sizes.c defines every section and builds this code
 *    into a small shared library, once with MRT_DSP 1 and once with MRT_DSP 0 (a core with or
 *    without the DSP extension, whose CMSIS-NN paths need other buffers), which
 *    micro_rt/scratch_sizes.py calls for the `--kernels cmsis-nn` arena and the virtual MCU's
 *    kernel buffers. So there is no Python twin of these sizes.
 * Each section needs arm_nnfunctions.h and mrt_math.h's MRT_DSP and MRT_MAX before it. The
 * static helpers in a section (the wrappers' choice of kernel) are the kernels' own too.
 */

/* ================================================================ mrt_conv_s8.c */
#ifdef MRT_SIZES_CONV_S8

int32_t arm_convolve_s8_get_buffer_size(const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims)
{
    /* Same value as CMSIS-NN (non-MVE): two q15 columns of the 4-aligned kernel volume. */
    const int32_t rhs_cols = filter_dims->w * filter_dims->h * filter_dims->c;
    const int32_t rem = rhs_cols % 4;
    const int32_t aligned = rem != 0 ? rhs_cols + 4 - rem : rhs_cols;
    (void)input_dims;
    return 2 * aligned * (int32_t)sizeof(int16_t);
}

int32_t arm_convolve_1x1_s8_fast_get_buffer_size(const cmsis_nn_dims *input_dims)
{
    (void)input_dims;
    return 0;
}

int32_t arm_convolve_1_x_n_s8_get_buffer_size(const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims)
{
    (void)conv_params;
    (void)output_dims;
    return arm_convolve_s8_get_buffer_size(input_dims, filter_dims);
}

static int is_1x1(const cmsis_nn_conv_params *p, const cmsis_nn_dims *in, const cmsis_nn_dims *f)
{
    return p->padding.w == 0 && p->padding.h == 0 && f->w == 1 && f->h == 1 &&
           p->dilation.w == 1 && p->dilation.h == 1 && in->c == f->c;
}

static int is_1x1_fast(const cmsis_nn_conv_params *p)
{
    return p->stride.w == 1 && p->stride.h == 1;
}

static int is_1_x_n(const cmsis_nn_conv_params *p, const cmsis_nn_dims *in, const cmsis_nn_dims *f,
                    const cmsis_nn_dims *out)
{
    return in->n == 1 && in->h == 1 && f->h == 1 && (out->w % 4) == 0 && p->dilation.w == 1 &&
           p->dilation.h == 1 && in->c == f->c;
}

int32_t arm_convolve_wrapper_s8_get_buffer_size(const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims)
{
    if (is_1x1(conv_params, input_dims, filter_dims)) {
        return is_1x1_fast(conv_params) ? arm_convolve_1x1_s8_fast_get_buffer_size(input_dims) : 0;
    }
    if (is_1_x_n(conv_params, input_dims, filter_dims, output_dims)) {
        return arm_convolve_1_x_n_s8_get_buffer_size(conv_params, input_dims, filter_dims, output_dims);
    }
    return arm_convolve_s8_get_buffer_size(input_dims, filter_dims);
}

#endif

/* ================================================================ mrt_depthwise_conv_s8.c */
#ifdef MRT_SIZES_DEPTHWISE_CONV_S8

int32_t arm_depthwise_conv_s8_opt_get_buffer_size(const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims)
{
#if MRT_DSP
    return input_dims->c * filter_dims->w * filter_dims->h * (int32_t)sizeof(int16_t);
#else
    (void)input_dims;
    (void)filter_dims;
    return 0;
#endif
}

static int dw_is_3x3(const cmsis_nn_dw_conv_params *p, const cmsis_nn_dims *f)
{
    return f->w == 3 && f->h == 3 && p->padding.h <= 1 && p->padding.w <= 1;
}

int32_t arm_depthwise_conv_wrapper_s8_get_buffer_size(const cmsis_nn_dw_conv_params *dw_conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims)
{
    if (input_dims->c == output_dims->c && input_dims->n == 1 && dw_conv_params->dilation.w == 1 &&
        dw_conv_params->dilation.h == 1) {
        if (dw_is_3x3(dw_conv_params, filter_dims)) {
            return 0;
        }
        return arm_depthwise_conv_s8_opt_get_buffer_size(input_dims, filter_dims);
    }
    return 0;
}

#endif

/* ================================================================ mrt_pooling.c */
#ifdef MRT_SIZES_AVGPOOL_S8

int32_t arm_avgpool_s8_get_buffer_size(const int dim_dst_width, const int ch_src)
{
    (void)dim_dst_width;
#if MRT_DSP
    return ch_src * (int32_t)sizeof(int32_t);
#else
    (void)ch_src;
    return 0;
#endif
}

#endif

/* ================================================================ mrt_pooling_s16.c */
#ifdef MRT_SIZES_AVGPOOL_S16

int32_t arm_avgpool_s16_get_buffer_size(const int output_x, const int ch_src)
{
    (void)output_x;
#if MRT_DSP
    return ch_src * (int32_t)sizeof(int32_t);
#else
    (void)ch_src;
    return 0;
#endif
}

#endif

/* ================================================================ mrt_conv_s16_dsp.c */
#ifdef MRT_SIZES_CONV_S16

int32_t arm_convolve_s16_get_buffer_size(const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims)
{
    return 2 * input_dims->c * filter_dims->w * filter_dims->h * (int32_t)sizeof(int16_t);
}

int32_t arm_convolve_wrapper_s16_get_buffer_size(const cmsis_nn_conv_params *conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *output_dims)
{
    return arm_convolve_s16_get_buffer_size(input_dims, filter_dims);
}

#endif

/* ================================================================ mrt_transpose_conv.c */
#ifdef MRT_SIZES_TRANSPOSE_CONV_S8

#define REVERSE_TCOL_EFFICIENT_THRESHOLD 16

static int32_t reverse_conv_used(const cmsis_nn_transpose_conv_params *p, const cmsis_nn_dims *input_dims)
{
    return p->stride.w <= 2 && p->stride.h <= 2 && input_dims->c > REVERSE_TCOL_EFFICIENT_THRESHOLD;
}

static int32_t aligned4(int32_t n)
{
    return (n + 3) & ~3;
}

int32_t arm_transpose_conv_s8_get_buffer_size(const cmsis_nn_transpose_conv_params *transpose_conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims, const cmsis_nn_dims *out_dims)
{
    if (reverse_conv_used(transpose_conv_params, input_dims)) {
        /* arm_convolve_s8_get_buffer_size of the upscaled input: two q15 columns. */
        return 2 * aligned4(filter_dims->w * filter_dims->h * input_dims->c) * (int32_t)sizeof(int16_t);
    }
    /* CMSIS-NN's row buffer; its width takes max(KW, stride_h), as CMSIS-NN writes it. */
    const int32_t buf_x = ((input_dims->w - 1) * transpose_conv_params->stride.w +
                           MRT_MAX(filter_dims->w, transpose_conv_params->stride.h)) * out_dims->c;
    const int32_t buf_y = MRT_MAX(filter_dims->h, transpose_conv_params->stride.h);
    return buf_x * buf_y * (int32_t)sizeof(int32_t);
}

int32_t arm_transpose_conv_s8_get_reverse_conv_buffer_size(const cmsis_nn_transpose_conv_params *transpose_conv_params,
    const cmsis_nn_dims *input_dims, const cmsis_nn_dims *filter_dims)
{
    if (reverse_conv_used(transpose_conv_params, input_dims)) {
        return input_dims->c * filter_dims->w * filter_dims->h * filter_dims->n;
    }
    return 0;
}

#endif
