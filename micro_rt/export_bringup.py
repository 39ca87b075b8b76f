"""An exported project's bring-up: what its start-up sets so the image runs as `profile
--board` assumed (the flash latency, prefetch and the flash accelerator or caches), what it
leaves to the user (the core clock, loading the image), and the vendor's calls for each.

The export's start-up (cortexm/src/export/startup.c) copies .data, clears .bss, enables the FPU
(CPACR), writes the board's flash-control registers (the board file's `peripherals.flash_control`
records, as mrt_board.h lists them: the wait states profile assumed at the board's clock, the
prefetch the accelerator model has, every cache enable on) and on a Cortex-M7 enables the L1
caches. It sets no clock: that is the vendor's clock tree per part, so the core runs at its reset
clock (with more wait states than that clock needs, which is safe). For each family of the
catalog this names the vendor SDK call that does the same or sets what is left (the names are
the vendors' HAL / SDK functions and macros; the figures are the board's from the catalog).

    flash_writes(board, wait_states) -> list[FlashWrite]       # the register writes
    enables_l1_caches(board) -> bool                           # and the Cortex-M7's L1 caches
    board_header(board, clock_hz, wait_states) -> str          # mrt_board.h
    set_by_startup(board, clock_hz, wait_states) -> list[str]  # README.txt's lines
    left_to_user(board, clock_hz, wait_states) -> list[str]
    assumed(board, clock_hz, wait_states) -> str               # what profile assumed, one line
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass

from .cortexm.board_records import BitField, FlashControlField, FlashControlRegister
from .errors import InputError


@dataclass(frozen=True)
class Family:
    """A board family's bring-up, in the vendor's calls."""
    clock: str          # how to reach the profiled clock and flash latency ({ws}, {mhz})
    accelerator: str    # how to turn the flash accelerator / caches on
    load: str           # how the image gets onto the board, and what it lacks to boot


_ST_CLOCK = ("SystemClock_Config() as STM32CubeMX writes it for the board: {voltage}"
             "HAL_RCC_OscConfig() for the PLL, then HAL_RCC_ClockConfig(&clk, FLASH_LATENCY_{ws}), "
             "which sets the flash latency before it raises the clock")
_ST_LOAD = ("the on-board ST-LINK, with STM32CubeProgrammer or OpenOCD; the vector table is at the "
            "start of flash, where the part boots from")
_ST_ART = ("HAL_Init() turns the ART's prefetch, instruction cache and data cache on when "
           "PREFETCH_ENABLE, INSTRUCTION_CACHE_ENABLE and DATA_CACHE_ENABLE are 1 in {conf} "
           "(__HAL_FLASH_PREFETCH_BUFFER_ENABLE(), __HAL_FLASH_INSTRUCTION_CACHE_ENABLE(), "
           "__HAL_FLASH_DATA_CACHE_ENABLE())")
_M7_CACHES = "SCB_EnableICache() and SCB_EnableDCache() (CMSIS core_cm7.h)"
_NORDIC_LOAD = ("the DK's on-board J-Link: nrfjprog with a hex file (arm-none-eabi-objcopy -O "
                "ihex model.elf model.hex), or J-Link / pyOCD with the ELF")

# MCU part-number prefix -> family (the first that matches).
FAMILIES: tuple[tuple[str, Family], ...] = (
    ("STM32F4", Family(_ST_CLOCK.replace("{voltage}", "voltage scale 1 and above 168 MHz the "
                                         "over-drive (HAL_PWREx_EnableOverDrive()), "),
                       _ST_ART.replace("{conf}", "stm32f4xx_hal_conf.h"), _ST_LOAD)),
    ("STM32L4", Family(_ST_CLOCK.replace("{voltage}", "range 1 boost mode above 80 MHz "
                                         "(HAL_PWREx_ControlVoltageScaling(PWR_REGULATOR_VOLTAGE_"
                                         "SCALE1_BOOST)), "),
                       _ST_ART.replace("{conf}", "stm32l4xx_hal_conf.h"), _ST_LOAD)),
    ("STM32G0", Family(_ST_CLOCK.replace("{voltage}", ""),
                       "__HAL_FLASH_PREFETCH_BUFFER_ENABLE() and "
                       "__HAL_FLASH_INSTRUCTION_CACHE_ENABLE() (HAL_Init() applies PREFETCH_ENABLE "
                       "and INSTRUCTION_CACHE_ENABLE of stm32g0xx_hal_conf.h)", _ST_LOAD)),
    ("STM32F7", Family(_ST_CLOCK.replace("{voltage}", "above 180 MHz the over-drive "
                                         "(HAL_PWREx_EnableOverDrive()), "),
                       f"the Cortex-M7 L1 caches: {_M7_CACHES}; the ART (__HAL_FLASH_ART_ENABLE(), "
                       "HAL_Init() with ART_ACCLERATOR_ENABLE) serves only the ITCM flash alias, "
                       "not the AXIM address the image is linked at", _ST_LOAD)),
    ("STM32H7", Family(_ST_CLOCK.replace("{voltage}", "the supply and voltage scale of the "
                                         "flash table (HAL_PWREx_ConfigSupply(), then "
                                         "__HAL_PWR_VOLTAGESCALING_CONFIG()), "),
                       f"the Cortex-M7 L1 caches: {_M7_CACHES}", _ST_LOAD)),
    ("STM32U5", Family(_ST_CLOCK.replace("{voltage}", "voltage range 1 "
                                         "(HAL_PWREx_ControlVoltageScaling(PWR_REGULATOR_VOLTAGE_"
                                         "SCALE1)), "),
                       "HAL_ICACHE_Enable() (the ICACHE; STM32CubeMX's MX_ICACHE_Init() also "
                       "sets its associativity with HAL_ICACHE_ConfigAssociativityMode())", _ST_LOAD)),
    ("R7FA6M4", Family("the Renesas FSP's SystemInit(), whose bsp_clock_init() sets the clocks "
                    "configured for the board (bsp_clock_cfg.h), the code-flash wait cycles for "
                    "them ({ws}) and the SRAM wait cycle above 100 MHz",
                    "R_BSP_FlashCacheEnable() (the FCACHE; bsp_clock_init() calls it)",
                    "the EK-RA6M4's on-board J-Link, with SEGGER J-Link tools or Renesas Flash "
                    "Programmer; the image does not write the option-setting memory (OFS), which "
                    "keeps what the part holds")),
    ("nRF52840", Family("nothing for the clock: the nRF52840 core runs at 64 MHz from reset, and "
                        "its flash wait states are fixed by the part",
                        "the NVMC instruction cache is off after reset (ICACHECNF = 0): "
                        "nrf_nvmc_icache_config_set(NRF_NVMC, NRF_NVMC_ICACHE_ENABLE) (nrfx)",
                        _NORDIC_LOAD)),
    ("nRF5340", Family("the application core resets at 64 MHz (HFCLKCTRL Div2): for {mhz} MHz "
                       "nrfx_clock_divider_set(NRF_CLOCK_DOMAIN_HFCLK, NRF_CLOCK_HFCLK_DIV_1) "
                       "(nrfx); the flash wait states are fixed by the part",
                       "nrf_cache_enable(NRF_CACHE) (nrfx)",
                       _NORDIC_LOAD)),
    ("MIMXRT1062", Family("BOARD_BootClockRUN() from the MCUXpresso SDK board's clock_config.c "
                         "({mhz} MHz); the FlexSPI timing of the XIP flash is the one the boot ROM "
                         "reads from the FlexSPI configuration block",
                         f"the Cortex-M7 L1 caches: {_M7_CACHES}",
                         "the boot ROM starts a QSPI image only after a FlexSPI configuration "
                         "block (at 0x60000000) and an image vector table (at 0x60001000): "
                         "boot_header.c holds both and the boot data, from the board file's record "
                         "of the EVK's QSPI NOR flash (for another flash, change its configuration "
                         "block), and board.ld puts the vector table at 0x60002000 as the SDK's "
                         "linker script does; load through the EVK's on-board debug probe "
                         "(MCUXpresso tools, pyOCD or J-Link)")),
    ("RP2040", Family("the pico-sdk's runtime sets clk_sys to 125 MHz from the crystal "
                      "(clocks_init(); set_sys_clock_khz({khz}, true) for another rate); without "
                      "it the core runs on the ring oscillator it resets to. The XIP flash timing "
                      "is the boot stage 2's (PICO_FLASH_SPI_CLKDIV, the catalog's figure is for 2)",
                      "the XIP cache is on from reset",
                      "the boot ROM runs a flash image only when its first 256 bytes are a boot "
                      "stage 2 with a valid CRC: boot_header.c holds micro_rt's, for the Pico's "
                      "W25Q-series flash (quad XIP reads at clk_sys / 2, the board file's boot.xip), "
                      "and board.ld puts it at 0x10000000 and the vector table at 0x10000100 (for "
                      "another flash chip, put the pico-sdk's boot stage 2 for it there instead); "
                      "load the image as UF2 (picotool, or elf2uf2, then the BOOTSEL drive) or over "
                      "SWD with a debug probe and OpenOCD")),
)


def family(mcu: str) -> Family | None:
    return next((f for prefix, f in FAMILIES if mcu.upper().startswith(prefix.upper())), None)


def assumed(board, clock_hz: int, wait_states: int) -> str:
    """What profile assumed of the clock and the flash interface, in one line."""
    return (f"core clock {clock_hz / 1e6:g} MHz, flash latency {wait_states} wait states, "
            f"the {board.accelerator.kind} on")


# ---- the flash-control register writes ------------------------------------------------------
def _bits(field: BitField) -> str:
    last = field.lsb + field.width - 1
    return f"bit {field.lsb}" if field.width == 1 else f"bits {field.lsb}-{last}"


@dataclass(frozen=True)
class FlashWrite:
    """One read-modify-write of a flash-control register by the exported start-up: each field
    set to its value, the register's other bits kept."""
    register: FlashControlRegister
    fields: tuple[tuple[BitField, int], ...]

    @property
    def mask(self) -> int:
        return sum(f.mask for f, _ in self.fields)

    @property
    def value(self) -> int:
        return sum(v << f.lsb for f, v in self.fields)

    def settings(self, bits: bool = True, latency: bool = True) -> list[str]:
        """What each field is set to: "latency 5 (bits 0-3)", "prefetch on (bit 8)"."""
        out = []
        for f, v in self.fields:
            is_latency = f.meaning is FlashControlField.LATENCY
            if is_latency and not latency:
                continue
            shown = str(v) if is_latency else ("on" if v else "off")
            out.append(f"{f.meaning.value} {shown}" + (f" ({_bits(f)})" if bits else ""))
        return out


