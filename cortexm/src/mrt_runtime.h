/* micro_rt's device runtime: a whole inference as one call, walking a plan of kernel calls.
 *
 * The plan (written by micro_rt.cortexm.firmware_plan) is an array of entries, each a kernel
 * and the 32-bit argument words it is called with (AAPCS: the first four in r0-r3, the rest on
 * the stack; unused words are zero). Pointer words point into the tensor arena, the model's
 * constants, or the plan's argument structs. mrt_invoke calls the kernels in order and stops
 * at the first checked one that returns nonzero. */
#ifndef MRT_RUNTIME_H
#define MRT_RUNTIME_H

#include <stdint.h>

#define MRT_PLAN_MAX_ARGS 16

/* Every kernel is called through this type. A kernel taking fewer words ignores the rest:
 * under AAPCS the caller sets up and pops the stacked words, so the extra ones are harmless.
 * Floats travel as words (the firmware's soft-float calling convention, -mfloat-abi=soft or
 * softfp). */
typedef int32_t (*mrt_kernel_fn)(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                 uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                 uint32_t, uint32_t);

/* An entry's control word: its opcode << 8, and for a call MRT_PLAN_CHECKED when the kernel
 * returns a status (nonzero stops the invoke; without it the return value means nothing, e.g. a
 * void kernel), MRT_PLAN_ENDS_RUN when a nonzero return ends the invoke there without an error,
 * as TFLM's kTfLiteAbort does (CIRCULAR_BUFFER until its period comes round). Control flow (IF, WHILE) is made of jumps: JUMP_IF_FALSE goes to entry args[1]
 * when the byte at args[0] is zero, JUMP always; ENTER / LEAVE only tell the profiler that a
 * control-flow operator starts / ends, NOTE that an operator with no work of its own ran
 * (VAR_HANDLE). STORE writes the byte args[1] at args[0] (CALL_ONCE: its init subgraph has
 * run; the byte is what the JUMP_IF_FALSE before the subgraph reads). */
#define MRT_PLAN_CALL          0u
#define MRT_PLAN_JUMP_IF_FALSE 1u
#define MRT_PLAN_JUMP          2u
#define MRT_PLAN_ENTER         3u
#define MRT_PLAN_LEAVE         4u
#define MRT_PLAN_STORE         5u
#define MRT_PLAN_NOTE          6u
#define MRT_PLAN_CHECKED       1u
#define MRT_PLAN_ENDS_RUN      2u

typedef struct {
    mrt_kernel_fn kernel;              /* NULL for the other opcodes */
    uint32_t control;
    uint32_t args[MRT_PLAN_MAX_ARGS];
} mrt_entry_t;

typedef struct {
    uint32_t n_entries;
    const mrt_entry_t *entries;
} mrt_plan_t;

#define MRT_OP_BEGINS 0u   /* mrt_op_boundary's phase: entry `index` is about to be called */
#define MRT_OP_ENDED  1u   /* entry `index` returned `status` */
#define MRT_OP_MARK   2u   /* entry `index` is an ENTER, LEAVE or NOTE */

/* Runs every entry in order. Returns 0 when no checked entry returned nonzero, else the failing
 * entry's index + 1 (mrt_op_boundary saw its status). */
int32_t mrt_invoke(const mrt_plan_t *plan);

/* Called before and after every entry; does nothing (noipa: the call and its arguments stay). A profiler (the emulator, or a board's
 * DWT cycle counter) attributes what runs between MRT_OP_BEGINS and MRT_OP_ENDED to the entry,
 * the rest to the runtime. */
void mrt_op_boundary(uint32_t index, uint32_t phase, int32_t status);

/* A plan entry micro_rt's emulator runs on the host (BKPT #3, `entry` in r0): the status the
 * host kernel returned comes back in r0. Only the emulator can run it. */
int32_t mrt_host_op(uint32_t entry);

/* The emulator image's reset vector: runs the plan at mrt_boot_plan once and stops at BKPT #4,
 * the status in r0. */
void mrt_start(void);

#endif
