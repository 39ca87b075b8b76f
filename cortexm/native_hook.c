/* micro_rt virtual MCU: native Unicorn hooks, a plain C library loaded by cortexm/native.py with
 * ctypes (built by setup.py at install time, or at first use as a fallback).
 *
 * Self-contained: no Unicorn header needed. The two Unicorn entry points used from inside a hook
 * (uc_emu_stop, uc_reg_read) are handed in as function pointers by Python.
 *
 * Block hook: counts executed translation blocks per *edge* (previous block -> this block), so
 * that Python can derive exact instruction counts (sum of count x instructions of the block) and
 * know which control transfers were taken branches (edge target != previous block end). Also
 * enforces an instruction budget: each block of `size` bytes holds at least size/4 instructions,
 * so once the executed bytes exceed 4 x budget the budget is certainly exhausted -> uc_emu_stop.
 *
 * Memory hook (optional, read+write): records accesses that are not naturally aligned (word
 * accesses not 4-aligned, halfword not 2-aligned) per PC, and models a small direct-mapped
 * data cache / line buffer in front of the flash for data loads from flash (weights).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Which source this library was built from (a hash of this file, set by the build), so that an
 * installed library older than an edited source is noticed and not used. */
#ifndef MRT_HOOK_SOURCE
#define MRT_HOOK_SOURCE "unknown"
#endif
const char *mrt_hook_source(void) { return MRT_HOOK_SOURCE; }

typedef int (*emu_stop_fn)(void *uc);
typedef int (*reg_read_fn)(void *uc, int regid, void *value);

typedef struct {
    uint32_t prev, prev_size, cur, cur_size;
    uint64_t count;
    int32_t chk;                 /* index into the block-start check table, or -1 */
    uint32_t pad;
} edge_t;

/* static alignment check: address = konst + sum coef[i] * reg[i] (registers read when the
 * translation block starts / when the instruction is about to execute) */
typedef struct {
    uint32_t pc, konst;
    int32_t reg[3];
    uint32_t coef[3];
    uint32_t nterms, mask, size, type;
} check_t;

typedef struct {
    uint32_t key, first, count, used;
} sent_t;

typedef struct {
    sent_t *tab;
    uint32_t cap;
    check_t *checks;
    uint32_t nchecks;
} ctable_t;

typedef struct {
    uint32_t pc, addr, size, type;   /* first unaligned access seen at this pc */
    uint64_t count;
} unal_t;

typedef struct {
    /* edges */
    edge_t *tab;
    uint32_t cap, n;
    uint32_t prev, prev_size;
    uint32_t last_idx;
    /* budget */
    uint64_t bytes, byte_budget;
    int32_t budget_hit;
    int32_t pc_reg;
    emu_stop_fn emu_stop;
    reg_read_fn reg_read;
    /* memory hook */
    int32_t check_align;
    uint32_t flash_lo, flash_hi;
    uint32_t line_shift;
    uint32_t dc_mask;            /* number of lines - 1 (power of two); 0 lines -> 1-line buffer */
    uint32_t *dc_tags;
    uint64_t flash_reads, flash_read_misses;
    unal_t *unal;
    uint32_t unal_cap, unal_n;
    uint64_t unal_total, unal_dropped;
    ctable_t blk, code;          /* static checks by block start / by instruction (code hook) */
    uint64_t checks_run;
} mrt_state;

static inline uint32_t hash1(uint32_t a) { uint32_t h = a * 0x9E3779B1u; return h ^ (h >> 15); }

static int32_t ctable_find(const ctable_t *t, uint32_t key) {
    if (!t->cap) return -1;
    uint32_t mask = t->cap - 1, j = hash1(key) & mask;
    while (t->tab[j].used) {
        if (t->tab[j].key == key) return (int32_t)j;
        j = (j + 1) & mask;
    }
    return -1;
}