def flash_writes(board, wait_states: int) -> list[FlashWrite]:
    """The writes that take the board's flash-control registers from reset to the interface
    profile assumed: `wait_states` in the latency field, prefetch as the board's accelerator
    model has it, every cache enable on. Registers that set the latency come first (a higher
    latency is safe at any clock, so it holds before anything else changes)."""
    wanted = {FlashControlField.LATENCY: wait_states,
              FlashControlField.PREFETCH: int(board.accelerator.prefetch),
              FlashControlField.ICACHE: 1, FlashControlField.DCACHE: 1, FlashControlField.CACHE: 1}
    writes = []
    for register in board.peripherals.flash_control:
        latency = register.field(FlashControlField.LATENCY)
        if latency is not None and wait_states >> latency.width:
            raise InputError(f"board {board.name}: {wait_states} flash wait states do not fit the "
                             f"{latency.width}-bit latency field of {register.name} "
                             f"(peripherals.flash_control in {board.path})")
        writes.append(FlashWrite(register, tuple((f, wanted[f.meaning]) for f in register.fields)))
    return sorted(writes, key=lambda w: w.register.field(FlashControlField.LATENCY) is None)


def enables_l1_caches(board) -> bool:
    """The start-up enables the Cortex-M7's own L1 caches (the board's accelerator is them)."""
    return board.core == "cortex-m7" and board.accelerator.is_core_l1


