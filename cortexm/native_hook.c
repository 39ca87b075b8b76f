/* micro_rt virtual MCU: native Unicorn hooks, a plain C library loaded by cortexm/native.py with
 * ctypes (built by setup.py at install time, or at first use as a fallback).
 *
 * Self-contained: no Unicorn header needed. The Unicorn entry points used from inside a hook
 * (uc_emu_stop, uc_reg_read, uc_reg_write) are handed in as function pointers by Python.
 *
 * Block hook: counts executed translation blocks per *edge* (previous block -> this block), so
 * that Python can derive exact instruction counts (sum of count x instructions of the block) and
 * know which control transfers were taken branches (edge target != previous block end). Also
 * enforces an instruction budget: each block of `size` bytes holds at least size/4 instructions,
 * so once the executed bytes exceed 4 x budget the budget is certainly exhausted -> uc_emu_stop.
 *
 * Memory hook (optional, read+write): records accesses that are not naturally aligned (word
 * accesses not 4-aligned, halfword not 2-aligned) per PC, and feeds data loads from flash
 * (weights) to the data side of the flash interface model.
 *
 * Flash interface (memory_system.py holds the Python twin): both sides are simulated access by
 * access, in execution order. Instruction side (mrt_configure_fetch): each block run from flash
 * fetches the lines it spans; a line still in the line buffer costs nothing, a line in the
 * instruction cache (LRU, set associative) nothing, the next sequential line while prefetch is on
 * the fill less what executing the previous line hides, any other line a whole fill. Data side:
 * each load from flash looks its unit up in the data cache (LRU too); a miss costs one unit's
 * read. The stall totals run with the call (mrt_stats), so any part of a call is priced by
 * differences of them.
 *
 * Flash data port (the fast way to see data loads from flash): any Unicorn memory hook sends
 * every load and store of the guest through QEMU's slow path (~4x slower emulation). Instead,
 * the engine runs with a virtual TLB (UC_TLB_VIRTUAL) filled by mrt_tlb_fill: instruction fetches
 * and writes see flash where it is, but data *loads* from a flash page are mapped onto an MMIO
 * alias of the flash (mrt_flash_read), which feeds the same data-cache model and returns the
 * bytes from the flash's host memory. SRAM accesses keep QEMU's fast path.
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
typedef int (*reg_write_fn)(void *uc, int regid, const void *value);
typedef void (*block_cb_fn)(void *uc, uint64_t address, uint32_t size, void *user);

typedef struct {
    uint32_t prev, prev_size, cur, cur_size;
    uint64_t count;
    int32_t chk;                 /* index into the block-start check table, or -1 */
    uint32_t pad;
} edge_t;

/* What the flash interface met in each edge's block, in a table parallel to the edges' (kept
 * only when asked, mrt_keep_edge_flash: the per-function profile of a firmware run; apart, so
 * the edge table stays as small as the profile's hot path wants it). */
typedef struct {
    uint64_t fetch_stalls;       /* stall cycles fetching the block */
    uint64_t data_misses;        /* its data loads from flash that missed the cache */
    uint64_t data_reads;         /* its data loads from flash */
} edge_flash_t;

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

struct mrt_state;

typedef struct {                 /* one host buffer behind a part of the flash */
    struct mrt_state *s;
    uint32_t lo, hi;
    const uint8_t *host;
} segment_t;

typedef struct { uint64_t paddr; int32_t perms; } tlb_entry_t;   /* Unicorn's uc_tlb_entry */

/* static cost of one translation block (core_timing.BlockCost) */
typedef struct {
    uint32_t addr, size, n_insns, used;
    int64_t cycles, taken_extra, loads;
} cost_t;

/* An LRU cache of line numbers: `sets` sets of `ways` ways (sets 0: no cache, every look-up
 * misses). Tags hold line + 1 (0 = empty); stamps the look-up clock of each way's last use.
 * A look-up scans its set, except in a set of more than LRU_SCAN_WAYS ways (a large fully
 * associative cache), where `where` (open addressing by line, slot + 1; 0 = free) finds the
 * way and only a miss scans the set for its victim. */
#define LRU_SCAN_WAYS 8
#define LRU_HINTS 256
typedef struct {
    uint32_t sets, ways;
    uint32_t *tags;
    uint64_t *stamps, clock;
    uint32_t mru;                /* index of the way used last: a repeated look-up is one compare */
    uint32_t *where, where_mask;
    uint32_t hint[LRU_HINTS];    /* by line % LRU_HINTS: the way that held it last (checked by tag) */
} lru_t;

