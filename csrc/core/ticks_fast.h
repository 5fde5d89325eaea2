/* Batched and deferred ticks: where nothing else falls due among a busy
 * CPU's next ticks, the policy applies them at once (psHooks.tick_batch)
 * rather than one by one (run.c, deliver_ticks) -- on every CPU together
 * (batch_ticks), or on each CPU by itself when its policy allows
 * (defer_ticks, ticks_fast.c).  What the run loop calls at every instant
 * is inline here: out of line in ticks_fast.c, the call per instant cost
 * case (h) 2.8 % of its instructions per switch on 1 CPU and 4.2 % on 2
 * (bench_cachesim: 970 -> 997 and 1,080 -> 1,125); a call only past the
 * tests that most instants fail, 1 % on 1 CPU and 0.7 % on 2. */
#ifndef PS_TICKS_FAST_H
#define PS_TICKS_FAST_H
#include "engine_private.h"

#pragma GCC visibility push(hidden)

/* At a pause: every tick up to now has fallen due. */
void catch_up_all(const psModel *m, psData *d);

#pragma GCC visibility pop

/* Of the next k ticks, those that may pass at once: none at or after the
 * next series sample. */
static inline int64_t before_sample(const psModel *m, const psData *d, int64_t k) {
  if (m->rec_series) {
    uint64_t every = (uint64_t)m->series_every;
    int64_t room = (int64_t)(every - 1 - d->jiffies % every);
    if (k > room) k = room;
  }
  return k;
}

/* Every CPU computing, ticking together, with nothing due but ticks: the
 * policy applies as many of them as it can at once on every CPU
 * (hooks.tick_batch, asked for each CPU, then applied to all at the least
 * count), and they are accounted as deliver_ticks would have one by one.
 * A tick at the instant an event or the end of a burst falls due may be
 * among them: deliver_ticks runs before both at an instant.  No series
 * sample may fall among them.  e: the earliest event, or NULL; nw: the
 * machine's words of a CPU set (ps_cpu_words). */
static inline void batch_ticks(const psModel *m, psData *d, int64_t t_end, const psEvt *e,
                               int nw) {
  if (ps_cpumask_any_n(&ps_fast(d)->cpus_deferred, nw)) return;
  int64_t next = d->next_tick_ns[0], limit = t_end;
  if (e && e->time_ns < limit) limit = e->time_ns;
  if (limit - next < m->tick_ns) return;  /* not two ticks */
  for (int c = 0; c < m->ncpu; c++) {
    const psCpu *cpu = &d->cpu[c];
    if (d->task[cpu->curr].is_idle || cpu->need_resched) return;
    if (d->burst_end_ns[c] < limit) limit = d->burst_end_ns[c];
  }
  if (limit - next < m->tick_ns) return;  /* not two ticks */
  int64_t k = before_sample(m, d, (limit - next) / m->tick_ns + 1);
  if (k < 2) return;
  if (m->ncpu == 1) {
    k = m->hooks.tick_batch(m, d, 0, k, 1);
  } else {
    for (int c = 0; c < m->ncpu && k >= 2; c++) {
      int64_t n = m->hooks.tick_batch(m, d, c, k, 0);
      if (n < k) k = n;
    }
    if (k < 2) return;
    for (int c = 0; c < m->ncpu; c++) m->hooks.tick_batch(m, d, c, k, 1);
  }
  if (k <= 0) return;
  int64_t last = next + (k - 1) * m->tick_ns;
  for (int c = 0; c < m->ncpu; c++) {
    psCpu *cpu = &d->cpu[c];
    d->next_tick_ns[c] = last + m->tick_ns;
    cpu->ticks += k;
    cpu->busy_ticks += k;
    d->task[cpu->curr].cpu_ticks += k;
  }
  d->jiffies += (uint64_t)k;
  ps_count_add(&ps_fast(d)->ticks_batched, k * m->ncpu);
  advance_to(m, d, last);
}

/* Whether a run batches ticks: on CPUs that tick together. */
static inline int can_batch(const psModel *m) {
  return m->fast_paths & PS_FAST_BATCH && !(m->ncpu > 1 && m->stagger_ticks);
}

/* Whether a run defers ticks (ticks_fast.c, "Deferred ticks"). */
static inline int can_defer(const psModel *m) {
  return m->fast_paths & PS_FAST_DEFER && m->policy->tick_batch_local && m->ncpu > 1 &&
         !m->stagger_ticks;
}

/* When an instant ends: each busy CPU that ticked or settled at it may
 * skip its next ticks, up to jiffy end_jiffies (ticks_fast.c, "Deferred
 * ticks").  The ticks are counted in jiffies, not divided out of times: ticks
 * together, the next tick of every CPU is the next jiffy's, and at every
 * instant d->jiffies is up to date.  (A division costs tens of cycles, a
 * few of them per event were a third of the cost on 64 CPUs.) */
static inline void defer_ticks(const psModel *m, psData *d, uint64_t end_jiffies, int nw) {
  psFastState *f = ps_fast(d);
  /* word by word, each read and cleared before its CPUs are looked at
   * (tick_batch asking, apply=0, marks none fresh); the words past the
   * machine's CPUs stay empty */
  for (int w = 0; w < nw; w++) {
    uint64_t fresh = f->cpus_fresh.w[w];
    f->cpus_fresh.w[w] = 0;
    for (; fresh; fresh &= fresh - 1) {
      int c = w * 64 + __builtin_ctzll(fresh);
      const psCpu *cpu = &d->cpu[c];
      if (d->task[cpu->curr].is_idle || cpu->need_resched || d->jiffies >= end_jiffies) continue;
      /* a burst that ends by the tick after next settles the CPU by then */
      if (d->burst_end_ns[c] < d->next_tick_ns[c] + m->tick_ns) continue;
      int64_t k = before_sample(m, d, (int64_t)(end_jiffies - d->jiffies));
      if (k < 2) continue;
      int64_t n = m->hooks.tick_batch(m, d, c, k, 0);
      if (n < 2) continue;  /* one tick deferred saves nothing */
      f->defer[c].n = n;
      f->defer[c].asked_ns = d->now_ns;
      f->defer[c].jiffies = d->jiffies;
      d->next_tick_ns[c] += n * m->tick_ns;
      ps_cpu_set(&f->cpus_deferred, c);
    }
  }
}

#endif
