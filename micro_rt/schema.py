"""The parts of the TFLite schema (schema.fbs, version 3) micro_rt reads and writes.

Enums are kept as name lists indexed by value; option tables as field specs
`(field name, kind, default)` in slot order, so the same description serves the reader
and the builder.
"""
from __future__ import annotations

import numpy as np

FILE_IDENTIFIER = b"TFL3"
SCHEMA_VERSION = 3

BUILTIN_OPS = """
ADD AVERAGE_POOL_2D CONCATENATION CONV_2D DEPTHWISE_CONV_2D DEPTH_TO_SPACE DEQUANTIZE
EMBEDDING_LOOKUP FLOOR FULLY_CONNECTED HASHTABLE_LOOKUP L2_NORMALIZATION L2_POOL_2D
LOCAL_RESPONSE_NORMALIZATION LOGISTIC LSH_PROJECTION LSTM MAX_POOL_2D MUL RELU RELU_N1_TO_1
RELU6 RESHAPE RESIZE_BILINEAR RNN SOFTMAX SPACE_TO_DEPTH SVDF TANH CONCAT_EMBEDDINGS SKIP_GRAM
CALL CUSTOM EMBEDDING_LOOKUP_SPARSE PAD UNIDIRECTIONAL_SEQUENCE_RNN GATHER BATCH_TO_SPACE_ND
SPACE_TO_BATCH_ND TRANSPOSE MEAN SUB DIV SQUEEZE UNIDIRECTIONAL_SEQUENCE_LSTM STRIDED_SLICE
BIDIRECTIONAL_SEQUENCE_RNN EXP TOPK_V2 SPLIT LOG_SOFTMAX DELEGATE BIDIRECTIONAL_SEQUENCE_LSTM
CAST PRELU MAXIMUM ARG_MAX MINIMUM LESS NEG PADV2 GREATER GREATER_EQUAL LESS_EQUAL SELECT SLICE
SIN TRANSPOSE_CONV SPARSE_TO_DENSE TILE EXPAND_DIMS EQUAL NOT_EQUAL LOG SUM SQRT RSQRT SHAPE
POW ARG_MIN FAKE_QUANT REDUCE_PROD REDUCE_MAX PACK LOGICAL_OR ONE_HOT LOGICAL_AND LOGICAL_NOT
UNPACK REDUCE_MIN FLOOR_DIV REDUCE_ANY SQUARE ZEROS_LIKE FILL FLOOR_MOD RANGE
RESIZE_NEAREST_NEIGHBOR LEAKY_RELU SQUARED_DIFFERENCE MIRROR_PAD ABS SPLIT_V UNIQUE CEIL
REVERSE_V2 ADD_N GATHER_ND COS WHERE RANK ELU REVERSE_SEQUENCE MATRIX_DIAG QUANTIZE
MATRIX_SET_DIAG ROUND HARD_SWISH IF WHILE NON_MAX_SUPPRESSION_V4 NON_MAX_SUPPRESSION_V5
SCATTER_ND SELECT_V2 DENSIFY SEGMENT_SUM BATCH_MATMUL PLACEHOLDER_FOR_GREATER_OP_CODES CUMSUM
CALL_ONCE BROADCAST_TO RFFT2D CONV_3D IMAG REAL COMPLEX_ABS HASHTABLE HASHTABLE_FIND
HASHTABLE_IMPORT HASHTABLE_SIZE REDUCE_ALL CONV_3D_TRANSPOSE VAR_HANDLE READ_VARIABLE
ASSIGN_VARIABLE BROADCAST_ARGS RANDOM_STANDARD_NORMAL BUCKETIZE RANDOM_UNIFORM MULTINOMIAL GELU
DYNAMIC_UPDATE_SLICE RELU_0_TO_1 UNSORTED_SEGMENT_PROD UNSORTED_SEGMENT_MAX
UNSORTED_SEGMENT_SUM ATAN2 UNSORTED_SEGMENT_MIN SIGN BITCAST BITWISE_XOR RIGHT_SHIFT
""".split()
BUILTIN_CODE = {name: code for code, name in enumerate(BUILTIN_OPS)}
CUSTOM_CODE = BUILTIN_CODE["CUSTOM"]
# Codes above 127 exist only in `builtin_code`; `deprecated_builtin_code` is capped there.
PLACEHOLDER_FOR_GREATER_OP_CODES = 127


def builtin_name(code: int) -> str:
    return BUILTIN_OPS[code] if 0 <= code < len(BUILTIN_OPS) else f"BUILTIN_{code}"


TENSOR_TYPES = ("FLOAT32 FLOAT16 INT32 UINT8 INT64 STRING BOOL INT16 COMPLEX64 INT8 FLOAT64 "
                "COMPLEX128 UINT64 RESOURCE VARIANT UINT32 UINT16 INT4 BFLOAT16").split()