static void record_unaligned(mrt_state *s, uint32_t pc, uint32_t a, uint32_t size, uint32_t type) {
    s->unal_total++;
    uint32_t i;
    for (i = 0; i < s->unal_n; i++) {
        if (s->unal[i].pc == pc) { s->unal[i].count++; return; }
    }
    if (s->unal_n < s->unal_cap) {
        unal_t *u = &s->unal[s->unal_n++];
        u->pc = pc; u->addr = a; u->size = size; u->type = type; u->count = 1;
    } else {
        s->unal_dropped++;
    }
}

static void run_checks(mrt_state *s, void *uc, const ctable_t *t, int32_t idx, uint32_t end) {
    const sent_t *se = &t->tab[idx];
    for (uint32_t k = 0; k < se->count; k++) {
        const check_t *c = &t->checks[se->first + k];
        if (c->pc >= end) continue;
        uint32_t v = c->konst;
        for (uint32_t i = 0; i < c->nterms; i++) {
            uint64_t r = 0;
            s->reg_read(uc, c->reg[i], &r);
            v += c->coef[i] * (uint32_t)r;
        }
        s->checks_run++;
        if (v & c->mask) record_unaligned(s, c->pc, v, c->size, c->type);
    }
}

static inline uint32_t hash4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    uint32_t h = a * 0x9E3779B1u;
    h ^= (b + 0x7F4A7C15u) * 0x85EBCA77u;
    h ^= (c >> 1) * 0xC2B2AE3Du;
    h ^= d * 0x27D4EB2Fu;
    h ^= h >> 15;
    return h;
}

static int grow(mrt_state *s) {
    uint32_t ncap = s->cap * 2;
    edge_t *nt = (edge_t *)calloc(ncap, sizeof(edge_t));
    if (!nt) return -1;
    for (uint32_t i = 0; i < s->cap; i++) {
        edge_t *e = &s->tab[i];
        if (e->count == 0) continue;
        uint32_t j = hash4(e->prev, e->prev_size, e->cur, e->cur_size) & (ncap - 1);
        while (nt[j].count) j = (j + 1) & (ncap - 1);
        nt[j] = *e;
    }
    free(s->tab);
    s->tab = nt;
    s->cap = ncap;
    s->last_idx = 0;
    return 0;
}

void mrt_block_hook(void *uc, uint64_t address, uint32_t size, void *user) {
    mrt_state *s = (mrt_state *)user;
    uint32_t a = (uint32_t)address;
    edge_t *e = &s->tab[s->last_idx];
    if (!(e->count && e->cur == a && e->prev == s->prev && e->cur_size == size && e->prev_size == s->prev_size)) {
        uint32_t mask = s->cap - 1;
        uint32_t j = hash4(s->prev, s->prev_size, a, size) & mask;
        for (;;) {
            e = &s->tab[j];
            if (e->count == 0) {
                if ((s->n + 1) * 2 > s->cap) {
                    if (grow(s) == 0) { mrt_block_hook(uc, address, size, user); return; }
                }
                e->prev = s->prev; e->prev_size = s->prev_size; e->cur = a; e->cur_size = size;
                e->chk = ctable_find(&s->blk, a);
                s->n++;
                break;
            }
            if (e->cur == a && e->prev == s->prev && e->cur_size == size && e->prev_size == s->prev_size) break;
            j = (j + 1) & mask;
        }
        s->last_idx = (uint32_t)(e - s->tab);
    }
    e->count++;
    if (e->chk >= 0) run_checks(s, uc, &s->blk, e->chk, a + size);
    s->prev = a;
    s->prev_size = size;
    s->bytes += size;
    if (s->bytes > s->byte_budget && !s->budget_hit) {
        s->budget_hit = 1;
        if (s->emu_stop) s->emu_stop(uc);
    }
}

#define UC_MEM_READ 16