def _comment(text: str, indent: str = " * ") -> list[str]:
    return textwrap.wrap(text, 96, initial_indent=indent, subsequent_indent=indent,
                         break_on_hyphens=False)


def board_header(board, clock_hz: int, wait_states: int) -> str:
    """mrt_board.h: the flash-control register writes startup.c makes, and whether it enables
    the Cortex-M7 L1 caches."""
    writes = flash_writes(board, wait_states)
    l1 = enables_l1_caches(board)
    intro = (f"Generated by micro-rt export for board {board.name} ({board.vendor} {board.mcu}, "
             f"{board.core}) from the board catalog ({board.path.name}): the flash interface "
             f"`micro-rt profile --board {board.name}` assumed at {clock_hz / 1e6:g} MHz, which "
             "startup.c sets from reset. Each write sets the register's mask bits to value at the "
             "register's width and keeps its other bits; the latency comes first. The core clock "
             "is left to you (README.txt).")
    lines = ["/*", *_comment(intro), " */",
             "#ifndef MRT_BOARD_H",
             "#define MRT_BOARD_H",
             "",
             "#include <stdint.h>",
             "",
             "typedef struct {",
             "    uint32_t address;",
             "    uint32_t mask;",
             "    uint32_t value;",
             "    uint32_t bytes;                /* the register's width: 1, 2 or 4 */",
             "} mrt_register_write_t;",
             ""]
    for w in writes:
        r = w.register
        text = (f"{r.name} at 0x{r.address:08x} ({8 * r.size_bytes} bits, reset "
                f"0x{r.reset:0{2 * r.size_bytes}x}): " + ", ".join(w.settings()) + "."
                + (f" The board file's note: {r.note}." if r.note else ""))
        lines += ["/*", *_comment(text), " */"]
    rows = [f"    {{0x{w.register.address:08x}u, 0x{w.mask:08x}u, 0x{w.value:08x}u, "
            f"{w.register.size_bytes}u}}," for w in writes]
    lines.append("#define MRT_FLASH_WRITES" + (" \\" if rows else ""))
    lines += [row + (" \\" if i < len(rows) - 1 else "") for i, row in enumerate(rows)]
    lines += [f"#define MRT_N_FLASH_WRITES {len(writes)}u",
              "",
              "/* The Cortex-M7 L1 caches, which profile assumed on: startup.c invalidates and "
              "enables them */" if l1 else "/* No Cortex-M7 L1 caches to enable on this board */",
              f"#define MRT_L1_CACHES {int(l1)}",
              "",
              "#endif",
              ""]
    return "\n".join(lines)


