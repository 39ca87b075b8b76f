/* micro_rt's boot stage 2 for the RP2040 with a Winbond W25Q-series QSPI flash (the Raspberry
 * Pi Pico's), the first 256 bytes of an exported Pico image.
 *
 * The RP2040's boot ROM copies the first 256 bytes of flash to the top of SRAM (0x20041f00),
 * checks their CRC-32 (the last 4 bytes) and branches here with lr = 0. This code sets the
 * SSI up for execute-in-place with quad I/O fast reads (EBh) in continuous-read mode, then
 * enters the image through its vector table at 0x10000100 (VTOR, MSP, reset handler). Called
 * with lr != 0 (from RAM, by a program), it returns instead.
 *
 * The sequence is the one the RP2040 datasheet's SSI chapter and the pico-sdk's
 * boot2_w25q080.S describe (NOTICE): pads for a fast SCLK, the clock divider, the status
 * register's QE bit set if clear, one EBh read whose mode bits (M7-4 = 1010) keep the flash
 * in continuous-read mode, then XIP reads that send only the address and the mode bits.
 * Its clock divider, mode bits and wait cycles are the ones the board file's flash timing is
 * for (cortexm/board_data/raspberry-pi-pico.json, boot.xip; tests/test_rp2040_boot.py
 * holds them equal). Register offsets: the pico-sdk's hardware/regs/ssi.h and pads_qspi.h.
 *
 * Built into cortexm/firmware/rp2040-boot2.bin by cortexm/src/Makefile; `micro-rt export`
 * pads it to 252 bytes and appends the CRC (micro_rt/export_boot.py). It must stay
 * position-independent (the ROM runs it from SRAM) and at most 252 bytes. */
    .syntax unified
    .cpu cortex-m0plus
    .thumb

    .equ PADS_QSPI,            0x40020000
    .equ PADS_SCLK,            0x04
    .equ PADS_SD0,             0x08
    .equ PADS_SD1,             0x0c
    .equ PADS_SD2,             0x10
    .equ PADS_SD3,             0x14
    .equ PADS_SCLK_8MA_FAST,   (2 << 4) | 1        /* DRIVE 8 mA, SLEWFAST */
    .equ PADS_SCHMITT,         0x02

    .equ SSI,                  0x18000000
    .equ SSI_CTRLR0,           0x00
    .equ SSI_CTRLR1,           0x04
    .equ SSI_SSIENR,           0x08
    .equ SSI_BAUDR,            0x14
    .equ SSI_SR,               0x28
    .equ SSI_DR0,              0x60
    .equ SSI_RX_SAMPLE_DLY,    0xf0
    .equ SSI_SPI_CTRLR0,       0xf4
    .equ SR_BUSY,              0x01
    .equ SR_TFE,               0x04

    .equ CLOCK_DIVIDER,        2                  /* SCLK = clk_sys / 2 */
    .equ WAIT_CYCLES,          4                  /* W25Q EBh: 4 dummy clocks after the mode bits */
    .equ CONTINUOUS_READ,      0xa0               /* mode bits M7-4 = 1010: no command next time */
    .equ ADDR_L,               8                  /* 24 address + 8 mode bits, in 4-bit units */

    /* CTRLR0: 8-bit standard SPI frames, transmit and receive (status register commands) */
    .equ CTRLR0_SPI_8BIT,      (7 << 16)
    /* CTRLR0: quad frames (SPI_FRF 2), 32-bit data (DFS_32 31), EEPROM read (TMOD 3) */
    .equ CTRLR0_QUAD_READ,     (2 << 21) | (31 << 16) | (3 << 8)
    /* SPI_CTRLR0 for the first read: an 8-bit EBh command in serial, the address in quad (1C2A) */
    .equ SPI_CTRLR0_ENTER,     (WAIT_CYCLES << 11) | (2 << 8) | (ADDR_L << 2) | 1
    /* SPI_CTRLR0 for XIP: no command, the mode bits after the address, all in quad (2C2A) */
    .equ SPI_CTRLR0_XIP,       (CONTINUOUS_READ << 24) | (WAIT_CYCLES << 11) | (ADDR_L << 2) | 2

    .equ CMD_WRITE_ENABLE,     0x06
    .equ CMD_READ_STATUS,      0x05
    .equ CMD_READ_STATUS2,     0x35
    .equ CMD_WRITE_STATUS,     0x01               /* SR1 then SR2 (the W25Q080 has no 31h) */
    .equ CMD_QUAD_IO_READ,     0xeb
    .equ SR2_QE,               0x02

    .equ IMAGE_VECTORS,        0x10000100
    .equ VTOR,                 0xe000ed08

    .section .text.mrt_boot2, "ax"
    .global mrt_boot2
    .type mrt_boot2, %function
    .thumb_func