void mrt_mem_hook(void *uc, int type, uint64_t address, int size, int64_t value, void *user) {
    (void)value;
    mrt_state *s = (mrt_state *)user;
    uint32_t a = (uint32_t)address;
    if (s->check_align) {
        uint32_t m = size >= 4 ? 3u : (uint32_t)(size - 1);
        if (a & m) {
            uint64_t pc = 0;
            if (s->reg_read) s->reg_read(uc, s->pc_reg, &pc);
            record_unaligned(s, (uint32_t)pc, a, (uint32_t)size, (uint32_t)type);
        }
    }
    if (type == UC_MEM_READ && a >= s->flash_lo && a < s->flash_hi) {
        uint32_t line = a >> s->line_shift;
        uint32_t idx = line & s->dc_mask;
        s->flash_reads++;
        if (s->dc_tags[idx] != line + 1) {   /* +1 so that tag 0 means empty */
            s->dc_tags[idx] = line + 1;
            s->flash_read_misses++;
        }
    }
}

/* code hook registered on single instructions whose address is checked at the instruction */
void mrt_code_hook(void *uc, uint64_t address, uint32_t size, void *user) {
    mrt_state *s = (mrt_state *)user;
    int32_t idx = ctable_find(&s->code, (uint32_t)address);
    if (idx >= 0) run_checks(s, uc, &s->code, idx, 0xFFFFFFFFu);
}

/* ---- management, called from Python through ctypes ---- */

/* Install a check table. starts: n_starts x (key, first, count); checks: n_checks x 12 uint32
 * (pc, konst, nterms, mask, size, type, reg0, coef0, reg1, coef1, reg2, coef2). which: 0 block, 1 code */
int mrt_set_checks(mrt_state *s, int which, const uint32_t *starts, uint32_t n_starts,
                   const uint32_t *checks, uint32_t n_checks) {
    ctable_t *t = which ? &s->code : &s->blk;
    free(t->tab); free(t->checks);
    t->tab = NULL; t->checks = NULL; t->cap = 0; t->nchecks = 0;
    if (!n_starts) return 0;
    uint32_t cap = 16;
    while (cap < 2 * n_starts) cap <<= 1;
    t->tab = (sent_t *)calloc(cap, sizeof(sent_t));
    t->checks = (check_t *)calloc(n_checks ? n_checks : 1, sizeof(check_t));
    if (!t->tab || !t->checks) return -1;
    t->cap = cap;
    for (uint32_t i = 0; i < n_checks; i++) {
        const uint32_t *c = &checks[12 * i];
        check_t *d = &t->checks[i];
        d->pc = c[0]; d->konst = c[1]; d->nterms = c[2]; d->mask = c[3]; d->size = c[4]; d->type = c[5];
        for (int k = 0; k < 3; k++) { d->reg[k] = (int32_t)c[6 + 2 * k]; d->coef[k] = c[7 + 2 * k]; }
    }
    t->nchecks = n_checks;
    for (uint32_t i = 0; i < n_starts; i++) {
        uint32_t key = starts[3 * i], j = hash1(key) & (cap - 1);
        while (t->tab[j].used) j = (j + 1) & (cap - 1);
        t->tab[j].key = key; t->tab[j].first = starts[3 * i + 1]; t->tab[j].count = starts[3 * i + 2];
        t->tab[j].used = 1;
    }
    return 0;
}

mrt_state *mrt_new(void) {
    mrt_state *s = (mrt_state *)calloc(1, sizeof(mrt_state));
    if (!s) return NULL;
    s->cap = 1024;
    s->tab = (edge_t *)calloc(s->cap, sizeof(edge_t));
    s->unal_cap = 256;
    s->unal = (unal_t *)calloc(s->unal_cap, sizeof(unal_t));
    s->dc_mask = 0;
    s->dc_tags = (uint32_t *)calloc(1, sizeof(uint32_t));
    s->line_shift = 4;
    s->byte_budget = UINT64_MAX;
    return s;
}

void mrt_free(mrt_state *s) {
    if (!s) return;
    free(s->tab); free(s->unal); free(s->dc_tags);
    free(s->blk.tab); free(s->blk.checks); free(s->code.tab); free(s->code.checks);
    free(s);
}

