/* micro_rt's device runtime (mrt_runtime.h): walks a plan of kernel calls.
 * Its code goes to sections of its own that firmware.ld places after everything else (the
 * run-time data checks too), so changing it moves no kernel (cycle figures depend on code
 * addresses). */
#include "mrt_runtime.h"

__attribute__((noipa, used, section(".mrt_runtime.boundary"))) void mrt_op_boundary(uint32_t index, uint32_t phase, int32_t status)
{
    (void)index;
    (void)phase;
    (void)status;
    __asm volatile("" ::: "memory");
}

__attribute__((section(".mrt_runtime.invoke"))) int32_t mrt_invoke(const mrt_plan_t *plan)
{
    uint32_t i = 0;
    while (i < plan->n_entries) {
        const mrt_entry_t *entry = &plan->entries[i];
        const uint32_t opcode = entry->control >> 8;
        if (opcode == MRT_PLAN_JUMP_IF_FALSE) {
            i = *(const volatile uint8_t *)entry->args[0] ? i + 1 : entry->args[1];
            continue;
        }
        if (opcode == MRT_PLAN_JUMP) {
            i = entry->args[1];
            continue;
        }
        if (opcode == MRT_PLAN_STORE) {
            *(volatile uint8_t *)entry->args[0] = (uint8_t)entry->args[1];
            i++;
            continue;
        }
        if (opcode != MRT_PLAN_CALL) {
            mrt_op_boundary(i, MRT_OP_MARK, 0);
            i++;
            continue;
        }
        /* The words are read before the operator begins: what it costs is its own. */
        uint32_t a[MRT_PLAN_MAX_ARGS];
        for (uint32_t k = 0; k < MRT_PLAN_MAX_ARGS; k++) {
            a[k] = entry->args[k];
        }
        mrt_kernel_fn kernel = entry->kernel;
        mrt_op_boundary(i, MRT_OP_BEGINS, 0);
        int32_t status = kernel(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12],
                                a[13], a[14], a[15]);
        mrt_op_boundary(i, MRT_OP_ENDED, status);
        if (status != 0) {
            if (entry->control & MRT_PLAN_CHECKED) {
                return (int32_t)i + 1;
            }
            if (entry->control & MRT_PLAN_ENDS_RUN) {
                return 0;
            }
        }
        i++;
    }
    return 0;
}

/* An operator with no C kernel here (a custom operator registered in Python, say): the emulator
 * stops at the breakpoint, runs the operator's host kernel on the arena and puts its status in
 * r0 (micro_rt.cortexm.whole_invoke). It lies in the runtime's code, so the profile counts its
 * few instructions as the runtime's and the operator as not counted. A device has no host:
 * `micro-rt export` refuses a plan with such an entry. */
__attribute__((naked, used, section(".mrt_runtime.host"))) int32_t mrt_host_op(uint32_t entry)
{
    __asm volatile("bkpt #3\n\tbx lr");
}

/* The emulator image's entry point, its reset vector: one inference of the plan at
 * mrt_boot_plan, then BKPT #4 with the status in r0, where the emulator takes the result. The
 * image is the firmware with a plan written in: micro_rt writes the plan's address into
 * mrt_boot_plan and the stack's top into the vector table, as a linker would resolve them (an
 * exported project links its plan and stack itself, export/main.c). */
extern const mrt_plan_t *const volatile mrt_boot_plan;

__attribute__((noreturn, used, section(".mrt_runtime.start"))) void mrt_start(void)
{
    register int32_t status __asm("r0") = mrt_invoke(mrt_boot_plan);
    for (;;) {
        __asm volatile("bkpt #4" ::"r"(status));
    }
}

__attribute__((used, section(".mrt_runtime.zboot_plan"))) const mrt_plan_t *const volatile mrt_boot_plan = 0;
