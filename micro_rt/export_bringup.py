"""What an exported project leaves to the user before its figures hold on silicon: the core
clock, the flash latency and the flash accelerator or caches `profile --board` assumed, and how
the image gets onto the board and starts.

The export's start-up (cortexm/src/export/startup.c) copies .data, clears .bss and enables the
FPU (CPACR); it sets no clock, no flash latency and no cache, because doing that correctly is
the vendor's clock tree per part. So the core runs at its reset clock with the flash interface
as reset leaves it, and the cycles main.c prints differ from profile's. For each family of the
catalog this names the vendor SDK call that sets what profile assumed (the names are the
vendors' HAL / SDK functions and macros; the figures are the board's from the catalog).

    left_to_user(board, clock_hz, wait_states) -> list[str]   # README.txt's lines
    assumed(board, clock_hz, wait_states) -> str              # the same in one line
"""
from __future__ import annotations

from dataclasses import dataclass


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
                       "nrf_cache_enable(NRF_CACHE) (nrfx), which the start-up does not call",
                       _NORDIC_LOAD)),
    ("MIMXRT1062", Family("BOARD_BootClockRUN() from the MCUXpresso SDK board's clock_config.c "
                         "({mhz} MHz); the FlexSPI timing of the XIP flash is the one the boot ROM "
                         "reads from the FlexSPI configuration block",
                         f"the Cortex-M7 L1 caches: {_M7_CACHES}",
                         "the boot ROM starts a QSPI image only after a FlexSPI configuration "
                         "block (at 0x60000000) and an image vector table (at 0x60001000); board.ld "
                         "puts the vector table at 0x60000000 and the image has neither, so it does "
                         "not boot as is: add the SDK's evkmimxrt1060_flexspi_nor_config.c and "
                         "fsl_flexspi_nor_boot.c and start the code where the SDK's "
                         "MIMXRT1062xxxxx_flexspi_nor.ld does (text at 0x60002400); load through "
                         "the EVK's on-board debug probe (MCUXpresso tools, pyOCD or J-Link)")),
    ("RP2040", Family("the pico-sdk's runtime sets clk_sys to 125 MHz from the crystal "
                      "(clocks_init(); set_sys_clock_khz({khz}, true) for another rate); without "
                      "it the core runs on the ring oscillator it resets to. The XIP flash timing "
                      "is the boot stage 2's (PICO_FLASH_SPI_CLKDIV, the catalog's figure is for 2)",
                      "the XIP cache is on from reset",
                      "the boot ROM runs a flash image only when its first 256 bytes are a boot "
                      "stage 2 with a valid CRC; board.ld puts the vector table there, so the Pico "
                      "does not boot it as is: link the pico-sdk's boot stage 2 (boot2_w25q080 for "
                      "the Pico's W25Q080) at 0x10000000 and the vectors after it; load it as UF2 "
                      "(picotool, or elf2uf2, then the BOOTSEL drive) or over SWD with a debug "
                      "probe and OpenOCD")),
)


def family(mcu: str) -> Family | None:
    return next((f for prefix, f in FAMILIES if mcu.upper().startswith(prefix.upper())), None)


def assumed(board, clock_hz: int, wait_states: int) -> str:
    """What profile assumed and the start-up leaves to the user, in one line."""
    return (f"core clock {clock_hz / 1e6:g} MHz, flash latency {wait_states} wait states, "
            f"the {board.accelerator.kind} on")


def left_to_user(board, clock_hz: int, wait_states: int) -> list[str]:
    """What the exported start-up leaves as reset leaves it, against what profile assumed, and
    the vendor call that sets each (one line each)."""
    mhz = f"{clock_hz / 1e6:g}"
    acc = board.accelerator
    f = family(board.mcu)
    fill = {"ws": wait_states, "mhz": mhz, "khz": clock_hz // 1000}
    lines = [f"core clock: profile assumed {mhz} MHz; the start-up leaves the reset clock"
             + (f": {f.clock.format(**fill)}" if f else " (set it with the vendor's clock set-up)"),
             f"flash latency: profile assumed {wait_states} wait states at {mhz} MHz "
             f"({board.flash.condition}); the start-up leaves the reset latency",
             f"flash accelerator: profile assumed the {acc.kind} on ({acc.description}); the "
             "start-up leaves it as reset does" + (f": {f.accelerator}" if f else "")]
    lines.append(f"loading: {f.load}" if f else "loading: with the board's debug probe and its "
                 "tool (e.g. pyOCD, OpenOCD, J-Link); check what the part's boot ROM needs at the "
                 "start of flash")
    return lines
