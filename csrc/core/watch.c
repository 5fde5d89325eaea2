/* Behaviour invariants as a run goes (watch.h). */
#include <stdio.h>

#include "watch.h"

/* An idle CPU and a waiting task that may run on it, or pid 0 when there
 * is none.  O(CPUs) while no task waits; with tasks waiting and a CPU idle
 * it looks at the waiting tasks, on their list. */
typedef struct {
  int32_t idle_cpu, pid, pid_cpu;
} pair;

static pair idle_while_waiting(const psModel *m, const psData *d) {
  pair none = {-1, 0, -1};
  if (!d->watch.nr_waiting) return none;
  psCpuMask idle;
  ps_cpumask_zero(&idle);
  for (int c = 0; c < m->ncpu; c++)
    if (d->task[d->cpu[c].curr].is_idle) ps_cpu_set(&idle, c);
  if (!ps_cpumask_any(&idle)) return none;
  /* the first on the list: the one that began to wait last */
  for (int32_t i = d->watch.waiting_head; i >= 0; i = d->task[i].waiting_next) {
    const psTask *t = &d->task[i];
    int can = ps_cpumask_next_and(&t->cpus_allowed, &idle, 0);
    if (can < PS_MAX_CPUS) return (pair){can, t->pid, t->cpu};
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
  for (int32_t i = d->watch.waiting_head; i >= 0; i = d->task[i].waiting_next) {
    const psTask *t = &d->task[i];
    if (!oldest || t->since_ns < oldest->since_ns) oldest = t;
  }
  return oldest && d->now_ns - oldest->since_ns > m->starve_ns ? oldest : NULL;
}

void ps_watch_set(psModel *m, psData *d, int bits, int64_t idle_wait_ns, int64_t starve_ns,
                  int64_t uncharged_ns) {
  if (!m->watch && bits) {
    d->watch.waiting_head = -1;
    d->watch.nr_waiting = 0;
    for (int32_t i = d->ntask - 1; i >= m->ncpu; i--) {
      psTask *t = &d->task[i];
      if (t->pid && t->acct == PS_ACCT_WAIT) ps_waiting_add(d, t);
    }
  } else if (m->watch && !bits) {
    if (d->watch.open) close_window(m, d);
    d->watch.waiting_head = -1;
    d->watch.nr_waiting = 0;
  }
  m->watch = bits;
  m->idle_wait_ns = idle_wait_ns;
  m->starve_ns = starve_ns;
  m->uncharged_ns = uncharged_ns;
}

void ps_watch_instant(const psModel *m, psData *d) {
  psWatch *w = &d->watch;
  if (m->watch & PS_WATCH_LAG) m->hooks.watch(m, d);
  if (m->watch & PS_WATCH_ASSERT_LAG && w->lag_last.at_ns == d->now_ns) {
    /* seen at this instant, where the policy's accounting showed it */
    const psLagBreak *b = &w->lag_last;
    ps_fail(d, "lag bound broken at t=%lld ns: pid %d's lag %lld ns is outside +-%lld ns (on cpu %d)",
            (long long)b->at_ns, b->pid, (long long)b->lag_ns, (long long)b->bound_ns, b->cpu);
    d->failed = PS_FAILED_WATCH;
    return;
  }
  if (m->watch & PS_WATCH_ASSERT_UNCHARGED && w->uncharged.at_ns == d->now_ns) {
    const psChargeBreak *b = &w->uncharged;
    ps_fail(d, "accounting broken at t=%lld ns: pid %d ran %lld ns but its ticks charged %lld ns, "
               "%lld ns uncharged, more than %lld ns (on cpu %d)",
            (long long)b->at_ns, b->pid, (long long)b->cpu_ns, (long long)b->charged_ns,
            (long long)(b->cpu_ns - b->charged_ns), (long long)m->uncharged_ns, b->cpu);
    d->failed = PS_FAILED_WATCH;
    return;
  }
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
    for (int32_t i = d->watch.waiting_head; i >= 0; i = d->task[i].waiting_next) {
      const psTask *p = &d->task[i];
      if (p->since_ns + m->starve_ns + 1 < t) t = p->since_ns + m->starve_ns + 1;
    }
  }
  return t;
}

/* Also what a loaded snapshot's list is held to: every link an index of a
 * task slot, each task waiting for a CPU on it once, no other task. */
int ps_watch_check(const psModel *m, const psData *d, char *err, int errlen) {
  if (!m->watch) {
    if (d->watch.waiting_head != -1 || d->watch.nr_waiting || d->watch.open) {
      snprintf(err, errlen, "no watch is on, but its list or window is not empty");
      return -1;
    }
    return 0;
  }
  int64_t n = 0;
  for (int32_t i = m->ncpu; i < d->ntask; i++)
    n += d->task[i].pid && d->task[i].acct == PS_ACCT_WAIT;
  if (n != d->watch.nr_waiting) {
    snprintf(err, errlen, "watch.nr_waiting=%lld but %lld tasks wait for a CPU",
             (long long)d->watch.nr_waiting, (long long)n);
    return -1;
  }
  int64_t seen = 0;
  for (int32_t prev = -1, i = d->watch.waiting_head; i != -1; prev = i, i = d->task[i].waiting_next) {
    const psTask *t = i >= m->ncpu && i < d->ntask ? &d->task[i] : NULL;
    if (!t || !t->pid || t->acct != PS_ACCT_WAIT || t->waiting_prev != prev || ++seen > n) {
      snprintf(err, errlen, "the list of tasks waiting for a CPU is broken at slot %d", i);
      return -1;
    }
  }
  if (seen != n) {
    snprintf(err, errlen, "the list of tasks waiting for a CPU holds %lld of %lld",
             (long long)seen, (long long)n);
    return -1;
  }
  return 0;
}

void ps_watch_report(const psModel *m, const psData *d, psWatchReport *out) {
  const psWatch *w = &d->watch;
  *out = (psWatchReport){w->total_ns, w->longest_ns, w->windows, w->first_ns,
                         w->first_idle_cpu, w->first_pid, w->first_pid_cpu, w->lag_first,
                         w->uncharged};
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