typedef struct mrt_state {
    /* edges */
    edge_t *tab;
    edge_flash_t *ef;            /* NULL unless mrt_keep_edge_flash */
    uint32_t cap, n;
    uint32_t prev, prev_size;
    uint32_t last_idx;
    /* budget */
    uint64_t bytes, byte_budget, budget_from;
    int32_t budget_hit;
    int32_t pc_reg;
    emu_stop_fn emu_stop;
    reg_read_fn reg_read;
    /* the IT state put back after Unicorn's state restore (clear_it_state) */
    reg_write_fn reg_write;
    int32_t epsr_reg;
    /* memory hook */
    int32_t check_align;
    uint32_t flash_lo, flash_hi;
    uint32_t line_shift;         /* data side: log2 of the unit one data-cache entry holds */
    lru_t dc;
    uint64_t flash_reads, flash_read_misses;
    /* instruction side (mrt_configure_fetch) */
    int32_t fetch_on, fetch_prefetch;
    uint32_t fetch_shift, fetch_last;
    int64_t fetch_fill, fetch_sequential;
    lru_t ic;
    uint64_t fetch_stalls, fetch_fills;
    unal_t *unal;
    uint32_t unal_cap, unal_n;
    uint64_t unal_total, unal_dropped;
    ctable_t blk, code;          /* static checks by block start / by instruction (code hook) */
    uint64_t checks_run;
    /* flash data port: loads from flash go to their address + alias_offset (0: no port) */
    uint64_t alias_offset;
    segment_t **seg;                 /* each allocated alone: MMIO regions keep pointers to them */
    uint32_t nseg, seg_cap;
    /* cycle accounting (mrt_account): block costs */
    cost_t *costs;
    uint32_t costs_cap, costs_n;
    /* mrt_set_observer: called for the blocks starting in [obs_lo, obs_hi] */
    uint32_t obs_lo, obs_hi;
    block_cb_fn observe;
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

static int rebuild(mrt_state *s, uint32_t ncap) {
    edge_t *nt = (edge_t *)calloc(ncap, sizeof(edge_t));
    edge_flash_t *nf = s->ef ? (edge_flash_t *)calloc(ncap, sizeof(edge_flash_t)) : NULL;
    if (!nt || (s->ef && !nf)) { free(nt); free(nf); return -1; }
    for (uint32_t i = 0; i < s->cap; i++) {
        edge_t *e = &s->tab[i];
        if (e->count == 0) continue;
        uint32_t j = hash4(e->prev, e->prev_size, e->cur, e->cur_size) & (ncap - 1);
        while (nt[j].count) j = (j + 1) & (ncap - 1);
        nt[j] = *e;
        if (nf) nf[j] = s->ef[i];
    }
    free(s->tab);
    s->tab = nt;
    if (nf) { free(s->ef); s->ef = nf; }
    s->cap = ncap;
    s->last_idx = 0;
    return 0;
}

static int grow(mrt_state *s) { return rebuild(s, s->cap * 2); }

/* The slot of edge (p, ps) -> (c, cs), claimed (count 0) when new; NULL when out of memory.
 * The slow path, for mrt_truncate_last_block. */
static edge_t *edge_slot(mrt_state *s, uint32_t p, uint32_t ps, uint32_t c, uint32_t cs) {
    if ((s->n + 1) * 2 > s->cap && grow(s)) return NULL;
    uint32_t mask = s->cap - 1;
    for (uint32_t j = hash4(p, ps, c, cs) & mask;; j = (j + 1) & mask) {
        edge_t *e = &s->tab[j];
        if (e->count == 0) {
            memset(e, 0, sizeof *e);
            if (s->ef) memset(&s->ef[j], 0, sizeof s->ef[j]);
            e->prev = p; e->prev_size = ps; e->cur = c; e->cur_size = cs;
            e->chk = ctable_find(&s->blk, c);
            s->n++;
            s->last_idx = j;
            return e;
        }
        if (e->cur == c && e->prev == p && e->cur_size == cs && e->prev_size == ps) {
            s->last_idx = j;
            return e;
        }
    }
}

/* (Re)shape an LRU cache: `lines` lines in sets of `ways` (0 or >= lines: one fully associative
 * set); lines 0: no cache. Empties it. Returns -1 when out of memory. */
static int lru_configure(lru_t *c, uint32_t lines, uint32_t ways) {
    free(c->tags); free(c->stamps); free(c->where);
    memset(c, 0, sizeof *c);
    if (!lines) return 0;
    if (!ways || ways > lines) ways = lines;
    c->ways = ways;
    c->sets = lines / ways ? lines / ways : 1;
    c->tags = (uint32_t *)calloc((size_t)c->sets * ways, sizeof(uint32_t));
    c->stamps = (uint64_t *)calloc((size_t)c->sets * ways, sizeof(uint64_t));
    if (ways > LRU_SCAN_WAYS) {
        uint32_t n = 1;
        while (n < 4 * c->sets * ways) n <<= 1;
        c->where = (uint32_t *)calloc(n, sizeof(uint32_t));
        c->where_mask = n - 1;
    }
    if (!c->tags || !c->stamps || (ways > LRU_SCAN_WAYS && !c->where)) {
        free(c->tags); free(c->stamps); free(c->where);
        memset(c, 0, sizeof *c);
        return -1;
    }
    return 0;
}

static void lru_flush(lru_t *c) {
    if (!c->sets) return;
    memset(c->tags, 0, (size_t)c->sets * c->ways * sizeof(uint32_t));
    memset(c->stamps, 0, (size_t)c->sets * c->ways * sizeof(uint64_t));
    if (c->where) memset(c->where, 0, ((size_t)c->where_mask + 1) * sizeof(uint32_t));
}

/* The `where` position of the line whose tag is `tag`, or of the free position it would take. */
static inline uint32_t where_find(const lru_t *c, uint32_t tag) {
    uint32_t i = hash1(tag) & c->where_mask;
    while (c->where[i] && c->tags[c->where[i] - 1] != tag) i = (i + 1) & c->where_mask;
    return i;
}

/* Forget the position of the line with `tag` (linear probing's backward-shift deletion). */
static void where_remove(lru_t *c, uint32_t tag) {
    uint32_t i = where_find(c, tag), m = c->where_mask;
    if (!c->where[i]) return;
    uint32_t j = i;
    for (;;) {
        c->where[i] = 0;
        for (;;) {
            j = (j + 1) & m;
            if (!c->where[j]) return;
            uint32_t home = hash1(c->tags[c->where[j] - 1]) & m;
            /* j's entry may fill the hole at i unless its home lies cyclically in (i, j] */
            if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) break;
        }
        c->where[i] = c->where[j];
        i = j;
    }
}

