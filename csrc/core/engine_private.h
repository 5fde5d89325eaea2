/* What the engine's files (engine.c, run.c, scan.c, ticks_fast.c) share,
 * and a policy never sees: policy_lib.h does not include this header. */
#ifndef PS_ENGINE_PRIVATE_H
#define PS_ENGINE_PRIVATE_H
#include "engine_internal.h"

#pragma GCC visibility push(hidden)

/* Push one record into ring r of d, as the model's recording options say
 * (engine.c); `what` names the buffer in the error of a full one. */
void ps_ring_push(const psModel *m, psData *d, psRing *r, const void *rec, const char *what);

/* Queue source s's next firing, if it has one; 0, or -1 when memory ran
 * out (nothing queued, nothing failed).  engine.c. */
int ps_source_schedule(const psModel *m, psData *d, int s);

#pragma GCC visibility pop

/* ---- the clock ---- */

/* CPU c's running task has computed up to t: its burst and the CPU's busy
 * time are brought up to date.  It is due when its burst is done. */
static inline void sync_cpu(psData *d, int c, int64_t t) {
  psCpu *cpu = &d->cpu[c];
  if (cpu->run_since_ns == t) return;
  psTask *cur = &d->task[cpu->curr];
  if (cur->is_idle) return;
  int64_t from = cpu->run_since_ns > cpu->overhead_until_ns ? cpu->run_since_ns
                                                             : cpu->overhead_until_ns;
  if (t > from) {
    int64_t done = t - from;
    if (done >= cur->burst_left_ns) {
      cur->burst_left_ns = 0;
      d->cpus_due |= 1ULL << c;
    } else {
      cur->burst_left_ns -= done;
    }
  }
  cpu->busy_ns += t - cpu->run_since_ns;
  cpu->run_since_ns = t;
}

/* The clock moves to t.  Only the CPUs whose burst ends by then are brought
 * up to date now; the others when they settle, and all at the end of a run
 * (their bursts' ends do not move meanwhile, and taking a stretch of
 * computing in pieces sums to taking it at once). */
static inline void advance_to(const psModel *m, psData *d, int64_t t) {
  for (int c = 0; c < m->ncpu; c++)
    if (d->burst_end_ns[c] <= t) sync_cpu(d, c, t);
  d->now_ns = t;
}

static inline void sync_all(const psModel *m, psData *d) {
  for (int c = 0; c < m->ncpu; c++) sync_cpu(d, c, d->now_ns);
}


#endif
