/* The per-instant scans over the CPUs: what falls due next (next_due) and
 * which CPUs have it (cpus_at).  The scalar loops and the dispatchers are
 * here, inline in the run loop (run.c); the wide forms (AVX2, AVX-512) and
 * their check against the scalar loops are in scan.c. */
#ifndef PS_SCAN_H
#define PS_SCAN_H
#include "engine_private.h"

/* the per-instant scans' AVX2 and AVX-512 forms (next_due, cpus_at) */
#if defined(__x86_64__) && defined(__GNUC__)
#define PS_SCAN_X86 1
#endif

/* What falls due next on the CPUs: the earliest tick and the earliest end
 * of a burst.  Minima alone, written to compile without branches (which
 * CPU holds the minimum is data a branch predictor cannot learn); the CPUs
 * that have them are found (cpus_at) only when the instant is theirs.  On
 * 64 CPUs this scan ran once per instant and was half of the loop's work
 * while it also built both masks. */
typedef struct psDue {
  int64_t tick, burst_end;
} psDue;

/* The scans from CPU c on, into u and at: the scalar loops, and the wide
 * forms' remainders. */
static inline psDue next_due_from(const psModel *m, const psData *d, psDue u, int c) {
  for (; c < m->ncpu; c++) {
    int64_t tick = d->next_tick_ns[c], end = d->burst_end_ns[c];
    u.tick = tick < u.tick ? tick : u.tick;
    u.burst_end = end < u.burst_end ? end : u.burst_end;
  }
  return u;
}

static inline psDue next_due_scalar(const psModel *m, const psData *d) {
  psDue u = {d->next_tick_ns[0], d->burst_end_ns[0]};
  return next_due_from(m, d, u, 1);
}

/* The CPUs whose entry of times (a CPU's next tick or burst end) is t,
 * added to at from CPU c on. */
static inline void cpus_at_from(const psModel *m, const int64_t *times, int64_t t, psCpuMask *at,
                                int c) {
  for (; c < m->ncpu; c++) at->w[c >> 6] |= (uint64_t)(times[c] == t) << (c & 63);
}

/* Only the machine's words of `at` are written (ps_cpu_words), which are
 * all its readers look at. */
static inline void cpus_at_scalar(const psModel *m, const int64_t *times, int64_t t,
                                  psCpuMask *at, int nw) {
  for (int w = 0; w < nw; w++) at->w[w] = 0;
  cpus_at_from(m, times, t, at, 0);
}

#pragma GCC visibility push(hidden)

/* The wide forms, for any number of CPUs (scan.c). */
#ifdef PS_SCAN_X86
psDue next_due_avx2(const psModel *m, const psData *d);
void cpus_at_avx2(const psModel *m, const int64_t *times, int64_t t, psCpuMask *at);
psDue next_due_avx512(const psModel *m, const psData *d);
void cpus_at_avx512(const psModel *m, const int64_t *times, int64_t t, psCpuMask *at);
#endif

/* Every wide form this processor has, on any number of CPUs, gives the
 * scalar loops' results now (so next_due and cpus_at, which take one of
 * them, do too).  Under debug_checks after every instant, so that a run of
 * the tests checks the AVX2 form on a processor that would use AVX-512. */
__attribute__((cold)) int scans_agree(const psModel *m, const psData *d, char *err, int errlen);

#pragma GCC visibility pop

/* The dispatchers are inline, so that 1 to 15 CPUs keep the scalar loops
 * inline (a call cost 1-2 % on 2 and 8 CPUs). */
__attribute__((always_inline)) static inline psDue next_due(const psModel *m, psData *d) {
#ifdef PS_SCAN_X86
  if (m->ncpu >= 16 && m->fast_paths & PS_FAST_SCAN) {
    if (__builtin_cpu_supports("avx512f")) {
      ps_count_up(&ps_fast(d)->wide_scans);
      return next_due_avx512(m, d);
    }
    if (__builtin_cpu_supports("avx2")) {
      ps_count_up(&ps_fast(d)->wide_scans);
      return next_due_avx2(m, d);
    }
  }
#endif
  return next_due_scalar(m, d);
}

/* cpus_at_scalar, for t the least of the entries: on one CPU that CPU,
 * without the scan (which cost the wakeup-heavy case c0 2 % of its time). */
__attribute__((always_inline)) static inline void cpus_at(const psModel *m, const int64_t *times,
                                                          int64_t t, psCpuMask *at, int nw) {
  if (m->ncpu == 1) {
    at->w[0] = 1;
    return;
  }
#ifdef PS_SCAN_X86
  if (m->ncpu >= 16 && m->fast_paths & PS_FAST_SCAN) {
    if (__builtin_cpu_supports("avx512f")) return cpus_at_avx512(m, times, t, at);
    if (__builtin_cpu_supports("avx2")) return cpus_at_avx2(m, times, t, at);
  }
#endif
  cpus_at_scalar(m, times, t, at, nw);
}

#endif