mrt_boot2:
    push {lr}

    /* SCLK at 8 mA with a fast slew; the data pads' input Schmitt triggers off (less delay) */
    ldr r3, =PADS_QSPI
    movs r0, #PADS_SCLK_8MA_FAST
    str r0, [r3, #PADS_SCLK]
    ldr r0, [r3, #PADS_SD0]
    movs r1, #PADS_SCHMITT
    bics r0, r1
    str r0, [r3, #PADS_SD0]
    str r0, [r3, #PADS_SD1]
    str r0, [r3, #PADS_SD2]
    str r0, [r3, #PADS_SD3]

    ldr r3, =SSI
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]           /* the SSI takes its configuration only when disabled */
    movs r1, #CLOCK_DIVIDER
    str r1, [r3, #SSI_BAUDR]
    movs r1, #1                         /* sample the data one clk_sys later (for divider 2) */
    movs r2, #SSI_RX_SAMPLE_DLY
    str r1, [r3, r2]

    /* Quad I/O needs SR2's QE bit; it is non-volatile, so write it only when it is clear */
    ldr r1, =CTRLR0_SPI_8BIT
    str r1, [r3, #SSI_CTRLR0]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]
    movs r0, #CMD_READ_STATUS2
    bl read_status
    movs r2, #SR2_QE
    tst r0, r2
    bne quad_enabled
    movs r1, #CMD_WRITE_ENABLE
    str r1, [r3, #SSI_DR0]
    bl wait_idle
    ldr r1, [r3, #SSI_DR0]
    movs r1, #CMD_WRITE_STATUS
    str r1, [r3, #SSI_DR0]
    movs r1, #0
    str r1, [r3, #SSI_DR0]              /* SR1: no block protection */
    str r2, [r3, #SSI_DR0]              /* SR2: QE */
    bl wait_idle
    ldr r1, [r3, #SSI_DR0]
    ldr r1, [r3, #SSI_DR0]
    ldr r1, [r3, #SSI_DR0]
write_pending:
    movs r0, #CMD_READ_STATUS
    bl read_status
    movs r1, #SR_BUSY                   /* SR1's BUSY: the status write is still going on */
    tst r0, r1
    bne write_pending
quad_enabled:

    /* One EBh read with the continuous-read mode bits: afterwards the flash expects no command */
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]
    ldr r1, =CTRLR0_QUAD_READ
    str r1, [r3, #SSI_CTRLR0]
    movs r1, #0                         /* NDF 0: one 32-bit frame */
    str r1, [r3, #SSI_CTRLR1]
    ldr r1, =SPI_CTRLR0_ENTER
    ldr r2, =(SSI + SSI_SPI_CTRLR0)
    str r1, [r2]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]
    movs r1, #CMD_QUAD_IO_READ
    str r1, [r3, #SSI_DR0]
    movs r1, #CONTINUOUS_READ           /* address 0, then the mode bits */
    str r1, [r3, #SSI_DR0]
    bl wait_idle

    /* XIP: a bus read of the window sends its address and the mode bits, in quad */
    movs r1, #0
    str r1, [r3, #SSI_SSIENR]
    ldr r1, =SPI_CTRLR0_XIP
    str r1, [r2]
    movs r1, #1
    str r1, [r3, #SSI_SSIENR]

    pop {r0}
    cmp r0, #0
    beq enter_image
    bx r0                               /* called by a program: back to it */
enter_image:
    ldr r0, =IMAGE_VECTORS
    ldr r1, =VTOR
    str r0, [r1]
    ldmia r0, {r0, r1}
    msr msp, r0
    bx r1

/* Until the SSI's transmit FIFO is empty and the transfer done. Uses r0, r1. */
    .thumb_func
wait_idle:
    ldr r1, [r3, #SSI_SR]
    movs r0, #SR_TFE
    tst r1, r0
    beq wait_idle
    movs r0, #SR_BUSY
    tst r1, r0
    bne wait_idle
    bx lr

/* The status register whose read command is in r0, returned in r0: the command and one more
 * frame out, two frames back (the second holds the register). Uses r0, r1. */
    .thumb_func
read_status:
    push {lr}
    str r0, [r3, #SSI_DR0]
    str r0, [r3, #SSI_DR0]
    bl wait_idle
    ldr r0, [r3, #SSI_DR0]
    ldr r0, [r3, #SSI_DR0]
    pop {pc}

    .ltorg
    .size mrt_boot2, . - mrt_boot2
