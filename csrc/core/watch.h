/* Behaviour invariants, watched as a run goes (watch.c): work conservation
 * (a CPU idle while a task that may run on it waits: Lozi et al., "The
 * Linux Scheduler: a Decade of Wasted Cores", EuroSys 2016, the first of
 * their invariants), starvation (a runnable task's longest wait for a
 * CPU) and, for a policy that measures it (psHooks.watch: the fair
 * policies), each task's lag against its policy's bound; each either
 * counted or made an assertion that stops the run at the instant it is
 * broken.  The per-task half (psTask.wait_max_ns, starved_ns) is kept by
 * the accounting in run.c, the lags by the policy through ps_watch_lag;
 * this is the per-run half and the per-instant check. */
#ifndef PS_WATCH_H
#define PS_WATCH_H
#include "engine_internal.h"

/* psModel.watch bits */
enum {
  PS_WATCH_ON = 1,            /* count idle-while-waiting windows */
  PS_WATCH_ASSERT_IDLE = 2,   /* stop at a window longer than idle_wait_ns */
  PS_WATCH_ASSERT_STARVE = 4, /* stop at a wait longer than starve_ns */
  PS_WATCH_ASSERT_LAG = 8,    /* stop at a lag past its policy's bound */
  PS_WATCH_LAG = 16,          /* measure the lags (psHooks.watch) */
  PS_WATCH_ASSERT_UNCHARGED = 32, /* stop at CPU time the ticks did not charge past uncharged_ns */
  PS_WATCH_ALL = 63,
};

/* psData.failed when a watched assertion stopped the run, and what
 * ps_run_until then returns (the binding raises InvariantError). */
#define PS_FAILED_WATCH 3
#define PS_RUN_BROKEN (-2)

/* The list of the tasks waiting for a CPU, kept while a watch is on (off,
 * it is empty and the links mean nothing), where a task's accounting enters
 * or leaves PS_ACCT_WAIT (run.c acct, ps_new_task): most recent first. */
static inline void ps_waiting_add(psData *d, psTask *t) {
  int32_t i = (int32_t)(t - d->task);
  t->waiting_prev = -1;
  t->waiting_next = d->watch.waiting_head;
  if (t->waiting_next >= 0) d->task[t->waiting_next].waiting_prev = i;
  d->watch.waiting_head = i;
  d->watch.nr_waiting++;
}
static inline void ps_waiting_remove(psData *d, psTask *t) {
  if (t->waiting_prev >= 0) d->task[t->waiting_prev].waiting_next = t->waiting_next;
  else d->watch.waiting_head = t->waiting_next;
  if (t->waiting_next >= 0) d->task[t->waiting_next].waiting_prev = t->waiting_prev;
  t->waiting_prev = t->waiting_next = -1;
  d->watch.nr_waiting--;
}

/* Task t's lag now, lag_ns of service its policy owes it (negative: it
 * got more than its share), measured by the policy while a watch is on
 * (psHooks.watch, and where a task leaves its queue): kept in its extremes.
 * bound_ns > 0 is the policy's bound, and broken, decided in the policy's
 * own arithmetic, says the lag is past it: the first such instant is the
 * task's lag_broken_ns, and the run's first and latest are kept
 * (psWatch.lag_first, lag_last) for the report and stop_on. */
static inline void ps_watch_lag(psData *d, psTask *t, int64_t lag_ns, int64_t bound_ns,
                                int broken) {
  if (t->lag_min_ns == PS_LAG_NONE || lag_ns < t->lag_min_ns) t->lag_min_ns = lag_ns;
  if (t->lag_max_ns == PS_LAG_NONE || lag_ns > t->lag_max_ns) t->lag_max_ns = lag_ns;
  if (__builtin_expect(!broken, 1)) return;
  psLagBreak b = {d->now_ns, lag_ns, bound_ns, t->pid, t->cpu};
  if (t->lag_broken_ns < 0) t->lag_broken_ns = d->now_ns;
  if (d->watch.lag_first.at_ns < 0) d->watch.lag_first = b;
  d->watch.lag_last = b;
}

/* Task t's CPU time grew (run.c, acct): under PS_WATCH_ASSERT_UNCHARGED,
 * the first time a task's CPU time passes what its ticks charged (the
 * tick-sampled accounting: cpu_ticks x the tick) by more than
 * uncharged_ns is kept for the stop at the end of the instant. */
static inline void ps_watch_charged(const psModel *m, psData *d, const psTask *t) {
  int64_t charged = t->cpu_ticks * m->tick_ns;
  if (t->cpu_ns - charged <= m->uncharged_ns || d->watch.uncharged.at_ns >= 0) return;
  d->watch.uncharged = (psChargeBreak){d->now_ns, t->cpu_ns, charged, t->pid, t->cpu};
}

/* Watch bits and thresholds from now; turned on, the list is made from the
 * task slots (in slot order: after that, most recent first). */
void ps_watch_set(psModel *m, psData *d, int bits, int64_t idle_wait_ns, int64_t starve_ns,
                  int64_t uncharged_ns);

/* After an instant has settled: the policy's own look (psHooks.watch),
 * open or close the idle-while-waiting window, and under an assertion stop
 * the run (ps_fail) at the instant it is broken. */
void ps_watch_instant(const psModel *m, psData *d);

/* Under an assertion, the instant it would be broken if nothing changed
 * before (INT64_MAX none): the run stops there, so that it is found at
 * that instant however the run is cut. */
int64_t ps_watch_deadline(const psModel *m, const psData *d);

/* Debug check: nr_waiting counts the tasks waiting for a CPU. */
int ps_watch_check(const psModel *m, const psData *d, char *err, int errlen);

/* The windows up to now, the one open included. */
typedef struct psWatchReport {
  int64_t total_ns, longest_ns, windows;
  int64_t first_ns;               /* the first instant one was longer than idle_wait_ns, -1 none */
  int32_t first_idle_cpu, first_pid, first_pid_cpu;
  psLagBreak lag_first;           /* the first lag seen past its bound (at_ns -1 none) */
  psChargeBreak uncharged;        /* the first CPU time uncharged past uncharged_ns */
} psWatchReport;
void ps_watch_report(const psModel *m, const psData *d, psWatchReport *out);

#endif
