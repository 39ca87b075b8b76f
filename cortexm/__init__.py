"""The virtual Cortex-M: Unicorn machine, ELF loading, cycle model and the ARM kernels."""
