"""Targets: the machines micro_rt accounts memory for and (for Cortex-M) emulates.

TFLM's persistent arena use is made of its own C structs, so it depends on the build:
pointer size and struct layout. `host64` is the x86-64 build the `tflite-micro` pip package
is; the Cortex-M targets are 32-bit arm-none-eabi builds. Struct sizes below are the C
layouts of TFLM's structs on each: declared member by member in structs/tflm_structs.h and
checked against this table by tests/test_struct_layouts.py, which compiles that header with
arm-none-eabi-gcc and with the host gcc (host64 figures were also measured against the pip
package's RecordingMicroAllocator).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .errors import MicroRtError

# name -> (host64 bytes, arm32 bytes, host64 alignment, arm32 alignment).
# Every figure is sizeof/alignof of the declaration in structs/tflm_structs.h (TFLM's
# definitions), compiled by tests/test_struct_layouts.py for both columns; host64 figures are
# also measured against the tflite-micro pip package's RecordingMicroAllocator with
# single-operator models (TfLiteFullyConnectedParams has 16 bytes there that the TFLM sources
# do not show and a device build of them does not have; the header says so). The arm32
# column is arm-none-eabi-gcc
# (-mthumb -mcpu=cortex-m4, AAPCS), a default
# Cortex-M build: TF_LITE_STATIC_MEMORY, no USE_TFLM_COMPRESSION (the pip package has it),
# and gcc's bare-metal default -fshort-enums (1-byte C enums: TfLiteType,
# TfLiteFusedActivation, ... - hence TfLiteTensor 32 and the small builtin option structs).
# Kernel OpData is allocated 16-aligned whatever its alignof.
# Variants (compression on: OpDataConv 64, fixed block 252; armclang's 4-byte enums:
# TfLiteTensor 40) are not modelled.
STRUCTS: dict[str, tuple[int, int, int, int]] = {
    # framework records
    "TfLiteEvalTensor": (24, 12, 8, 4),
    "NodeAndRegistration": (64, 32, 8, 4),
    "TfLiteTensor": (64, 32, 8, 4),
    "TfLiteAffineQuantization": (24, 12, 8, 4),
    "TfLiteQuantizationType": (4, 1, 4, 1),     # a C enum: 4 bytes, 1 with -fshort-enums
    "SubgraphAllocations": (24, 8, 8, 4),   # host64: the pip build has compression fields
    "ScratchBufferHandle": (8, 4, 8, 4),
    "ScratchBufferRequest": (16, 12, 8, 4),
    "AllocationInfo": (32, 24, 8, 4),
    "GreedyPlannerPerBuffer": (40, 40, 4, 4),
    "TfLiteIntArray": (4, 4, 4, 4),            # + 4 per dim: a kernel's copy of its output dims
    # allocator objects placed in the arena at start-up, with one SubgraphAllocations:
    # recording allocators (RecordingSingleArenaBufferAllocator + GreedyMemoryPlanner +
    # RecordingMicroAllocator + MicroBuiltinDataAllocator + SubgraphAllocations), which is what
    # the pip package's interpreter uses; AllocatorFixedPlain is the same with the plain
    # SingleArenaBufferAllocator / MicroAllocator (MicroInterpreter on a device)
    "AllocatorFixed": (488, 236, 8, 4),
    "AllocatorFixedPlain": (256, 132, 8, 4),
    # ... of which these come last: a model with resource variables gets its
    # MicroResourceVariables (allocated 16-aligned, before the interpreter) ahead of them
    "MicroBuiltinDataAllocator": (16, 8, 8, 4),
    "MicroResourceVariables": (16, 12, 16, 16),
    "MicroResourceVariable": (40, 20, 16, 16),          # one per variable the model names
    # kernel op data (TFLM reference kernels, init)
    "OpDataConv": (80, 56, 16, 16),
    "OpDataFullyConnected": (72, 48, 16, 16),
    "OpDataAdd": (60, 60, 16, 16),
    "OpDataSub": (52, 52, 16, 16),
    "OpDataMul": (36, 36, 16, 16),
    "OpDataPooling": (32, 32, 16, 16),
    "SoftmaxParams": (80, 56, 16, 16),
    "OpDataLogistic": (16, 16, 16, 16),
    "OpDataTanh": (16, 16, 16, 16),
    "ReluOpData": (28, 28, 16, 16),
    "Relu6OpData": (8, 8, 16, 16),
    "LeakyReluOpData": (24, 24, 16, 16),
    "HardSwishParams": (20, 20, 16, 16),
    "OpDataQuantizeReference": (32, 32, 16, 16),
    "DequantizeOpData": (32, 32, 16, 16),
    "OpDataPad": (56, 56, 16, 16),
    "OpDataReduce": (44, 44, 16, 16),
    "StridedSliceOpData": (84, 84, 16, 16),
    "OpDataConcatenation": (80, 24, 16, 16),
    "OpDataSvdf": (36, 36, 16, 16),
    "OpDataLSTM": (688, 688, 16, 16),
    # TFLM's Signal library op data (signal/micro/kernels/*.cc); the kiss_fftr state is sized
    # in micro_rt.kernels.signal_kissfft (it grows with the FFT length)
    "TFLMSignalWindowParams": (8, 8, 16, 16),
    "TFLMSignalEnergyParams": (8, 8, 16, 16),
    "TfLiteAudioFrontendRfftParams": (48, 32, 16, 16),
    "TFLMSignalFilterBankParams": (64, 36, 16, 16),
    "TFLMSignalSpectralSubtractionParams": (56, 44, 16, 16),
    "TfLitePcanParams": (4, 4, 16, 16),
    "TFLMSignalLogParams": (8, 8, 16, 16),
    "TfLiteAudioFrontendIrfftParams": (32, 24, 16, 16),
    "TFLMSignalFramerParams": (40, 28, 16, 16),
    "TFLMSignalStackerParams": (56, 36, 16, 16),
    "TFLMSignalFrontendDelayParams": (32, 20, 16, 16),
    "TFLMSignalOverlapAddParams": (32, 24, 16, 16),
    "OpDataEthosU": (12, 12, 16, 16),          # Vela's ethos-u custom operator
    "OpDataDetectionPostProcess": (112, 112, 16, 16),
    "OpDataCircularBuffer": (8, 8, 16, 16),
    "CircularBuffer": (40, 24, 8, 4),          # at the start of each circular buffer's state
    "OpDataIf": (8, 8, 16, 16),
    "OpDataWhile": (8, 8, 16, 16),
    "OpDataCallOnce": (8, 8, 16, 16),
    "OpDataVarHandle": (4, 4, 16, 16),
    "OpDataAssignVariable": (4, 0, 16, 16),         # only a compression build (host64) has it
    "SpaceToBatchParams": (4, 4, 16, 16),
    "OpDataMirrorPad": (20, 20, 16, 16),
    "OpDataEmbeddingLookup": (16, 8, 16, 16),
    "OpDataAbsRsqrt": (28, 20, 16, 16),            # elementwise.cc (ABS, RSQRT)
    "OpDataElu": (256, 256, 16, 16),               # elu.cc's OpData: the int8 table
    "OpDataCumsum": (36, 36, 16, 16),               # int8 only, allocated in prepare
    "LogSoftmaxOpData": (40, 28, 16, 16),           # int8 only, allocated in prepare
    "L2NormalizationParams": (4, 4, 16, 16),
    # CMSIS-NN kernel op data (kernels/cmsis_nn/*.cc wrappers around the reference OpData)
    "OpDataConvCmsis": (88, 60, 16, 16),            # {OpDataConv; int buffer_idx}
    "OpDataDepthwiseCmsis": (88, 60, 16, 16),       # {OpDataConv; int buffer_idx}
    "OpDataFullyConnectedCmsis": (104, 72, 16, 16), # {OpDataFC; 2 int; ptr; 3 int}
    "OpDataPoolingCmsis": (36, 36, 16, 16),         # {OpDataPooling; int buffer_idx}
    "OpDataSoftmaxCmsis": (88, 64, 16, 16),         # CMSISNNSoftmaxParams {SoftmaxParams; 2 int}
    "OpDataAddCmsis": (60, 60, 16, 16),             # own OpData, same members as OpDataAdd
    "OpDataMulCmsis": (36, 36, 16, 16),             # MulInit: sizeof(OpDataMul)
    "CmsisNnOpDataSvdf": (48, 40, 16, 16),          # OpDataSvdf's members; int32_t *kernel_sums
    "OpDataLSTMCmsis": (1008, 912, 16, 16),         # {OpDataLSTM; cmsis_nn_lstm_params}
    "OpDataDiv": (28, 28, 16, 16),
    "OpDataSquaredDifference": (112, 112, 16, 16),  # {bool; ArithmeticParams} (int64 members: 8-aligned)
    "OpDataAddN": (40, 40, 16, 16),                 # int8 only, allocated in prepare
    "PreluParams": (28, 28, 16, 16),
    "OpDataComparison": (32, 32, 16, 16),           # {ComparisonParams}
    "OpDataSelect": (1, 1, 16, 16),                 # {bool requires_broadcast}
    # TRANSPOSE_CONV and BATCH_MATMUL (reference and CMSIS-NN glue)
    "OpDataTransposeConv": (88, 72, 16, 16),
    "OpDataTransposeConvCmsis": (88, 76, 16, 16),
    "QuantizationOpDataBatchMatmul": (28, 28, 16, 16),
    "OpDataBatchMatmul": (32, 16, 16, 16),
    "OpDataBatchMatmulCmsis": (56, 36, 16, 16),     # {OpDataBatchMatmul; cmsis_nn_dims; int}
    "ConvParams": (56, 56, 4, 4),
    "PaddingValues": (8, 8, 2, 2),
    "cmsis_nn_dims": (16, 16, 4, 4),
    # builtin option structs (MicroBuiltinDataAllocator, allocated with their alignof), one per
    # operator with options (micro_rt/builtin_params.py says which): ints, enums and bools only,
    # except FC (quant_spec pointer + count); C enums are 4 bytes on host64 and 1 byte on
    # arm-none-eabi-gcc (-fshort-enums default)
    "TfLiteConvParams": (28, 28, 4, 4),
    "TfLiteDepthwiseConvParams": (28, 28, 4, 4),
    "TfLiteFullyConnectedParams": (32, 5, 8, 1),    # host64: the pip package's extra pointer + count
    "TfLitePoolParams": (40, 40, 4, 4),
    "TfLiteReshapeParams": (36, 36, 4, 4),
    "TfLiteSqueezeParams": (36, 36, 4, 4),
    "TfLiteStridedSliceParams": (24, 24, 4, 4),
    "TfLiteUnidirectionalSequenceLSTMParams": (16, 16, 4, 4),
    "TfLiteSVDFParams": (12, 8, 4, 4),
    "TfLiteAddParams": (8, 2, 4, 1),
    "TfLiteSubParams": (8, 2, 4, 1),
    "TfLiteConcatenationParams": (8, 8, 4, 4),
    "TfLitePackParams": (8, 8, 4, 4),
    "TfLiteUnpackParams": (8, 8, 4, 4),
    "TfLiteCastParams": (8, 2, 4, 1),
    "TfLiteGatherParams": (8, 8, 4, 4),
    "TfLiteMulParams": (4, 1, 4, 1),
    "TfLiteDivParams": (4, 1, 4, 1),
    "TfLiteSplitParams": (4, 4, 4, 4),
    "TfLiteSoftmaxParams": (4, 4, 4, 4),
    "TfLiteLeakyReluParams": (4, 4, 4, 4),
    "TfLiteShapeParams": (4, 1, 4, 1),
    "TfLiteReducerParams": (1, 1, 1, 1),
    # ... and those of the operators micro_rt has no kernel for (or TFLM none at all)
    "TfLiteConv3DParams": (32, 32, 4, 4),
    "TfLiteTransposeConvParams": (20, 16, 4, 4),
    "TfLiteRNNParams": (8, 2, 4, 1),
    "TfLiteSequenceRNNParams": (12, 3, 4, 1),
    "TfLiteBidirectionalSequenceRNNParams": (12, 4, 4, 1),
    "TfLiteLSTMParams": (20, 16, 4, 4),
    "TfLiteBidirectionalSequenceLSTMParams": (16, 16, 4, 4),
    "TfLiteL2NormParams": (4, 1, 4, 1),
    "TfLiteGeluParams": (1, 1, 1, 1),
    "TfLiteLocalResponseNormParams": (16, 16, 4, 4),
    "TfLiteBatchMatMulParams": (3, 3, 1, 1),
    "TfLiteFakeQuantParams": (16, 16, 4, 4),
    "TfLiteSplitVParams": (4, 4, 4, 4),
    "TfLiteArgMaxParams": (4, 1, 4, 1),
    "TfLiteArgMinParams": (4, 1, 4, 1),
    "TfLiteMirrorPaddingParams": (4, 1, 4, 1),
    "TfLiteSpaceToDepthParams": (4, 4, 4, 4),
    "TfLiteDepthToSpaceParams": (4, 4, 4, 4),
    "TfLiteResizeBilinearParams": (2, 2, 1, 1),
    "TfLiteResizeNearestNeighborParams": (2, 2, 1, 1),
    "TfLiteCumsumParams": (2, 2, 1, 1),
    "TfLiteOneHotParams": (4, 4, 4, 4),
    "TfLiteReverseSequenceParams": (8, 8, 4, 4),
    "TfLiteUniqueParams": (4, 1, 4, 1),
    "TfLiteSparseToDenseParams": (1, 1, 1, 1),
    "TfLiteLSHProjectionParams": (4, 1, 4, 1),
    "TfLiteSkipGramParams": (12, 12, 4, 4),
    "TfLiteEmbeddingLookupSparseParams": (4, 1, 4, 1),
    "TfLiteBucketizeParams": (16, 8, 8, 4),
    "TfLiteRandomParams": (8, 8, 4, 4),
    "TfLiteIfParams": (8, 8, 4, 4),
    "TfLiteWhileParams": (8, 8, 4, 4),
    "TfLiteCallOnceParams": (4, 4, 4, 4),
    "TfLiteVarHandleParams": (16, 8, 8, 4),
    "TfLiteHashtableParams": (12, 8, 4, 4),
}


@dataclass(frozen=True)
class Target:
    name: str
    pointer_size: int
    cpu: Optional[str] = None          # Unicorn CPU model for the virtual MCU
    has_dsp: bool = False
    flash_bytes: int = 0               # defaults for `fit` when the user gives none
    sram_bytes: int = 0
    description: str = ""
    overrides: dict = field(default_factory=dict)
    # The allocator objects TFLM builds inside the arena: the pip package's interpreter
    # records allocations (RecordingMicroAllocator); a device build uses the plain one.
    allocator_objects: str = "AllocatorFixedPlain"
    # the architectures (as ELF build attributes name them) whose code the core runs, its own
    # first: Armv7-M and Armv8-M Mainline include the Armv6-M instruction set, Armv7E-M adds the
    # DSP extension to Armv7-M, and Armv8-M Mainline with the DSP extension (the M33's) holds both
    architectures: tuple[str, ...] = ()

    @property
    def is_host(self) -> bool:
        return self.cpu is None

    def sizeof(self, struct: str) -> int:
        if struct in self.overrides:
            return self.overrides[struct]
        if struct not in STRUCTS:
            raise MicroRtError(f"no size known for struct {struct} on target {self.name}")
        host, arm = STRUCTS[struct][:2]
        return host if self.pointer_size == 8 else arm

    def alignof(self, struct: str) -> int:
        host, arm = STRUCTS.get(struct, (0, 0, 8, 4))[2:]
        return host if self.pointer_size == 8 else arm


V7EM_RUNS = ("v7E-M", "v7-M", "v6-M", "v6S-M")
TARGETS: dict[str, Target] = {
    "host64": Target("host64", 8, description="x86-64/arm64 host build (the tflite-micro pip package)",
                     allocator_objects="AllocatorFixed"),
    "cortex-m0plus": Target("cortex-m0plus", 4, cpu="cortex-m0", has_dsp=False,
                            flash_bytes=256 * 1024, sram_bytes=32 * 1024,
                            description="Armv6-M, no DSP (runs on Unicorn's M0 model)",
                            architectures=("v6-M", "v6S-M")),
    "cortex-m4": Target("cortex-m4", 4, cpu="cortex-m4", has_dsp=True,
                        flash_bytes=1024 * 1024, sram_bytes=256 * 1024,
                        description="Armv7E-M with DSP", architectures=V7EM_RUNS),
    "cortex-m7": Target("cortex-m7", 4, cpu="cortex-m7", has_dsp=True,
                        flash_bytes=2048 * 1024, sram_bytes=512 * 1024,
                        description="Armv7E-M with DSP, dual issue", architectures=V7EM_RUNS),
    "cortex-m33": Target("cortex-m33", 4, cpu="cortex-m33", has_dsp=True,
                         flash_bytes=1024 * 1024, sram_bytes=256 * 1024,
                         description="Armv8-M Mainline with DSP",
                         architectures=("v8-M.main", "v8-M.base") + V7EM_RUNS),
}


def cores_running(architecture: str) -> list[str]:
    """The emulated cores that run code built for `architecture`, those whose own it is first."""
    cores = [t for t in TARGETS.values() if architecture in t.architectures]
    return [t.name for t in sorted(cores, key=lambda t: t.architectures[0] != architecture)]


ALIASES = {"m0+": "cortex-m0plus", "m0plus": "cortex-m0plus", "cortex-m0+": "cortex-m0plus",
           "m4": "cortex-m4", "m7": "cortex-m7", "m33": "cortex-m33", "host": "host64"}


def get_target(name: str) -> Target:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in TARGETS:
        raise MicroRtError(f"unknown target '{name}'; choose from {', '.join(TARGETS)}")
    return TARGETS[key]
