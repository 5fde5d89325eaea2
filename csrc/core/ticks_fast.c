/* Deferred ticks.  Where every CPU must be free of events for batch_ticks,
 * on many CPUs some CPU nearly always has one (640 sleepers on 64 CPUs wake
 * at almost every tick), and each busy CPU went on ticking one by one.  A
 * policy whose tick_batch windows only its own CPU's hooks can see
 * (psPolicy.tick_batch_local) lets a busy CPU instead skip its next n
 * ticks when an instant ends (n from tick_batch, apply=0, before any
 * series sample and the end of the run); the first hook to act on the CPU
 * after some of them have fallen due -- its tick after the window, its
 * process context, a wakeup onto it, a migration to it, the end of the
 * run -- applies those (ps_catch_up) with the clock of the instant that
 * asked, so the policy sees what tick_batch on one CPU sees.  Ticks at an
 * instant come before its events, so a tick at the instant of the hook
 * is among them.  CPU 0's deferred ticks are the jiffies: jiffies counts
 * them from the clock at each instant.
 *
 * defer_ticks, which defers them as each instant ends, is inline in
 * ticks_fast.h (with batch_ticks); here they are applied. */
#include "ticks_fast.h"

/* tick_batch on CPU c with the clock of the instant that deferred its ticks
 * (out of line: inline, it cost the trusted path 3 instructions a switch). */
__attribute__((noinline)) static int64_t tick_batch_as_asked(const psModel *m, psData *d, int c, int64_t k, int apply) {
  const psFastState *f = ps_fast(d);
  int64_t now = d->now_ns;
  uint64_t jiffies = d->jiffies;
  d->now_ns = f->defer[c].asked_ns;
  d->jiffies = f->defer[c].jiffies;
  int64_t n = m->hooks.tick_batch(m, d, c, k, apply);
  d->now_ns = now;
  d->jiffies = jiffies;
  return n;
}

void ps_catch_up_ticks(const psModel *m, psData *d, int c) {
  psCpu *cpu = &d->cpu[c];
  psFastState *f = ps_fast(d);
  int64_t k = (int64_t)(d->jiffies - f->defer[c].jiffies);
  if (k > f->defer[c].n) k = f->defer[c].n;
  ps_cpu_clear(&f->cpus_deferred, c);
  f->defer[c].n = 0;
  d->next_tick_ns[c] = ps_jiffy_time(m, f->defer[c].jiffies + 1 + (uint64_t)k);
  if (!k) return;
  int trusted = m->policy->tick_batch_local == PS_TICK_BATCH_TRUSTED;
  if (trusted && m->debug_checks) {
    int64_t can = tick_batch_as_asked(m, d, c, k, 0);
    if (can != k) {
      ps_fail(d, "policy %s, asked again, can take %lld of the %lld deferred ticks on cpu %d "
              "it said it could", m->policy->name, (long long)can, (long long)k, c);
      return;
    }
  }
  /* trusted: k of the ticks it said it could take, nothing done on the CPU
   * since -- no second asking, no clock to set back (bench_cachesim (h):
   * 1,062 -> 1,038 instructions per switch on 2 CPUs, 1,051 -> 1,025 on 64) */
  int64_t n = trusted ? m->hooks.tick_batch(m, d, c, k, 2) : tick_batch_as_asked(m, d, c, k, 1);
  if (n != k) {
    ps_fail(d, "policy %s applied %lld of %lld deferred ticks on cpu %d", m->policy->name,
            (long long)n, (long long)k, c);
    return;
  }
  cpu->ticks += k;
  cpu->busy_ticks += k;
  d->task[cpu->curr].cpu_ticks += k;
  ps_count_add(&f->ticks_deferred, k);
}

/* At a pause: every tick up to now has fallen due. */
void catch_up_all(const psModel *m, psData *d) {
  psFastState *f = ps_fast(d);
  if (ps_cpu_test(&f->cpus_deferred, 0)) d->jiffies = (uint64_t)(d->now_ns / m->tick_ns);
  for (int c; (c = ps_cpumask_first(&f->cpus_deferred)) < PS_MAX_CPUS;) ps_catch_up_ticks(m, d, c);
}