/* Look `line` up: 1 on a hit; on a miss 0, the line then replaces the set's least recently
 * used way (memory_system.LruCache is the twin). */
static inline int lru_access(lru_t *c, uint32_t line) {
    if (!c->sets) return 0;
    uint32_t tag = line + 1, *hint = &c->hint[line % LRU_HINTS];
    c->clock++;
    if (c->tags[c->mru] == tag) { c->stamps[c->mru] = c->clock; return 1; }
    if (c->tags[*hint] == tag) {     /* a hint is a way index of this cache: always in range */
        c->mru = *hint;
        c->stamps[*hint] = c->clock;
        return 1;
    }
    uint32_t base = (line % c->sets) * c->ways, victim = base;
    if (c->where) {
        uint32_t k = where_find(c, tag);
        if (c->where[k]) {
            uint32_t i = c->where[k] - 1;
            c->stamps[i] = c->clock; c->mru = i; *hint = i;
            return 1;
        }
        for (uint32_t w = 1; w < c->ways; w++)
            if (c->stamps[base + w] < c->stamps[victim]) victim = base + w;
        if (c->tags[victim]) where_remove(c, c->tags[victim]);
        c->tags[victim] = tag;
        c->where[where_find(c, tag)] = victim + 1;
    } else {
        for (uint32_t w = 0; w < c->ways; w++) {
            uint32_t i = base + w;
            if (c->tags[i] == tag) { c->stamps[i] = c->clock; c->mru = i; *hint = i; return 1; }
            if (c->stamps[i] < c->stamps[victim]) victim = i;
        }
        c->tags[victim] = tag;
    }
    c->stamps[victim] = c->clock;
    c->mru = victim; *hint = victim;
    return 0;
}

/* One data load from flash at a, through the data cache. */
static inline void flash_data_read(mrt_state *s, uint32_t a) {
    s->flash_reads++;
    if (s->ef) s->ef[s->last_idx].data_reads++;         /* the block running now (its edge) */
    if (!lru_access(&s->dc, a >> s->line_shift)) {
        s->flash_read_misses++;
        if (s->ef) s->ef[s->last_idx].data_misses++;
    }
}

