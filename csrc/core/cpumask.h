/* A set of CPUs: the machine's limit, PS_MAX_CPUS, and a fixed array of
 * 64-bit words with one bit per CPU (the kernel's cpumask_t, a bitmap of
 * NR_CPUS bits).  A fixed array rather than one sized by the machine: a
 * task's affinity is a plain field of psTask (copied, snapshotted and
 * compared as bytes, read by policies with no allocation behind it), and
 * 128 bytes a task is small beside a task's other state.  Scans go word by
 * word and skip zero words, so a set on a small machine costs a few tests
 * of zero words past its own. */
#ifndef PS_CPUMASK_H
#define PS_CPUMASK_H
#include <stdint.h>

#define PS_MAX_CPUS 1024
#define PS_CPUMASK_WORDS (PS_MAX_CPUS / 64)

typedef struct psCpuMask {
  uint64_t w[PS_CPUMASK_WORDS];
} psCpuMask;

/* the words that hold CPUs 0..ncpu-1 */
static inline int ps_cpu_words(int ncpu) { return (ncpu + 63) >> 6; }

static inline int ps_cpu_test(const psCpuMask *s, int c) {
  return (int)(s->w[c >> 6] >> (c & 63) & 1);
}
static inline void ps_cpu_set(psCpuMask *s, int c) { s->w[c >> 6] |= (uint64_t)1 << (c & 63); }
static inline void ps_cpu_clear(psCpuMask *s, int c) {
  s->w[c >> 6] &= ~((uint64_t)1 << (c & 63));
}

static inline void ps_cpumask_zero(psCpuMask *s) {
  for (int i = 0; i < PS_CPUMASK_WORDS; i++) s->w[i] = 0;
}
/* CPUs 0..ncpu-1 */
static inline void ps_cpumask_fill(psCpuMask *s, int ncpu) {
  for (int i = 0; i < PS_CPUMASK_WORDS; i++) {
    int lo = i * 64;
    s->w[i] = ncpu >= lo + 64 ? ~(uint64_t)0
              : ncpu > lo     ? ((uint64_t)1 << (ncpu - lo)) - 1
                              : 0;
  }
}
/* CPU c alone */
static inline psCpuMask ps_cpumask_of(int c) {
  psCpuMask s;
  ps_cpumask_zero(&s);
  ps_cpu_set(&s, c);
  return s;
}

/* The first CPU of s at or after c; PS_MAX_CPUS when there is none. */
static inline int ps_cpumask_next(const psCpuMask *s, int c) {
  if (c >= PS_MAX_CPUS) return PS_MAX_CPUS;
  int i = c >> 6;
  uint64_t b = s->w[i] & (~(uint64_t)0 << (c & 63));
  while (!b) {
    if (++i == PS_CPUMASK_WORDS) return PS_MAX_CPUS;
    b = s->w[i];
  }
  return i * 64 + __builtin_ctzll(b);
}
static inline int ps_cpumask_first(const psCpuMask *s) { return ps_cpumask_next(s, 0); }
/* The highest CPU of s; -1 when it is empty. */
static inline int ps_cpumask_last(const psCpuMask *s) {
  for (int i = PS_CPUMASK_WORDS - 1; i >= 0; i--)
    if (s->w[i]) return i * 64 + 63 - __builtin_clzll(s->w[i]);
  return -1;
}
/* Every CPU of s, in order: c from first to last. */
#define PS_FOR_EACH_CPU(c, s) \
  for (int c = ps_cpumask_first(s); c < PS_MAX_CPUS; c = ps_cpumask_next((s), c + 1))

static inline int ps_cpumask_any(const psCpuMask *s) {
  uint64_t x = 0;
  for (int i = 0; i < PS_CPUMASK_WORDS; i++) x |= s->w[i];
  return x != 0;
}
/* whether words 0..nw-1 of s hold a CPU: the per-instant tests, which
 * look at the machine's words only (ps_cpu_words) */
static inline int ps_cpumask_any_n(const psCpuMask *s, int nw) {
  uint64_t x = 0;
  for (int i = 0; i < nw; i++) x |= s->w[i];
  return x != 0;
}
static inline int ps_cpumask_weight(const psCpuMask *s) {
  int n = 0;
  for (int i = 0; i < PS_CPUMASK_WORDS; i++) n += __builtin_popcountll(s->w[i]);
  return n;
}
static inline int ps_cpumask_equal(const psCpuMask *a, const psCpuMask *b) {
  uint64_t x = 0;
  for (int i = 0; i < PS_CPUMASK_WORDS; i++) x |= a->w[i] ^ b->w[i];
  return x == 0;
}
/* every CPU of a is in b */
static inline int ps_cpumask_subset(const psCpuMask *a, const psCpuMask *b) {
  uint64_t x = 0;
  for (int i = 0; i < PS_CPUMASK_WORDS; i++) x |= a->w[i] & ~b->w[i];
  return x == 0;
}
/* s holds a CPU, and only CPUs of a machine of ncpu (0..ncpu-1) */
static inline int ps_cpumask_within(const psCpuMask *s, int ncpu) {
  psCpuMask all;
  ps_cpumask_fill(&all, ncpu);
  return ps_cpumask_any(s) && ps_cpumask_subset(s, &all);
}
static inline void ps_cpumask_and(psCpuMask *out, const psCpuMask *a, const psCpuMask *b) {
  for (int i = 0; i < PS_CPUMASK_WORDS; i++) out->w[i] = a->w[i] & b->w[i];
}
/* The first CPU of a & b at or after c; PS_MAX_CPUS when there is none. */
static inline int ps_cpumask_next_and(const psCpuMask *a, const psCpuMask *b, int c) {
  if (c >= PS_MAX_CPUS) return PS_MAX_CPUS;
  int i = c >> 6;
  uint64_t x = a->w[i] & b->w[i] & (~(uint64_t)0 << (c & 63));
  while (!x) {
    if (++i == PS_CPUMASK_WORDS) return PS_MAX_CPUS;
    x = a->w[i] & b->w[i];
  }
  return i * 64 + __builtin_ctzll(x);
}

#endif