# ---- README.txt's lines ---------------------------------------------------------------------
def set_by_startup(board, clock_hz: int, wait_states: int) -> list[str]:
    """What the exported start-up sets as profile assumed, and the vendor call that does the
    same (one line each)."""
    mhz = f"{clock_hz / 1e6:g}"
    acc = board.accelerator
    f = family(board.mcu)
    writes = flash_writes(board, wait_states)
    latency = board.peripherals.flash_field(FlashControlField.LATENCY)
    line = (f"flash latency: profile assumed {wait_states} wait states at {mhz} MHz "
            f"({board.flash.condition}); ")
    if latency is not None:
        register, field = latency
        line += (f"the start-up writes {wait_states} to {register.name}'s latency field "
                 f"({_bits(field)}), a latency also safe at the slower reset clock")
    else:
        line += ("the board file names no latency register (the part fixes the flash timing, or "
                 "its boot code sets it): the start-up writes none")
    enables = [f"{w.register.name} " + ", ".join(w.settings(bits=False, latency=False))
               for w in writes if w.settings(latency=False)]
    parts = ["writes " + "; ".join(enables)] if enables else []
    if enables_l1_caches(board):
        parts.append("invalidates and enables the Cortex-M7 L1 caches (ICIALLU, DCISW by set and "
                     "way, then CCR.IC and CCR.DC)")
    acc_line = (f"flash accelerator: profile assumed the {acc.kind} on ({acc.description}); the "
                "start-up " + (" and ".join(parts) if parts else
                               "has no register of it to write (the board file names none)")
                + (f"; in the vendor's SDK: {f.accelerator}" if f else ""))
    return [line, acc_line]


def left_to_user(board, clock_hz: int, wait_states: int) -> list[str]:
    """What the exported start-up leaves as reset leaves it, against what profile assumed, and
    the vendor call that sets each (one line each): the core clock and loading the image."""
    mhz = f"{clock_hz / 1e6:g}"
    f = family(board.mcu)
    fill = {"ws": wait_states, "mhz": mhz, "khz": clock_hz // 1000}
    lines = [f"core clock: profile assumed {mhz} MHz; the start-up leaves the reset clock"
             + (f": {f.clock.format(**fill)}" if f else " (set it with the vendor's clock set-up)")]
    lines.append(f"loading: {f.load}" if f else "loading: with the board's debug probe and its "
                 "tool (e.g. pyOCD, OpenOCD, J-Link); check what the part's boot ROM needs at the "
                 "start of flash")
    return lines