/* The instruction fetches of a block of `size` bytes at a, run from flash. */
static inline void flash_fetch(mrt_state *s, uint32_t a, uint32_t size) {
    uint32_t lo = a >> s->fetch_shift, hi = (a + (size ? size : 1) - 1) >> s->fetch_shift;
    for (uint32_t line = lo; line <= hi; line++) {
        if (line == s->fetch_last) continue;          /* still in the line buffer */
        int sequential = line == s->fetch_last + 1;
        s->fetch_last = line;
        if (lru_access(&s->ic, line)) continue;
        s->fetch_fills++;
        s->fetch_stalls += (uint64_t)(sequential && s->fetch_prefetch ? s->fetch_sequential : s->fetch_fill);
    }
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
                if (s->ef) memset(&s->ef[e - s->tab], 0, sizeof(edge_flash_t));
                s->n++;
                break;
            }
            if (e->cur == a && e->prev == s->prev && e->cur_size == size && e->prev_size == s->prev_size) break;
            j = (j + 1) & mask;
        }
        s->last_idx = (uint32_t)(e - s->tab);
    }
    if (s->bytes + size > s->byte_budget && s->bytes > s->budget_from && !s->budget_hit) {
        /* The budget stops the run before this block executes (Unicorn does not run a block
         * whose hook asked it to stop): it is not counted, so a run resumed at this pc counts
         * it once, with the same previous block. The first block after a budget is set always
         * runs, so every slice makes progress. */
        s->budget_hit = 1;
        if (e->count == 0) {                 /* a slot claimed just now: give it back */
            e->prev = e->prev_size = e->cur = e->cur_size = 0;
            s->n--;
            s->last_idx = 0;
        }
        if (s->emu_stop) s->emu_stop(uc);
        return;
    }
    e->count++;
    if (e->chk >= 0) run_checks(s, uc, &s->blk, e->chk, a + size);
    s->prev = a;
    s->prev_size = size;
    s->bytes += size;
    if (s->fetch_on && a >= s->flash_lo && a < s->flash_hi) {
        uint64_t before = s->fetch_stalls;
        flash_fetch(s, a, size);
        if (s->ef) s->ef[e - s->tab].fetch_stalls += s->fetch_stalls - before;
    }
    if (s->observe && a >= s->obs_lo && a <= s->obs_hi) s->observe(uc, address, size, NULL);
}

/* A callback for every block starting in [lo, hi], after this hook counted it (cb NULL: none):
 * the device runtime's operator boundaries. One compare per block here; a second Unicorn block
 * hook, even on a range never run, made every block ~20% slower (Unicorn tests each block
 * against each block hook). */
void mrt_set_observer(mrt_state *s, uint32_t lo, uint32_t hi, block_cb_fn cb) {
    s->obs_lo = lo; s->obs_hi = hi; s->observe = cb;
}

#define UC_MEM_READ 16
#define UC_MEM_WRITE 17
#define UC_MEM_FETCH 18
#define UC_PROT_READ 1
#define UC_PROT_WRITE 2
#define UC_PROT_EXEC 4
#define UC_PROT_ALL 7

/* Unicorn (2.1) runs QEMU's cpu_restore_state before a TLB-fill hook and before a memory hook,
 * then resumes the translation block. On Thumb-2 that restore puts the IT state of the access
 * into the CPU state, where QEMU keeps 0 while a block runs (the block holds the IT state in its
 * code and writes it back only when it leaves inside an IT block). Left there, the next block is
 * translated as if it started inside an IT block, and its conditional code runs wrongly (unicorn
 * issue #2309). Writing EPSR = T (IT bits 0) puts the invariant back; an exception taken after
 * the hook restores the state again from the block, as QEMU does. Only for data accesses: the
 * TLB fill of an instruction fetch runs between blocks (block lookup or translation), where the
 * CPU state holds the IT state a block left at a page boundary inside an IT block, for the next
 * block; wiping it there made that block run its conditional code unconditionally. */
static inline void clear_it_state(mrt_state *s, void *uc) {
    if (s->reg_write) {
        uint32_t thumb = 1u << 24;
        s->reg_write(uc, s->epsr_reg, &thumb);
    }
}

