/* The per-instant scans' wide forms: next_due and cpus_at over four CPUs
 * to an instruction (AVX2) or eight (AVX-512), which the dispatchers in
 * scan.h take from 16 CPUs on, and their check against the scalar loops. */
#include <stdio.h>

#include "scan.h"
#ifdef PS_SCAN_X86
#include <immintrin.h>
#endif

/* From 16 CPUs the scans take four CPUs to an instruction where the
 * processor has AVX2, eight where it has AVX-512 (whose 64-bit min and
 * compare to a mask are one instruction each; AVX2 needs a compare and a
 * blend for a min).  They are the one work of an instant that grows with
 * the CPUs rather than with what happens there: ~25 instructions a CPU,
 * ~1,600 an instant on 64 CPUs in the scalar loops, more than all the rest
 * of an instant where few CPUs are busy.  Per switch on 64 CPUs
 * (bench_ticks), AVX2 against the scalar loops: case (j), 8 CPUs busy,
 * -16 %; (h), all busy, -5 %; on 16 CPUs -3 %; on 8 the call cost what it
 * saved.  AVX-512 against AVX2: (j) -5 %, (h) -2 %, 16 CPUs -1 %.  The
 * results are the scalar loops' (checked after every instant under
 * debug_checks, scans_agree). */
#ifdef PS_SCAN_X86
__attribute__((target("avx2"))) psDue next_due_avx2(const psModel *m, const psData *d) {
  __m256i tick = _mm256_set1_epi64x(INT64_MAX), end = tick;
  int c = 0;
  for (; c + 4 <= m->ncpu; c += 4) {
    __m256i x = _mm256_loadu_si256((const __m256i *)&d->next_tick_ns[c]);
    __m256i y = _mm256_loadu_si256((const __m256i *)&d->burst_end_ns[c]);
    tick = _mm256_blendv_epi8(tick, x, _mm256_cmpgt_epi64(tick, x));
    end = _mm256_blendv_epi8(end, y, _mm256_cmpgt_epi64(end, y));
  }
  int64_t ticks[4], ends[4];
  _mm256_storeu_si256((__m256i *)ticks, tick);
  _mm256_storeu_si256((__m256i *)ends, end);
  psDue u = {INT64_MAX, INT64_MAX};
  for (int i = 0; i < 4; i++) {
    u.tick = ticks[i] < u.tick ? ticks[i] : u.tick;
    u.burst_end = ends[i] < u.burst_end ? ends[i] : u.burst_end;
  }
  return next_due_from(m, d, u, c);
}

/* four CPUs at a time, which never straddle two words of the mask */
__attribute__((target("avx2"))) void cpus_at_avx2(const psModel *m, const int64_t *times,
                                                  int64_t t, psCpuMask *at) {
  __m256i at_t = _mm256_set1_epi64x(t);
  for (int w = 0, nw = ps_cpu_words(m->ncpu); w < nw; w++) at->w[w] = 0;
  int c = 0;
  for (; c + 4 <= m->ncpu; c += 4) {
    __m256i eq = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)&times[c]), at_t);
    at->w[c >> 6] |= (uint64_t)_mm256_movemask_pd(_mm256_castsi256_pd(eq)) << (c & 63);
  }
  cpus_at_from(m, times, t, at, c);
}

__attribute__((target("avx512f"))) psDue next_due_avx512(const psModel *m,
                                                                const psData *d) {
  __m512i tick = _mm512_set1_epi64(INT64_MAX), end = tick;
  int c = 0;
  for (; c + 8 <= m->ncpu; c += 8) {
    tick = _mm512_min_epi64(tick, _mm512_loadu_si512(&d->next_tick_ns[c]));
    end = _mm512_min_epi64(end, _mm512_loadu_si512(&d->burst_end_ns[c]));
  }
  psDue u = {_mm512_reduce_min_epi64(tick), _mm512_reduce_min_epi64(end)};
  return next_due_from(m, d, u, c);
}

__attribute__((target("avx512f"))) void cpus_at_avx512(const psModel *m, const int64_t *times,
                                                        int64_t t, psCpuMask *at) {
  __m512i at_t = _mm512_set1_epi64(t);
  for (int w = 0, nw = ps_cpu_words(m->ncpu); w < nw; w++) at->w[w] = 0;
  int c = 0;
  for (; c + 8 <= m->ncpu; c += 8)
    at->w[c >> 6] |= (uint64_t)_mm512_cmpeq_epi64_mask(_mm512_loadu_si512(&times[c]), at_t)
                     << (c & 63);
  cpus_at_from(m, times, t, at, c);
}
#endif

__attribute__((noinline, cold)) int scans_agree(const psModel *m, const psData *d,
                                                      char *err, int errlen) {
#ifdef PS_SCAN_X86
  const struct {
    const char *name;
    int supported;
    psDue (*next_due)(const psModel *, const psData *);
    void (*cpus_at)(const psModel *, const int64_t *, int64_t, psCpuMask *);
  } wide[] = {
      {"avx2", __builtin_cpu_supports("avx2"), next_due_avx2, cpus_at_avx2},
      {"avx512", __builtin_cpu_supports("avx512f"), next_due_avx512, cpus_at_avx512},
  };
  psDue s = next_due_scalar(m, d);
  psCpuMask tick_at = {{0}}, end_at = {{0}}, wide_tick_at = {{0}}, wide_end_at = {{0}};
  cpus_at_scalar(m, d->next_tick_ns, s.tick, &tick_at, ps_cpu_words(m->ncpu));
  cpus_at_scalar(m, d->burst_end_ns, s.burst_end, &end_at, ps_cpu_words(m->ncpu));
  for (int i = 0; i < 2; i++) {
    if (!wide[i].supported) continue;
    psDue w = wide[i].next_due(m, d);
    wide[i].cpus_at(m, d->next_tick_ns, s.tick, &wide_tick_at);
    wide[i].cpus_at(m, d->burst_end_ns, s.burst_end, &wide_end_at);
    const char *bad = w.tick != s.tick || w.burst_end != s.burst_end ? "next_due"
                      : !ps_cpumask_equal(&wide_tick_at, &tick_at) ||
                              !ps_cpumask_equal(&wide_end_at, &end_at)
                          ? "cpus_at"
                          : NULL;
    if (bad) {
      snprintf(err, errlen, "%s_%s differs from the scalar scan over %d CPUs", bad,
               wide[i].name, m->ncpu);
      return -1;
    }
  }
#endif
  return 0;
}
