"""Host reference kernels in numpy, bit-exact with TFLM's reference kernels."""