void mrt_mem_hook(void *uc, int type, uint64_t address, int size, int64_t value, void *user) {
    (void)value;
    mrt_state *s = (mrt_state *)user;
    uint32_t a = (uint32_t)address;
    clear_it_state(s, uc);
    if (s->check_align) {
        uint32_t m = size >= 4 ? 3u : (uint32_t)(size - 1);
        if (a & m) {
            uint64_t pc = 0;
            if (s->reg_read) s->reg_read(uc, s->pc_reg, &pc);
            record_unaligned(s, (uint32_t)pc, a, (uint32_t)size, (uint32_t)type);
        }
    }
    if (type == UC_MEM_READ && a >= s->flash_lo && a < s->flash_hi) {
        /* an unaligned load is two naturally aligned ones, as the flash data port sees it */
        uint32_t m = (uint32_t)size - 1;
        flash_data_read(s, a & ~m);
        if (a & m) flash_data_read(s, (a & ~m) + (uint32_t)size);
    }
}

/* Virtual TLB fill (UC_HOOK_TLB_FILL). Identity everywhere, except that with the flash data port
 * a flash page is mapped for data loads onto the MMIO alias, and for fetches / writes onto itself
 * without read permission (so that a load after a fetch refills the entry with the alias).
 * A page entered by a data access gets no execute permission: QEMU then marks its stores clean
 * after the first one (tlb_set_dirty) and later stores take the fast path; with execute
 * permission (as in Unicorn's default TLB) every store to it goes through notdirty_write. */
int mrt_tlb_fill(void *uc, uint64_t vaddr, int type, tlb_entry_t *e, void *user) {
    mrt_state *s = (mrt_state *)user;
    uint32_t a = (uint32_t)vaddr;
    if (type != UC_MEM_FETCH) clear_it_state(s, uc);
    e->paddr = vaddr;
    if (s->alias_offset && a >= s->flash_lo && a < s->flash_hi) {
        if (type == UC_MEM_READ) {
            e->paddr = vaddr + s->alias_offset;
            e->perms = UC_PROT_READ;
        } else {
            e->perms = type == UC_MEM_WRITE ? UC_PROT_WRITE : UC_PROT_EXEC;
        }
    } else {
        e->perms = type == UC_MEM_FETCH ? UC_PROT_ALL : UC_PROT_READ | UC_PROT_WRITE;
    }
    return 1;
}

/* MMIO read of the flash alias (user: the segment the MMIO region mirrors). The access is
 * naturally aligned (QEMU splits unaligned MMIO loads into two aligned ones of the same size). */