TENSOR_TYPE_CODE = {name: code for code, name in enumerate(TENSOR_TYPES)}
NUMPY_DTYPE = {
    "FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "UINT8": np.uint8,
    "INT64": np.int64, "BOOL": np.bool_, "INT16": np.int16, "COMPLEX64": np.complex64,
    "INT8": np.int8, "FLOAT64": np.float64, "COMPLEX128": np.complex128, "UINT64": np.uint64,
    "UINT32": np.uint32, "UINT16": np.uint16,
}
# Bytes per element as TFLM's TfLiteTypeSizeOf counts them (INT4 is stored one per byte
# unpacked in the arena, packed two per byte in the file; STRING/RESOURCE/VARIANT have none).
ELEMENT_SIZE = {name: np.dtype(dt).itemsize for name, dt in NUMPY_DTYPE.items()}
ELEMENT_SIZE.update({"INT4": 1, "BFLOAT16": 2})

ACTIVATIONS = ("NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT")
PADDINGS = ("SAME", "VALID")
FC_WEIGHTS_FORMATS = ("DEFAULT", "SHUFFLED4x16INT8")

# Field kinds: flatbuffer scalar kinds, or enum kinds mapped to names, or vectors ("[int]").
ENUM_KINDS = {"padding": PADDINGS, "activation": ACTIVATIONS, "tensor_type": TENSOR_TYPES,
              "fc_weights_format": FC_WEIGHTS_FORMATS}
_ACT = ("fused_activation_function", "activation", "NONE")
_PAD = ("padding", "padding", "SAME")
_POT16 = ("pot_scale_int16", "bool", True)
_BIAS_TYPE = ("quantized_bias_type", "tensor_type", "FLOAT32")

# BuiltinOptions union member index -> (table name, fields in slot order).
OPTION_TABLES: dict[int, tuple[str, list[tuple[str, str, object]]]] = {
    1: ("Conv2DOptions", [_PAD, ("stride_w", "int", 0), ("stride_h", "int", 0), _ACT,
                          ("dilation_w_factor", "int", 1), ("dilation_h_factor", "int", 1),
                          _BIAS_TYPE]),
    2: ("DepthwiseConv2DOptions", [_PAD, ("stride_w", "int", 0), ("stride_h", "int", 0),
                                   ("depth_multiplier", "int", 0), _ACT,
                                   ("dilation_w_factor", "int", 1),
                                   ("dilation_h_factor", "int", 1)]),
    5: ("Pool2DOptions", [_PAD, ("stride_w", "int", 0), ("stride_h", "int", 0),
                          ("filter_width", "int", 0), ("filter_height", "int", 0), _ACT]),
    6: ("SVDFOptions", [("rank", "int", 0), _ACT, ("asymmetric_quantize_inputs", "bool", False)]),
    7: ("RNNOptions", [_ACT, ("asymmetric_quantize_inputs", "bool", False)]),
    8: ("FullyConnectedOptions", [_ACT, ("weights_format", "fc_weights_format", "DEFAULT"),
                                  ("keep_num_dims", "bool", False),
                                  ("asymmetric_quantize_inputs", "bool", False), _BIAS_TYPE]),
    9: ("SoftmaxOptions", [("beta", "float", 0.0)]),
    10: ("ConcatenationOptions", [("axis", "int", 0), _ACT]),
    11: ("AddOptions", [_ACT, _POT16]),
    12: ("L2NormOptions", [_ACT]),
    14: ("LSTMOptions", [_ACT, ("cell_clip", "float", 0.0), ("proj_clip", "float", 0.0),
                         ("kernel_type", "byte", 0), ("asymmetric_quantize_inputs", "bool", False)]),
    15: ("ResizeBilinearOptions", [("new_height", "int", 0), ("new_width", "int", 0),
                                   ("align_corners", "bool", False),
                                   ("half_pixel_centers", "bool", False)]),
    16: ("CallOptions", [("subgraph", "uint", 0)]),
    17: ("ReshapeOptions", [("new_shape", "[int]", None)]),
    19: ("SpaceToDepthOptions", [("block_size", "int", 0)]),
    21: ("MulOptions", [_ACT]),
    22: ("PadOptions", []),
    23: ("GatherOptions", [("axis", "int", 0), ("batch_dims", "int", 0)]),
    24: ("BatchToSpaceNDOptions", []),
    25: ("SpaceToBatchNDOptions", []),
    26: ("TransposeOptions", []),
    27: ("ReducerOptions", [("keep_dims", "bool", False)]),
    28: ("SubOptions", [_ACT, _POT16]),
    29: ("DivOptions", [_ACT]),
    30: ("SqueezeOptions", [("squeeze_dims", "[int]", None)]),
    31: ("SequenceRNNOptions", [("time_major", "bool", False), _ACT,
                                ("asymmetric_quantize_inputs", "bool", False)]),
    32: ("StridedSliceOptions", [("begin_mask", "int", 0), ("end_mask", "int", 0),
                                 ("ellipsis_mask", "int", 0), ("new_axis_mask", "int", 0),
                                 ("shrink_axis_mask", "int", 0), ("offset", "bool", False)]),
    33: ("ExpOptions", []),
    35: ("SplitOptions", [("num_splits", "int", 0)]),
    36: ("LogSoftmaxOptions", []),
    37: ("CastOptions", [("in_data_type", "tensor_type", "FLOAT32"),
                         ("out_data_type", "tensor_type", "FLOAT32")]),
    38: ("DequantizeOptions", []),
    39: ("MaximumMinimumOptions", []),
    40: ("ArgMaxOptions", [("output_type", "tensor_type", "FLOAT32")]),
    43: ("PadV2Options", []),
    48: ("SliceOptions", []),
    49: ("TransposeConvOptions", [_PAD, ("stride_w", "int", 0), ("stride_h", "int", 0), _ACT,
                                  _BIAS_TYPE]),
    52: ("ExpandDimsOptions", []),
    55: ("ShapeOptions", [("out_type", "tensor_type", "FLOAT32")]),
    57: ("ArgMinOptions", [("output_type", "tensor_type", "FLOAT32")]),
    59: ("PackOptions", [("values_count", "int", 0), ("axis", "int", 0)]),
    64: ("UnpackOptions", [("num", "int", 0), ("axis", "int", 0)]),
    71: ("UnidirectionalSequenceLSTMOptions", [_ACT, ("cell_clip", "float", 0.0),
                                              ("proj_clip", "float", 0.0),
                                              ("time_major", "bool", False),
                                              ("asymmetric_quantize_inputs", "bool", False),
                                              ("diagonal_recurrent_tensors", "bool", False)]),
    74: ("ResizeNearestNeighborOptions", [("align_corners", "bool", False),
                                          ("half_pixel_centers", "bool", False)]),
    75: ("LeakyReluOptions", [("alpha", "float", 0.0)]),
    77: ("MirrorPadOptions", [("mode", "byte", 0)]),
    79: ("SplitVOptions", [("num_splits", "int", 0)]),
    89: ("QuantizeOptions", []),
    91: ("HardSwishOptions", []),
    92: ("IfOptions", [("then_subgraph_index", "int", 0), ("else_subgraph_index", "int", 0)]),
    93: ("WhileOptions", [("cond_subgraph_index", "int", 0), ("body_subgraph_index", "int", 0)]),
    94: ("DepthToSpaceOptions", [("block_size", "int", 0)]),
    101: ("BatchMatMulOptions", [("adj_x", "bool", False), ("adj_y", "bool", False),
                                ("asymmetric_quantize_inputs", "bool", False)]),
    102: ("CumsumOptions", [("exclusive", "bool", False), ("reverse", "bool", False)]),
    103: ("CallOnceOptions", [("init_subgraph_index", "int", 0)]),
    116: ("GeluOptions", [("approximate", "bool", False)]),
}
OPTION_TABLE_INDEX = {name: index for index, (name, _) in OPTION_TABLES.items()}

