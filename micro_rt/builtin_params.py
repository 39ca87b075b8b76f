"""Which builtin option struct TFLM's flatbuffer parser allocates for each operator.

While it loads a model TFLM parses every operator's builtin options into a C struct that
MicroBuiltinDataAllocator takes from the arena's tail (with the struct's alignof), whether
the kernel is a fast one, a reference one, or missing from micro_rt. Operators not listed
here (RELU, TANH, PAD, QUANTIZE, ...) get no struct.

Read from tensorflow/lite/core/api/flatbuffer_conversions.cc: the parser the micro op
resolver registers for each TFLM builtin, and for operators TFLM has no kernel for, the
struct TFLite's generic parser (ParseOpDataTfLite) makes. The structs' layouts are in
micro_rt/structs/tflm_structs.h and their sizes per target in micro_rt/targets.py.
"""
from __future__ import annotations

from typing import Optional

_POOL = "TfLitePoolParams"
_REDUCER = "TfLiteReducerParams"
_RANDOM = "TfLiteRandomParams"

BUILTIN_PARAMS: dict[str, str] = {
    # parsers of the operators TFLM has kernels for
    "ADD": "TfLiteAddParams", "SUB": "TfLiteSubParams", "MUL": "TfLiteMulParams",
    "DIV": "TfLiteDivParams", "CONV_2D": "TfLiteConvParams",
    "DEPTHWISE_CONV_2D": "TfLiteDepthwiseConvParams", "TRANSPOSE_CONV": "TfLiteTransposeConvParams",
    "FULLY_CONNECTED": "TfLiteFullyConnectedParams", "BATCH_MATMUL": "TfLiteBatchMatMulParams",
    "AVERAGE_POOL_2D": _POOL, "MAX_POOL_2D": _POOL, "L2_POOL_2D": _POOL,
    "SOFTMAX": "TfLiteSoftmaxParams", "LEAKY_RELU": "TfLiteLeakyReluParams",
    "L2_NORMALIZATION": "TfLiteL2NormParams",
    "RESHAPE": "TfLiteReshapeParams", "SQUEEZE": "TfLiteSqueezeParams",
    "CONCATENATION": "TfLiteConcatenationParams", "STRIDED_SLICE": "TfLiteStridedSliceParams",
    "PACK": "TfLitePackParams", "UNPACK": "TfLiteUnpackParams",
    "SPLIT": "TfLiteSplitParams", "SPLIT_V": "TfLiteSplitVParams",
    "GATHER": "TfLiteGatherParams", "SHAPE": "TfLiteShapeParams", "CAST": "TfLiteCastParams",
    "ARG_MAX": "TfLiteArgMaxParams", "ARG_MIN": "TfLiteArgMinParams",
    "MEAN": _REDUCER, "SUM": _REDUCER, "REDUCE_MAX": _REDUCER, "REDUCE_MIN": _REDUCER,
    "REDUCE_ALL": _REDUCER, "REDUCE_ANY": _REDUCER, "REDUCE_PROD": _REDUCER,
    "MIRROR_PAD": "TfLiteMirrorPaddingParams",
    "SPACE_TO_DEPTH": "TfLiteSpaceToDepthParams", "DEPTH_TO_SPACE": "TfLiteDepthToSpaceParams",
    "RESIZE_BILINEAR": "TfLiteResizeBilinearParams",
    "RESIZE_NEAREST_NEIGHBOR": "TfLiteResizeNearestNeighborParams",
    "CUMSUM": "TfLiteCumsumParams",
    "SVDF": "TfLiteSVDFParams",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "TfLiteUnidirectionalSequenceLSTMParams",
    "IF": "TfLiteIfParams", "WHILE": "TfLiteWhileParams", "CALL_ONCE": "TfLiteCallOnceParams",
    "VAR_HANDLE": "TfLiteVarHandleParams",
    # TFLite's generic parser, for operators TFLM has no kernel for
    "LSTM": "TfLiteLSTMParams", "BIDIRECTIONAL_SEQUENCE_LSTM": "TfLiteBidirectionalSequenceLSTMParams",
    "RNN": "TfLiteRNNParams", "UNIDIRECTIONAL_SEQUENCE_RNN": "TfLiteSequenceRNNParams",
    "BIDIRECTIONAL_SEQUENCE_RNN": "TfLiteBidirectionalSequenceRNNParams",
    "CONV_3D": "TfLiteConv3DParams", "CONV_3D_TRANSPOSE": "TfLiteConv3DParams",
    "LOCAL_RESPONSE_NORMALIZATION": "TfLiteLocalResponseNormParams",
    "LSH_PROJECTION": "TfLiteLSHProjectionParams", "SKIP_GRAM": "TfLiteSkipGramParams",
    "EMBEDDING_LOOKUP_SPARSE": "TfLiteEmbeddingLookupSparseParams",
    "SPARSE_TO_DENSE": "TfLiteSparseToDenseParams", "FAKE_QUANT": "TfLiteFakeQuantParams",
    "ONE_HOT": "TfLiteOneHotParams", "UNIQUE": "TfLiteUniqueParams",
    "REVERSE_SEQUENCE": "TfLiteReverseSequenceParams", "HASHTABLE": "TfLiteHashtableParams",
    "BUCKETIZE": "TfLiteBucketizeParams", "GELU": "TfLiteGeluParams",
    "RANDOM_STANDARD_NORMAL": _RANDOM, "RANDOM_UNIFORM": _RANDOM, "MULTINOMIAL": _RANDOM,
}


def builtin_params_struct(op_name: str, is_custom: bool) -> Optional[str]:
    """The struct TFLM allocates for the operator's options; None when it allocates none."""
    return None if is_custom else BUILTIN_PARAMS.get(op_name)