uint64_t mrt_flash_read(void *uc, uint64_t offset, unsigned size, void *user) {
    (void)uc;
    segment_t *g = (segment_t *)user;
    flash_data_read(g->s, g->lo + (uint32_t)offset);
    uint64_t v = 0;
    memcpy(&v, g->host + offset, size);     /* guest and host are little-endian */
    return v;
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

/* ---- cycle accounting: the native twin of cycles.account / memory_system.fetch_stalls ---- */

static inline uint32_t cost_hash(uint32_t a, uint32_t sz) { return hash1(a ^ (sz * 0x85EBCA77u)); }

static cost_t *cost_find(const mrt_state *s, uint32_t a, uint32_t sz) {
    if (!s->costs_cap) return NULL;
    uint32_t mask = s->costs_cap - 1, j = cost_hash(a, sz) & mask;
    while (s->costs[j].used) {
        if (s->costs[j].addr == a && s->costs[j].size == sz) return &s->costs[j];
        j = (j + 1) & mask;
    }
    return NULL;
}

static int cost_insert(mrt_state *s, const cost_t *c) {
    if ((s->costs_n + 1) * 2 > s->costs_cap) {
        uint32_t ncap = s->costs_cap ? s->costs_cap * 2 : 1024;
        cost_t *nt = (cost_t *)calloc(ncap, sizeof(cost_t));
        if (!nt) return -1;
        for (uint32_t i = 0; i < s->costs_cap; i++) {
            if (!s->costs[i].used) continue;
            uint32_t j = cost_hash(s->costs[i].addr, s->costs[i].size) & (ncap - 1);
            while (nt[j].used) j = (j + 1) & (ncap - 1);
            nt[j] = s->costs[i];
        }
        free(s->costs);
        s->costs = nt;
        s->costs_cap = ncap;
    }
    uint32_t mask = s->costs_cap - 1, j = cost_hash(c->addr, c->size) & mask;
    while (s->costs[j].used) {
        if (s->costs[j].addr == c->addr && s->costs[j].size == c->size) break;
        j = (j + 1) & mask;
    }
    if (!s->costs[j].used) s->costs_n++;
    s->costs[j] = *c;
    s->costs[j].used = 1;
    return 0;
}

/* The static cost of block (addr, size), priced by Python (core_timing.block_cost). */
int mrt_set_cost(mrt_state *s, uint32_t addr, uint32_t size, uint32_t n_insns, int64_t cycles,
                 int64_t taken_extra, int64_t loads) {
    cost_t c;
    memset(&c, 0, sizeof c);
    c.addr = addr; c.size = size; c.n_insns = n_insns; c.cycles = cycles; c.taken_extra = taken_extra;
    c.loads = loads;
    return cost_insert(s, &c);
}

/* Instructions and cycles of edges tab[0..cap) (unused ones have count 0) and the last block
 * (last, last_size: its return is charged; size 0: none), as cycles.account prices them, with
 * the instruction-fetch stalls `fetch` and the `misses` data loads that missed, each costing
 * `data_miss`, that the flash interface counted over the same part of the call.
 * out: instructions, blocks, core, branches, fetch, data_flash, words loaded. Returns 0, 1 when
 * a block has no cost yet (mrt_set_cost it first). */
static int account_edges(mrt_state *s, const edge_t *tab, uint32_t cap, uint32_t last, uint32_t last_size,
                         uint64_t fetch, uint64_t misses, int64_t data_miss, int64_t *out) {
    int64_t insns = 0, blocks = 0, core = 0, branches = 0, loads = 0;
    for (uint32_t i = 0; i < cap; i++) {
        const edge_t *e = &tab[i];
        if (!e->count) continue;
        int64_t n = (int64_t)e->count;
        const cost_t *c = cost_find(s, e->cur, e->cur_size);
        if (!c) return 1;
        insns += n * c->n_insns;
        blocks += n;
        core += n * c->cycles;
        loads += n * c->loads;
        if (e->prev && e->prev + e->prev_size != e->cur) {      /* a taken transfer */
            const cost_t *pc = cost_find(s, e->prev, e->prev_size);
            if (pc) branches += n * pc->taken_extra;
        }
    }
    if (last_size) {                                  /* the final return */
        const cost_t *lc = cost_find(s, last, last_size);
        if (lc) branches += lc->taken_extra;
    }
    out[0] = insns; out[1] = blocks; out[2] = core; out[3] = branches; out[4] = (int64_t)fetch;
    out[5] = (int64_t)misses * data_miss; out[6] = loads;
    return 0;
}

/* Instructions and cycles of the call just run, from its edge table (cycles.account, exactly). */
int mrt_account(mrt_state *s, int64_t data_miss, int64_t *out) {
    return account_edges(s, s->tab, s->cap, s->prev, s->prev_size, s->fetch_stalls, s->flash_read_misses,
                         data_miss, out);
}

/* The same for a part of a call given as n edges of 5 uint64 (prev, prev_size, cur, cur_size,
 * count; mrt_edges' layout), its last block, and the fetch stalls and data-load misses the
 * flash interface counted over that part (differences of mrt_stats). */
int mrt_account_window(mrt_state *s, const uint64_t *edges, uint32_t n, uint32_t last, uint32_t last_size,
                       uint64_t fetch, uint64_t misses, int64_t data_miss, int64_t *out) {
    edge_t *tab = (edge_t *)calloc(n ? n : 1, sizeof(edge_t));
    if (!tab) return -1;
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t *v = edges + 5 * i;
        tab[i].prev = (uint32_t)v[0]; tab[i].prev_size = (uint32_t)v[1];
        tab[i].cur = (uint32_t)v[2]; tab[i].cur_size = (uint32_t)v[3]; tab[i].count = v[4];
    }
    int status = account_edges(s, tab, n, last, last_size, fetch, misses, data_miss, out);
    free(tab);
    return status;
}

mrt_state *mrt_new(void) {
    mrt_state *s = (mrt_state *)calloc(1, sizeof(mrt_state));
    if (!s) return NULL;
    s->cap = 1024;
    s->tab = (edge_t *)calloc(s->cap, sizeof(edge_t));
    s->unal_cap = 256;
    s->unal = (unal_t *)calloc(s->unal_cap, sizeof(unal_t));
    s->line_shift = 4;
    s->fetch_last = UINT32_MAX - 1;
    s->byte_budget = UINT64_MAX;
    return s;
}

