/* Behaviour invariants, watched as a run goes (watch.c): work conservation
 * (a CPU idle while a task that may run on it waits: Lozi et al., "The
 * Linux Scheduler: a Decade of Wasted Cores", EuroSys 2016, the first of
 * their invariants) and starvation (a runnable task's longest wait for a
 * CPU), each either counted or made an assertion that stops the run at the
 * instant it is broken.  The per-task half (psTask.wait_max_ns,
 * starved_ns) is kept by the accounting in run.c; this is the per-run
 * half and the per-instant check. */
#ifndef PS_WATCH_H
#define PS_WATCH_H
#include "engine_internal.h"

/* psModel.watch bits */
enum {
  PS_WATCH_ON = 1,            /* count idle-while-waiting windows */
  PS_WATCH_ASSERT_IDLE = 2,   /* stop at a window longer than idle_wait_ns */
  PS_WATCH_ASSERT_STARVE = 4, /* stop at a wait longer than starve_ns */
};

/* psData.failed when a watched assertion stopped the run, and what
 * ps_run_until then returns (the binding raises InvariantError). */
#define PS_FAILED_WATCH 3
#define PS_RUN_BROKEN (-2)

/* After an instant has settled: open or close the idle-while-waiting
 * window, and under an assertion stop the run (ps_fail) at the instant it
 * is broken. */
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
} psWatchReport;
void ps_watch_report(const psModel *m, const psData *d, psWatchReport *out);

#endif
