"""The boot header of an exported image, for a part whose boot ROM reads one before the image's
vector table (cortexm/board_records.py EMULATED_BOOT_KINDS): for an i.MX RT booting from FlexSPI
NOR flash, the configuration block, the image vector table and the boot data, from the board
file's `boot.flexspi_nor` (layouts: cortexm/boot_headers.py). boot_header.c holds them as C
arrays in sections board.ld puts at the offsets the boot ROM reads them from, and the image's
vector table after them; `micro-rt emulate` models the ROM reading them (cortexm/system/boot_rom.py).
"""
from __future__ import annotations

from typing import Optional

from .cortexm.board_records import Board, BootKind
from .cortexm.boot_headers import IVT_HEADER, encode_boot_data, encode_configuration_block

BOOT_SOURCE = "boot_header.c"


def has_boot_header(board: Board) -> bool:
    return board.boot is not None and board.boot.kind is BootKind.IMXRT_FLEXSPI_NOR


def boot_header_bytes(board: Board) -> int:
    """Flash the boot header takes before the vector table (0 without one)."""
    return board.boot.image_offset if has_boot_header(board) else 0


def _words(words, per_line: int = 6) -> str:
    lines = [", ".join(f"0x{w:08x}u" for w in words[i:i + per_line]) for i in range(0, len(words), per_line)]
    return "    " + ",\n    ".join(lines)


def boot_header_source(board: Board, header: str) -> Optional[str]:
    """boot_header.c for `board`, or None when its boot ROM reads none."""
    if not has_boot_header(board):
        return None
    boot = board.boot.flexspi_nor
    code = board.memory.region(board.memory.code_region)
    raw = encode_configuration_block(boot.config)
    config = [int.from_bytes(raw[i:i + 4], "little") for i in range(0, len(raw), 4)]
    start, size, plugin, placeholder = encode_boot_data(code.base, boot.config.flash_bytes)
    return f"""/* {header}.
 * What the i.MX RT boot ROM reads before it starts the image ({board.path.name}, boot): the FlexSPI
 * NOR configuration block at 0x{code.base:08x} ({boot.config.describe_read()}),
 * the image vector table at 0x{code.base + boot.ivt_offset:08x} and the boot data after it; the IVT's entry is the
 * image's vector table (startup.c's g_mrt_vectors, at 0x{code.base + boot.vectors_offset:08x}), as NXP's MCUXpresso
 * SDK writes it. board.ld places the three sections. */
#include <stdint.h>

extern const void *const g_mrt_vectors[16];
extern const uint32_t g_mrt_boot_data[4];

__attribute__((section(".mrt_boot.config"), used))
const uint32_t g_mrt_flexspi_nor_config[{len(config)}] = {{
{_words(config)}
}};

__attribute__((section(".mrt_boot.ivt"), used))
const uint32_t g_mrt_ivt[8] = {{
    0x{IVT_HEADER:08x}u,              /* header: tag 0xD1, length 32 (big-endian), version 4.1 */
    (uint32_t)g_mrt_vectors,      /* entry: the image's vector table */
    0u,                           /* reserved */
    0u,                           /* DCD: none */
    (uint32_t)g_mrt_boot_data,    /* boot data */
    (uint32_t)g_mrt_ivt,          /* self */
    0u,                           /* CSF: none (no signature) */
    0u,                           /* reserved */
}};

__attribute__((section(".mrt_boot.data"), used))
const uint32_t g_mrt_boot_data[4] = {{0x{start:08x}u, {size}u, {plugin}u, 0x{placeholder:08x}u}};
"""


def boot_linker_section(board: Board) -> str:
    """board.ld's output section for the boot header ("" without one): the configuration block
    at the code region's base, the IVT and boot data at ivt_offset, the vector table after."""
    if not has_boot_header(board):
        return ""
    boot = board.boot.flexspi_nor
    return f"""    /* What the boot ROM reads first ({BOOT_SOURCE}): the FlexSPI NOR configuration block,
     * the image vector table and boot data at 0x{boot.ivt_offset:x}; the vector table at 0x{boot.vectors_offset:x}. */
    .mrt_boot :
    {{
        KEEP(*(.mrt_boot.config))
        . = 0x{boot.ivt_offset:x};
        KEEP(*(.mrt_boot.ivt))
        KEEP(*(.mrt_boot.data))
        . = 0x{boot.vectors_offset:x};
    }} > FLASH

"""
