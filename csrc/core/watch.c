/* Behaviour invariants as a run goes (watch.h). */
#include <stdio.h>

#include "watch.h"

/* An idle CPU and a waiting task that may run on it, or pid 0 when there
 * is none.  O(CPUs) while no task waits; with tasks waiting and a CPU idle
 * it looks at the waiting tasks (the only time a task slot is visited). */
typedef struct {
  int32_t idle_cpu, pid, pid_cpu;
} pair;

static pair idle_while_waiting(const psModel *m, const psData *d) {
  pair none = {-1, 0, -1};
  if (!d->watch.nr_waiting) return none;
  uint64_t idle = 0;
  for (int c = 0; c < m->ncpu; c++)
    if (d->task[d->cpu[c].curr].is_idle) idle |= 1ULL << c;
  if (!idle) return none;
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    uint64_t can = t->cpus_allowed & idle;
    if (t->pid && t->acct == PS_ACCT_WAIT && can)
      return (pair){__builtin_ctzll(can), t->pid, t->cpu};
  }
  return none;
}

/* The window [since, now) closes: count it, and note the first that was
 * longer than the threshold. */
static void close_window(const psModel *m, psData *d) {
  psWatch *w = &d->watch;
  int64_t len = d->now_ns - w->since_ns;
  w->open = 0;
  w->total_ns += len;
  if (len > w->longest_ns) w->longest_ns = len;
  w->windows++;
  if (len > m->idle_wait_ns && w->first_ns < 0) {
    w->first_ns = w->since_ns + m->idle_wait_ns;
    w->first_idle_cpu = w->idle_cpu;
    w->first_pid = w->pid;
    w->first_pid_cpu = w->pid_cpu;
  }
}

/* The first task that has waited longer than starve_ns by now, or NULL. */
static const psTask *starving(const psModel *m, const psData *d) {
  const psTask *oldest = NULL;
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    if (t->pid && t->acct == PS_ACCT_WAIT && (!oldest || t->since_ns < oldest->since_ns))
      oldest = t;
  }
  return oldest && d->now_ns - oldest->since_ns > m->starve_ns ? oldest : NULL;
}

void ps_watch_instant(const psModel *m, psData *d) {
  psWatch *w = &d->watch;
  pair p = idle_while_waiting(m, d);
  if (p.pid && !w->open) {
    w->open = 1;
    w->since_ns = d->now_ns;
    w->idle_cpu = p.idle_cpu;
    w->pid = p.pid;
    w->pid_cpu = p.pid_cpu;
  } else if (!p.pid && w->open) {
    close_window(m, d);
  }
  if (m->watch & PS_WATCH_ASSERT_IDLE && w->open && d->now_ns - w->since_ns > m->idle_wait_ns)
    ps_fail(d, "work conservation broken at t=%lld ns: cpu %d idle for more than %lld ns "
               "while pid %d waited on cpu %d (since t=%lld ns)",
            (long long)(w->since_ns + m->idle_wait_ns), w->idle_cpu, (long long)m->idle_wait_ns,
            w->pid, w->pid_cpu, (long long)w->since_ns);
  if (d->failed) d->failed = PS_FAILED_WATCH;
  if (m->watch & PS_WATCH_ASSERT_STARVE) {
    const psTask *t = starving(m, d);
    if (t)
      ps_fail(d, "starvation at t=%lld ns: pid %d waited for a CPU more than %lld ns (runnable "
                 "since t=%lld ns, on cpu %d)",
              (long long)(t->since_ns + m->starve_ns), t->pid, (long long)m->starve_ns,
              (long long)t->since_ns, t->cpu);
    if (d->failed) d->failed = PS_FAILED_WATCH;
  }
}

int64_t ps_watch_deadline(const psModel *m, const psData *d) {
  int64_t t = INT64_MAX;
  /* one nanosecond past the threshold: the first instant it is exceeded */
  if (m->watch & PS_WATCH_ASSERT_IDLE && d->watch.open)
    t = d->watch.since_ns + m->idle_wait_ns + 1;
  if (m->watch & PS_WATCH_ASSERT_STARVE) {
    for (int32_t i = m->ncpu; i < d->ntask; i++) {
      const psTask *p = &d->task[i];
      if (p->pid && p->acct == PS_ACCT_WAIT && p->since_ns + m->starve_ns + 1 < t)
        t = p->since_ns + m->starve_ns + 1;
    }
  }
  return t;
}

int ps_watch_check(const psModel *m, const psData *d, char *err, int errlen) {
  int64_t n = 0;
  for (int32_t i = m->ncpu; i < d->ntask; i++)
    n += d->task[i].pid && d->task[i].acct == PS_ACCT_WAIT;
  if (n != d->watch.nr_waiting) {
    snprintf(err, errlen, "watch.nr_waiting=%lld but %lld tasks wait for a CPU",
             (long long)d->watch.nr_waiting, (long long)n);
    return -1;
  }
  return 0;
}

void ps_watch_report(const psModel *m, const psData *d, psWatchReport *out) {
  const psWatch *w = &d->watch;
  *out = (psWatchReport){w->total_ns, w->longest_ns, w->windows, w->first_ns,
                         w->first_idle_cpu, w->first_pid, w->first_pid_cpu};
  if (!w->open) return;
  int64_t len = d->now_ns - w->since_ns;
  out->total_ns += len;
  if (len > out->longest_ns) out->longest_ns = len;
  out->windows++;
  if (len > m->idle_wait_ns && out->first_ns < 0) {
    out->first_ns = w->since_ns + m->idle_wait_ns;
    out->first_idle_cpu = w->idle_cpu;
    out->first_pid = w->pid;
    out->first_pid_cpu = w->pid_cpu;
  }
}
