"""Host reference kernels in numpy, bit-exact with TFLM's reference kernels.

One module per operator family registers its kernels (BUILTINS, listed in
micro_rt/resolver.py KERNEL_MODULES): conv, depthwise_conv, fully_connected, pooling,
softmax, reduce, elementwise, activations, quantize, shape_ops, svdf, lstm (with
lstm_common, lstm_float, lstm_int8). What they share has one home each:

- kernel_util: errors naming op and tensor, tensor accessors, type names, activation ranges,
  input checks (TFLM's kernel_util);
- quant: QuantizeMultiplier and the other quantization utilities (quantization_util);
- fixedpoint: integer arithmetic as the C code does it (gemmlowp, common.h);
- requant: the fast in-place requantization stages;
- exact_matmul: float32 matmuls in TFLM's order, exact integer matmuls in float;
- lookup_tables: int8 / int16 tables of one-input ops and their invoke;
- libm: the C library's expf / tanhf;
- padding: padding and window geometry (padding.h);
- conv_common: what CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED share.
"""