# Which options table each builtin uses (for validation and for the builder).
OP_OPTIONS = {
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions", "SVDF": "SVDFOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions", "SOFTMAX": "SoftmaxOptions",
    "CONCATENATION": "ConcatenationOptions", "ADD": "AddOptions", "SUB": "SubOptions",
    "MUL": "MulOptions", "DIV": "DivOptions", "RESHAPE": "ReshapeOptions",
    "PAD": "PadOptions", "PADV2": "PadV2Options", "TRANSPOSE": "TransposeOptions",
    "MEAN": "ReducerOptions", "SUM": "ReducerOptions", "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions", "REDUCE_PROD": "ReducerOptions",
    "SQUEEZE": "SqueezeOptions", "STRIDED_SLICE": "StridedSliceOptions",
    "CAST": "CastOptions", "DEQUANTIZE": "DequantizeOptions", "QUANTIZE": "QuantizeOptions",
    "MAXIMUM": "MaximumMinimumOptions", "MINIMUM": "MaximumMinimumOptions",
    "EXPAND_DIMS": "ExpandDimsOptions", "SHAPE": "ShapeOptions", "PACK": "PackOptions",
    "UNPACK": "UnpackOptions", "LEAKY_RELU": "LeakyReluOptions",
    "HARD_SWISH": "HardSwishOptions", "TRANSPOSE_CONV": "TransposeConvOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "GATHER": "GatherOptions", "SPLIT": "SplitOptions", "SPLIT_V": "SplitVOptions",
    "ARG_MAX": "ArgMaxOptions", "ARG_MIN": "ArgMinOptions", "SLICE": "SliceOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions", "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions", "BATCH_MATMUL": "BatchMatMulOptions",
    "GELU": "GeluOptions", "MIRROR_PAD": "MirrorPadOptions", "EXP": "ExpOptions",
    "IF": "IfOptions", "WHILE": "WhileOptions", "CALL_ONCE": "CallOnceOptions",
    "REDUCE_ALL": "ReducerOptions", "L2_NORMALIZATION": "L2NormOptions",
    "LOG_SOFTMAX": "LogSoftmaxOptions", "CUMSUM": "CumsumOptions",
}


def option_defaults(table_name: str) -> dict:
    """The options dict a builtin gets when its file carries no options table."""
    fields = OPTION_TABLES[OPTION_TABLE_INDEX[table_name]][1]
    return {name: (list(default) if isinstance(default, list) else default)
            for name, _, default in fields}
