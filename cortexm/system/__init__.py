"""The virtual MCU as a system: a firmware image run from its reset vector.

The one machine every image runs on is here (mcu.py): a model's image (`cortexm.machine.
VirtualMCU`, what `profile` runs) and what a user flashes (machine.py, `emulate`), whose ELF's
vector table gives the initial stack pointer and the reset handler, the board (or a generic map)
the memory. The parts Unicorn lacks are modelled here:

    firmware.py      reading and checking the ELF (FirmwareError names what is wrong)
    address_map.py   the regions a run has (a board's, or a generic one holding the image)
    clock.py         the cumulative cycle count: what DWT->CYCCNT reads at any instruction
    exceptions.py    exception entry and return, priorities, fault status (CFSR/HFSR)
    scs.py           the System Control Space: SCB, NVIC, SysTick, DWT, ITM, FPU registers
    semihosting.py   Arm semihosting as newlib's rdimon start-up uses it
    peripherals.py   a board's console UART and flash-control registers; other MMIO
    memory_state.py  the flash interface as the firmware's register writes left it
    heap.py          malloc / free / realloc / _sbrk watched at their entries
    profile.py       a flat per-function profile from the block edges
    mcu.py           the machine: the engine, hooks, cycle model, clock, exceptions and SCS
    machine.py       `emulate`'s front of it: all of the above at reset, for one ELF file
    run.py           the run itself (`emulate`)
    report.py        the run's record
"""