void mrt_free(mrt_state *s) {
    if (!s) return;
    free(s->tab); free(s->ef); free(s->unal);
    lru_configure(&s->dc, 0, 0); lru_configure(&s->ic, 0, 0);
    free(s->blk.tab); free(s->blk.checks); free(s->code.tab); free(s->code.checks);
    free(s->costs);
    for (uint32_t i = 0; i < s->nseg; i++) free(s->seg[i]);
    free(s->seg);
    free(s);
}

void mrt_set_funcs(mrt_state *s, emu_stop_fn stop, reg_read_fn rr, int pc_reg) {
    s->emu_stop = stop; s->reg_read = rr; s->pc_reg = pc_reg;
}

/* uc_reg_write and Unicorn's EPSR register id, for clear_it_state (NULL: never cleared). */
void mrt_set_it_reset(mrt_state *s, reg_write_fn rw, int epsr_reg) {
    s->reg_write = rw; s->epsr_reg = epsr_reg;
}

/* The data side: loads from [flash_lo, flash_hi) in units of 2^unit_shift bytes through a data
 * cache of `dcache_lines` such units in sets of `dcache_ways` (0: fully associative); emptied.
 * Returns -1 when out of memory. */
int mrt_configure_mem(mrt_state *s, int check_align, uint32_t flash_lo, uint32_t flash_hi,
                      uint32_t unit_shift, uint32_t dcache_lines, uint32_t dcache_ways) {
    s->check_align = check_align;
    s->flash_lo = flash_lo; s->flash_hi = flash_hi; s->line_shift = unit_shift;
    return lru_configure(&s->dc, dcache_lines, dcache_ways);
}

/* The instruction side: on (0: fetches not modelled), lines of 2^line_shift bytes, an
 * instruction cache of `icache_lines` lines in sets of `icache_ways` (0 lines: a line buffer
 * only), prefetch of the next sequential line; `fill` stall cycles per line fill, `sequential`
 * for a prefetched one. Emptied. Returns -1 when out of memory. */
int mrt_configure_fetch(mrt_state *s, int on, uint32_t line_shift, uint32_t icache_lines,
                        uint32_t icache_ways, int prefetch, int64_t fill, int64_t sequential) {
    s->fetch_on = on; s->fetch_shift = line_shift; s->fetch_prefetch = prefetch;
    s->fetch_fill = fill; s->fetch_sequential = sequential;
    s->fetch_last = UINT32_MAX - 1;
    return lru_configure(&s->ic, icache_lines, icache_ways);
}

/* Start of a call: clear counters (not the caches: they persist across calls as a real cache's
 * content does, unless mrt_flush_caches is called); the line buffer refills at the entry. */
void mrt_reset(mrt_state *s, uint64_t byte_budget, uint32_t entry_prev) {
    memset(s->tab, 0, s->cap * sizeof(edge_t));
    if (s->ef) memset(s->ef, 0, s->cap * sizeof(edge_flash_t));
    s->n = 0; s->last_idx = 0;
    s->prev = entry_prev; s->prev_size = 0;
    s->bytes = 0; s->byte_budget = byte_budget; s->budget_hit = 0; s->budget_from = 0;
    s->flash_reads = 0; s->flash_read_misses = 0;
    s->fetch_stalls = 0; s->fetch_fills = 0; s->fetch_last = UINT32_MAX - 1;
    s->unal_n = 0; s->unal_total = 0; s->unal_dropped = 0;
    s->checks_run = 0;
}

/* The flash data port: loads from flash are seen at flash address + alias_offset (0: off). */
/* The block counted last ran only its first `executed` bytes (the run was stopped inside it, after
 * an MMIO write that pends an exception, and goes on after the writing instruction): count that
 * part, as a block of its own, instead of the whole. An edge no longer run is dropped and its
 * flash counts move to the part (the same block start: the same function). Returns 0, -1 when
 * `executed` is not inside the last block, -2 when out of memory. */
