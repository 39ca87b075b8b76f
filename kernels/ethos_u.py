"""Vela's `ethos-u` custom operator: the arena accounting of TFLM's kernel, without the NPU.

A model compiled by Vela hands (part of) the network to an Arm Ethos-U NPU as one custom
operator whose inputs are the command stream, the weights, the scratch and fast-scratch
tensors and the network's inputs. micro_rt does not simulate the NPU: `invoke` refuses to run
(`Registration.not_simulated` says why, so `profile` and `fit` can report it), while `init`
and `prepare` reserve exactly what TFLM's kernel reserves, so `plan` and `fit` count the RAM.

Read from tensorflow/tflite-micro kernels/ethos_u/ethosu.cc (in our words): init allocates its
OpData (three ints) in the tail; prepare needs at least one input and non-empty custom
options, requests two scratch buffers of (inputs + outputs) base addresses (uint64 each) and
their sizes (size_t each), and reads input 0 (the command stream) as a temporary tensor for
its size. Eval checks that the options' flexbuffer root (an int8) is 1, "ETHOSU", before it
hands the command stream to the driver.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..flexbuffer import read_root
from ..kernel_api import KernelContext, Node, Registration
from .kernel_util import kernel_error
from .signal_common import allocate_op_data

CO_TYPE_ETHOSU = 1
NOT_SIMULATED = ("runs on the Arm Ethos-U NPU, which micro_rt does not simulate: its command "
                 "stream's compute (and the NPU driver's code and stack) is not accounted")


@dataclass
class EthosUOpData:
    """TFLM's OpData of the kernel."""
    cms_data_size: int = 0
    base_addr_idx: int = -1
    base_addr_size_idx: int = -1


def _init(ctx, custom_options) -> EthosUOpData:
    allocate_op_data(ctx, "OpDataEthosU")
    return EthosUOpData()


def _prepare(ctx: KernelContext, node: Node) -> None:
    if not node.inputs:
        raise kernel_error(node, "has no inputs; input 0 must be Vela's command stream")
    if not node.custom_options:
        raise kernel_error(node, "has no custom options; Vela writes the co-processor type there")
    data: EthosUOpData = node.user_data
    n_base_addr = len(node.inputs) + len(node.outputs)
    data.base_addr_idx = ctx.request_scratch(n_base_addr * 8)                    # uint64_t
    data.base_addr_size_idx = ctx.request_scratch(n_base_addr * ctx.target.pointer_size)  # size_t
    command_stream = ctx.input(node, 0)
    if command_stream is None:
        raise kernel_error(node, "input 0 (the command stream) is omitted")
    data.cms_data_size = command_stream.nbytes


def co_processor_type(node) -> int:
    """The co-processor type Vela wrote in the node's options (1 for Ethos-U)."""
    root = read_root(node.custom_options or b"", f"op {node.index} {node.op_name}")
    if not isinstance(root, int) or isinstance(root, bool):
        raise kernel_error(node, f"custom options hold a {type(root).__name__}, not the "
                                 "co-processor type (an int)")
    return root


def _invoke(ctx: KernelContext, node: Node) -> None:
    co_type = co_processor_type(node)
    if co_type != CO_TYPE_ETHOSU:
        raise kernel_error(node, f"co-processor type {co_type} is not Ethos-U ({CO_TYPE_ETHOSU})")
    raise kernel_error(node, f"cannot run: it {NOT_SIMULATED}")


CUSTOMS = [
    ("ethos-u", Registration(init=_init, prepare=_prepare, invoke=_invoke, name="ethos-u",
                             not_simulated=NOT_SIMULATED,
                             temps="i0"), 1)            # Vela's operator reads its command stream for its size,
]
