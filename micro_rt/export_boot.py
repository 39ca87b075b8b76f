"""The boot header of an exported image, for a part whose boot ROM reads one before the image's
vector table (the board file's `boot`)
(layouts: cortexm/boot_headers.py):
- an i.MX RT booting from FlexSPI NOR flash: the configuration block, the image vector table and
  the boot data, from `boot.flexspi_nor`;
- the RP2040: micro_rt's boot stage 2 (cortexm/src/export/rp2040_boot2.S, shipped built as
  cortexm/firmware/rp2040-boot2.bin), padded to 252 bytes and followed by its CRC-32.
boot_header.c holds them as C arrays in sections board.ld puts where the boot ROM reads them,
and the image's vector table after them; `micro-rt emulate` models the ROM reading them
(cortexm/system/boot_rom.py).
"""
from __future__ import annotations

from typing import Optional

from .cortexm.board_records import Board, BootKind
from .cortexm.boot_headers import (IVT_HEADER, encode_boot_data, encode_boot_stage_2,
                                   encode_configuration_block)
from .cortexm.firmware_build import RP2040_BOOT_STAGE_2

BOOT_SOURCE = "boot_header.c"


def has_boot_header(board: Board) -> bool:
    return board.boot is not None


def rp2040_boot_stage_2() -> bytes:
    """The 256 bytes of micro_rt's RP2040 boot stage 2, CRC included."""
    return encode_boot_stage_2(RP2040_BOOT_STAGE_2.read_bytes())


def boot_header_label(board: Board) -> str:
    """The boot header's parts, in a few words (the image's flash table)."""
    if board.boot is not None and board.boot.kind is BootKind.RP2040_BOOT_STAGE_2:
        return "boot stage 2"
    return "configuration block, IVT, boot data"


def boot_header_contents(board: Board) -> str:
    """What boot_header.c holds, for the project's README."""
    if board.boot is not None and board.boot.kind is BootKind.RP2040_BOOT_STAGE_2:
        return ("micro_rt's boot stage 2, which sets the\n                         SSI up for XIP "
                "reads (the board file's boot.xip)")
    return ("the FlexSPI NOR configuration\n                         block, the image vector table, "
            "the boot data (the board file's boot)")


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
    if board.boot.kind is BootKind.RP2040_BOOT_STAGE_2:
        return _rp2040_source(board, header)
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


def _rp2040_source(board: Board, header: str) -> str:
    raw = rp2040_boot_stage_2()
    rows = ",\n    ".join(", ".join(f"0x{b:02x}" for b in raw[i:i + 12]) for i in range(0, len(raw), 12))
    code = board.memory.region(board.memory.code_region)
    xip = board.boot.xip
    return f"""/* {header}.
 * What the RP2040's boot ROM reads first ({board.path.name}, boot): micro_rt's boot stage 2
 * (cortexm/src/export/rp2040_boot2.S in micro_rt, built), 252 bytes with its CRC-32 in the last
 * word. The ROM copies the 256 bytes to 0x20041f00, checks the CRC and runs them; they set the
 * SSI up for {xip.describe() if xip else 'XIP'}
 * (for the Pico's W25Q-series flash) and enter the vector table at 0x{code.base + len(raw):08x}. board.ld puts
 * this array at 0x{code.base:08x}. */
#include <stdint.h>

__attribute__((section(".mrt_boot.stage2"), used, aligned(4)))
const uint8_t g_mrt_boot_stage_2[{len(raw)}] = {{
    {rows}
}};
"""


def boot_linker_section(board: Board) -> str:
    """board.ld's output section for the boot header ("" without one): the configuration block
    at the code region's base, the IVT and boot data at ivt_offset, the vector table after (an
    i.MX RT); the boot stage 2, the vector table after it (the RP2040)."""
    if not has_boot_header(board):
        return ""
    if board.boot.kind is BootKind.RP2040_BOOT_STAGE_2:
        return f"""    /* What the boot ROM reads first ({BOOT_SOURCE}): the boot stage 2; the vector table at 0x{board.boot.image_offset:x}. */
    .mrt_boot :
    {{
        KEEP(*(.mrt_boot.stage2))
        . = 0x{board.boot.image_offset:x};
    }} > FLASH

"""
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