int mrt_truncate_last_block(mrt_state *s, uint32_t executed) {
    edge_t *e = &s->tab[s->last_idx];
    if (!s->n || !e->count || e->cur != s->prev || e->cur_size != s->prev_size
        || executed == 0 || executed >= e->cur_size) return -1;
    edge_t old = *e;
    e->count--;
    s->bytes -= old.cur_size - executed;
    edge_flash_t moved = {0, 0, 0};
    if (e->count == 0) {
        if (s->ef) { moved = s->ef[s->last_idx]; memset(&s->ef[s->last_idx], 0, sizeof moved); }
        memset(e, 0, sizeof *e);
        s->n--;
        if (rebuild(s, s->cap)) return -2;          /* no hole in the probe chains */
    }
    edge_t *part = edge_slot(s, old.prev, old.prev_size, old.cur, executed);
    if (!part) return -2;
    part->count++;
    if (s->ef) {
        edge_flash_t *f = &s->ef[part - s->tab];
        f->fetch_stalls += moved.fetch_stalls; f->data_misses += moved.data_misses;
        f->data_reads += moved.data_reads;
    }
    s->prev = old.cur;
    s->prev_size = executed;
    return 0;
}

/* A new budget for the run going on (counts kept): it stops before the block that would take
 * the executed bytes past `byte_budget` (a run sliced to reach a modelled time). */
/* Stop before the next block (from a callback inside the current one: an MMIO write that pends
 * an exception; uc_emu_stop there would stop at the writing instruction, which then runs again). */
void mrt_stop_at_next_block(mrt_state *s) { s->byte_budget = s->bytes; s->budget_from = 0; s->budget_hit = 0; }

void mrt_set_budget(mrt_state *s, uint64_t byte_budget) {
    s->byte_budget = byte_budget; s->budget_hit = 0; s->budget_from = s->bytes;
}

void mrt_set_alias(mrt_state *s, uint64_t alias_offset) { s->alias_offset = alias_offset; }

/* Host memory of flash [lo, hi); the MMIO region mirroring it takes the returned pointer as its
 * user data (NULL when out of memory). */
void *mrt_add_segment(mrt_state *s, uint32_t lo, uint32_t hi, const uint8_t *host) {
    if (s->nseg == s->seg_cap) {
        uint32_t ncap = s->seg_cap ? 2 * s->seg_cap : 16;
        segment_t **ns = (segment_t **)realloc(s->seg, ncap * sizeof(segment_t *));
        if (!ns) return NULL;
        s->seg = ns;
        s->seg_cap = ncap;
    }
    segment_t *g = (segment_t *)malloc(sizeof(segment_t));
    if (!g) return NULL;
    g->s = s; g->lo = lo; g->hi = hi; g->host = host;
    s->seg[s->nseg++] = g;
    return g;
}

void mrt_flush_caches(mrt_state *s) { lru_flush(&s->dc); lru_flush(&s->ic); s->fetch_last = UINT32_MAX - 1; }

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

/* Keep the flash interface's counts per edge from here (emptied). Returns -1 when out of memory. */
int mrt_keep_edge_flash(mrt_state *s) {
    if (s->ef) return 0;
    s->ef = (edge_flash_t *)calloc(s->cap, sizeof(edge_flash_t));
    return s->ef ? 0 : -1;
}

/* The flash interface's counts per edge (zeros unless mrt_keep_edge_flash), in mrt_edges' order: out must hold n entries of 7
 * uint64 (prev, prev_size, cur, cur_size, fetch stall cycles, data-cache misses, data loads
 * from flash). */
uint32_t mrt_edge_stalls(mrt_state *s, uint64_t *out, uint32_t max) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->cap && k < max; i++) {
        edge_t *e = &s->tab[i];
        if (!e->count) continue;
        uint64_t *o = out + k * 7;
        o[0] = e->prev; o[1] = e->prev_size; o[2] = e->cur; o[3] = e->cur_size;
        const edge_flash_t *f = s->ef ? &s->ef[i] : NULL;
        o[4] = f ? f->fetch_stalls : 0; o[5] = f ? f->data_misses : 0; o[6] = f ? f->data_reads : 0;
        k++;
    }
    return k;
}

/* stats: bytes, budget_hit, flash_reads, flash_read_misses, unal_n, unal_total, unal_dropped,
 * last block address, last block size, checks run, fetch stalls, line fills */
void mrt_stats(mrt_state *s, uint64_t *out) {
    out[0] = s->bytes; out[1] = (uint64_t)s->budget_hit; out[2] = s->flash_reads;
    out[3] = s->flash_read_misses; out[4] = s->unal_n; out[5] = s->unal_total; out[6] = s->unal_dropped;
    out[7] = s->prev; out[8] = s->prev_size; out[9] = s->checks_run;
    out[10] = s->fetch_stalls; out[11] = s->fetch_fills;
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
    if (s->ef) memset(s->ef, 0, s->cap * sizeof(edge_flash_t));
    s->n = 0; s->last_idx = 0;
}