void mrt_set_funcs(mrt_state *s, emu_stop_fn stop, reg_read_fn rr, int pc_reg) {
    s->emu_stop = stop; s->reg_read = rr; s->pc_reg = pc_reg;
}

void mrt_configure_mem(mrt_state *s, int check_align, uint32_t flash_lo, uint32_t flash_hi,
                       uint32_t line_shift, uint32_t dcache_lines) {
    s->check_align = check_align;
    s->flash_lo = flash_lo; s->flash_hi = flash_hi; s->line_shift = line_shift;
    uint32_t n = 1;
    while (n < dcache_lines) n <<= 1;
    free(s->dc_tags);
    s->dc_tags = (uint32_t *)calloc(n, sizeof(uint32_t));
    s->dc_mask = n - 1;
}

/* Start of a call: clear counters (not the data cache tags: they persist across calls like a
 * real cache would, unless mrt_flush_dcache is called). */
void mrt_reset(mrt_state *s, uint64_t byte_budget, uint32_t entry_prev) {
    memset(s->tab, 0, s->cap * sizeof(edge_t));
    s->n = 0; s->last_idx = 0;
    s->prev = entry_prev; s->prev_size = 0;
    s->bytes = 0; s->byte_budget = byte_budget; s->budget_hit = 0;
    s->flash_reads = 0; s->flash_read_misses = 0;
    s->unal_n = 0; s->unal_total = 0; s->unal_dropped = 0;
    s->checks_run = 0;
}

void mrt_flush_dcache(mrt_state *s) { memset(s->dc_tags, 0, (s->dc_mask + 1) * sizeof(uint32_t)); }

uint32_t mrt_edge_count(mrt_state *s) { return s->n; }

/* Copy the used edges out: out must hold n entries of 5 uint64 (prev, prev_size, cur, cur_size, count). */
uint32_t mrt_edges(mrt_state *s, uint64_t *out, uint32_t max) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->cap && k < max; i++) {
        edge_t *e = &s->tab[i];
        if (!e->count) continue;
        out[k * 5 + 0] = e->prev; out[k * 5 + 1] = e->prev_size;
        out[k * 5 + 2] = e->cur; out[k * 5 + 3] = e->cur_size; out[k * 5 + 4] = e->count;
        k++;
    }
    return k;
}

/* stats: bytes, budget_hit, flash_reads, flash_read_misses, unal_n, unal_total, unal_dropped,
 * last block address, last block size */
void mrt_stats(mrt_state *s, uint64_t *out) {
    out[0] = s->bytes; out[1] = (uint64_t)s->budget_hit; out[2] = s->flash_reads;
    out[3] = s->flash_read_misses; out[4] = s->unal_n; out[5] = s->unal_total; out[6] = s->unal_dropped;
    out[7] = s->prev; out[8] = s->prev_size; out[9] = s->checks_run;
}

/* unaligned records: 5 uint64 each (pc, addr, size, type, count) */
uint32_t mrt_unaligned(mrt_state *s, uint64_t *out, uint32_t max) {
    uint32_t k = 0;
    for (; k < s->unal_n && k < max; k++) {
        unal_t *u = &s->unal[k];
        out[k * 5 + 0] = u->pc; out[k * 5 + 1] = u->addr; out[k * 5 + 2] = u->size;
        out[k * 5 + 3] = u->type; out[k * 5 + 4] = u->count;
    }
    return k;
}

/* Forget the unaligned records (not their running total): the next ones are a new part of the
 * call's (the whole-invoke runtime's next operator). */
void mrt_clear_unaligned(mrt_state *s) { s->unal_n = 0; s->unal_dropped = 0; }

/* Forget the edges counted so far, not the budget's running count nor the previous block (the
 * next edge still names it): the next ones are a new part of the call's. */
void mrt_clear_edges(mrt_state *s) {
    memset(s->tab, 0, s->cap * sizeof(edge_t));
    s->n = 0; s->last_idx = 0;
}
