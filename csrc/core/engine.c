/* The simulator's state: the task fields' table, failures and records,
 * creating, copying and freeing a state, channels, sources, task creation
 * and spawn, and the invariants.  Scheduling decisions are the policy's
 * (policy.h).
 *
 * The engine is in several files: this one; run.c, the run loop (time,
 * wakeups, the context switch, ticks and events at an instant); scan.c,
 * the per-instant scans' wide forms; ticks_fast.c, batched and deferred
 * ticks; events.c, the event queue and its timer wheel.  What they share
 * and a policy never sees is in engine_private.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_private.h"
#include "watch.h"

#define TASK_FIELD(name, type, doc) {#name, type, offsetof(psTask, name), doc, PS_AT_TASK}
const psFieldInfo ps_task_fields[] = {
    TASK_FIELD(pid, PS_F_I32, "process id (0: idle task)"),
    TASK_FIELD(ppid, PS_F_I32, "pid of the parent, 0 if spawned"),
    TASK_FIELD(state, PS_F_I32, "0 running, 1 interruptible, 2 uninterruptible, 4 zombie, 8 dead"),
    TASK_FIELD(policy, PS_F_I32, "0 SCHED_NORMAL, 1 SCHED_FIFO, 2 SCHED_RR"),
    TASK_FIELD(rt_priority, PS_F_I32, "real-time priority 1..99 (0 for normal tasks)"),
    TASK_FIELD(prio, PS_F_I32, "dynamic priority (lower is better)"),
    TASK_FIELD(static_prio, PS_F_I32, "priority from nice"),
    TASK_FIELD(nice, PS_F_I32, "nice value -20..19"),
    TASK_FIELD(time_slice, PS_F_I32, "ticks left in the timeslice"),
    TASK_FIELD(cpu, PS_F_I32, "CPU it runs or last ran on"),
    TASK_FIELD(cpus_allowed, PS_F_U64, "affinity: bit i set if it may run on CPU i (CPUs 0..63)"),
    TASK_FIELD(on_rq, PS_F_I32, "1 if queued on its CPU's runqueue (runnable)"),
    TASK_FIELD(cpu_ns, PS_F_I64, "CPU time, ns"),
    TASK_FIELD(wait_ns, PS_F_I64, "runnable but waiting, ns"),
    TASK_FIELD(sleep_ns, PS_F_I64, "sleeping, ns"),
    TASK_FIELD(cpu_ticks, PS_F_I64, "ticks charged (tick-sampled)"),
    TASK_FIELD(nvcsw, PS_F_I64, "voluntary switches (blocked)"),
    TASK_FIELD(nivcsw, PS_F_I64, "involuntary switches (preempted, expired, yielded)"),
    TASK_FIELD(nr_wakeups, PS_F_I64, "wakeups"),
    TASK_FIELD(nr_migrations, PS_F_I64, "migrations between CPUs"),
    TASK_FIELD(lat_count, PS_F_I64, "wakeup-to-run latencies measured"),
    TASK_FIELD(lat_sum_ns, PS_F_I64, "sum of wakeup-to-run latencies, ns"),
    TASK_FIELD(lat_max_ns, PS_F_I64, "largest wakeup-to-run latency, ns"),
    TASK_FIELD(wait_max_ns, PS_F_I64, "longest wait for a CPU while runnable, ns (the one in progress included)"),
    TASK_FIELD(starved_ns, PS_F_I64, "when a wait first passed the starvation threshold, ns (-1 never; sim.watch)"),
    TASK_FIELD(lag_min_ns, PS_F_I64, "most negative lag seen while watched, ns of service (fair presets; INT64_MIN none)"),
    TASK_FIELD(lag_max_ns, PS_F_I64, "most positive lag seen while watched, ns of service (fair presets; INT64_MIN none)"),
    TASK_FIELD(lag_broken_ns, PS_F_I64, "when its lag was first seen past its policy's bound, ns (-1 never; sim.watch)"),
    TASK_FIELD(start_ns, PS_F_I64, "creation time, ns"),
    TASK_FIELD(exit_ns, PS_F_I64, "exit time, ns (-1 while alive)"),
};
const int ps_ntask_fields = (int)(sizeof(ps_task_fields) / sizeof(ps_task_fields[0]));

int64_t psu_field_read(const void *base, const psFieldInfo *f) {
  const unsigned char *p = (const unsigned char *)base + f->offset;
  switch (f->type) {
    case PS_F_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case PS_F_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { int64_t v; memcpy(&v, p, 8); return v; }
  }
}

void psu_field_write(void *base, const psFieldInfo *f, int64_t v) {
  unsigned char *p = (unsigned char *)base + f->offset;
  if (f->type == PS_F_I32) { int32_t x = (int32_t)v; memcpy(p, &x, 4); }
  else if (f->type == PS_F_U32) { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); }
  else memcpy(p, &v, 8);
}

void ps_fail(psData *d, const char *fmt, ...) {
  if (d->failed) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->errmsg, sizeof(d->errmsg), fmt, ap);
  va_end(ap);
  d->failed = 1;
}

void ps_ring_push(const psModel *m, psData *d, psRing *r, const void *rec, const char *what) {
  /* with counters only (no event log), a run must go on for ever in bounded
   * memory: the latency records then keep the newest, while the per-task
   * latency counters stay exact */
  int overwrite = m->overwrite || ((r == &d->latencies || r == &d->periodic) && !m->rec_events);
  int rc = psu_ring_push(r, rec, m->max_trace_bytes, overwrite);
  if (rc == PS_RING_OK || d->trace_full || d->failed) return;
  d->trace_full = 1;
  if (rc == PS_RING_FULL)
    snprintf(d->errmsg, sizeof d->errmsg,
             "the %s buffer is full (max_trace_bytes=%lld); raise max_trace_bytes, clear the "
             "records (clear_records), or choose on_full='overwrite'", what,
             (long long)m->max_trace_bytes);
  else
    snprintf(d->errmsg, sizeof d->errmsg, "out of memory while recording %s", what);
}

void ps_record_periodic(const psModel *m, psData *d, const psPeriodicRec *r) {
  ps_ring_push(m, d, &d->periodic, r, "periodic");
}

void ps_livelock(psData *d) {
  /* the instant stays livelocked, its count no higher: each further run
   * fails the same way, and the state stays one a snapshot may hold */
  d->instant_actions = ps_max_actions(d) + 1;
  ps_fail(d, "livelock at t=%lld ns: %lld actions without time passing (a loop of zero-length "
               "run/io, or tasks waking each other without computing?)",
            (long long)d->now_ns, (long long)ps_max_actions(d));
}

void ps_log_event(const psModel *m, psData *d, int kind, int cpu, const psTask *p, int other,
                  int prio, int64_t value) {
  psEventRec e = {d->now_ns, value, p ? p->pid : -1, other, cpu, (int16_t)kind, (int16_t)prio};
  ps_ring_push(m, d, &d->events, &e, "event log");
}

psTask *ps_task_by_pid(const psModel *m, const psData *d, int pid) {
  if (pid < 1 || pid >= d->next_pid) return NULL;
  int32_t i = psu_pids_find(&((const psFastState *)(const void *)d->fast)->pids, pid);
  return i >= 0 ? &d->task[i] : NULL;
}

int ps_pids_rebuild(const psModel *m, psData *d) {
  psPids *h = &ps_fast(d)->pids;
  psu_pids_free(h);
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    int32_t pid = d->task[i].pid;
    if (pid && (psu_pids_find(h, pid) >= 0 || psu_pids_insert(h, pid, i))) return -1;
  }
  return 0;
}

int ps_exited_by_pid(const psData *d, int pid, psTask *out) {
  const psRing *r = &d->exited;
  for (int64_t k = 0; pid > 0 && k < r->n; k++) {
    const psTask *t = psu_ring_at(r, k);
    if (t->pid == pid) {
      *out = *t;
      return 1;
    }
  }
  return 0;
}

const psFieldInfo *ps_field_info(const psModel *m, int i) {
  return i < ps_ntask_fields ? &ps_task_fields[i] : &m->policy->task_fields[i - ps_ntask_fields];
}

int ps_field_index(const psModel *m, const char *name) {
  for (int i = 0; i < ps_nfields(m); i++)
    if (!strcmp(ps_field_info(m, i)->name, name)) return i;
  return -1;
}

int64_t ps_task_value(const psModel *m, const psData *d, const psTask *t, int i) {
  const psFieldInfo *f = ps_field_info(m, i);
  if (f->at == PS_AT_PRIV) return psu_field_read(t->priv, f);
  int64_t v = psu_field_read(t, f);
  int64_t waited = t->acct == PS_ACCT_WAIT ? d->now_ns - t->since_ns : 0;
  if (f->offset == offsetof(psTask, wait_max_ns)) return waited > v ? waited : v;
  if (f->offset == offsetof(psTask, starved_ns))
    return v < 0 && waited > m->starve_ns ? t->since_ns + m->starve_ns : v;
  /* the counter of the interval in progress has not been charged yet */
  int open = f->offset == offsetof(psTask, cpu_ns)    ? PS_ACCT_RUN
             : f->offset == offsetof(psTask, wait_ns)  ? PS_ACCT_WAIT
             : f->offset == offsetof(psTask, sleep_ns) ? PS_ACCT_SLEEP : -1;
  return t->acct == open ? v + d->now_ns - t->since_ns : v;
}

/* ---- state ---- */

static void task_blank(psTask *t) {
  memset(t, 0, sizeof(*t));
  t->wait_chan = -1;
  t->wait_next = -1;
  t->migrate_to = -1;
  t->woken_ns = -1;
  t->exit_ns = -1;
  t->starved_ns = -1;
  t->lag_min_ns = t->lag_max_ns = PS_LAG_NONE;
  t->lag_broken_ns = -1;
  t->waiting_prev = t->waiting_next = -1;
  t->acct = PS_ACCT_NONE;
}

static int grow_tasks(psData *d, int32_t need) {
  if (need <= d->cap_task) return 0;
  int32_t cap = d->cap_task ? d->cap_task : 16;
  while (cap < need) cap *= 2;
  psTask *t = realloc(d->task, (size_t)cap * sizeof(psTask));
  if (!t) return -1;
  d->task = t;
  d->cap_task = cap;
  return 0;
}

int ps_data_init(const psModel *m, psData *d, char *err, int errlen) {
  memset(d, 0, sizeof(*d));
  psu_ring_init(&d->events, sizeof(psEventRec));
  psu_ring_init(&d->latencies, sizeof(psLatencyRec));
  psu_ring_init(&d->periodic, sizeof(psPeriodicRec));
  psu_ring_init(&d->series, sizeof(psSampleRec));
  psu_ring_init(&d->exited, sizeof(psTask));
  psu_evq_init(&d->evq, m->tick_ns, !(m->fast_paths & PS_FAST_WHEEL));
  d->next_pid = 1;
  d->free_slot = -1;
  d->watch.first_ns = -1;
  d->watch.waiting_head = -1;
  d->watch.first_idle_cpu = d->watch.first_pid_cpu = -1;
  d->watch.lag_first = d->watch.lag_last = (psLagBreak){-1, 0, 0, -1, -1};
  d->watch.uncharged = (psChargeBreak){-1, 0, 0, -1, -1};
  d->cpu = calloc((size_t)m->ncpu, sizeof(psCpu));
  d->rq = calloc((size_t)m->ncpu, m->rq_stride);
  if (!d->cpu || !d->rq || grow_tasks(d, m->ncpu)) goto nomem;
  for (int c = 0; c < m->ncpu; c++) {
    psTask *idle = &d->task[c];
    task_blank(idle);
    idle->is_idle = 1;
    idle->cpu = c;
    idle->prio = idle->static_prio = m->policy->max_prio;
    idle->cpus_allowed = ps_cpumask_of(c);
    snprintf(idle->name, PS_NAME_LEN, "swapper/%d", c);
    psCpu *cpu = &d->cpu[c];
    cpu->curr = cpu->idle = c;
    d->next_tick_ns[c] = m->tick_ns + (m->stagger_ticks ? c * (m->tick_ns / m->ncpu) : 0);
  }
  d->ntask = m->ncpu;
  for (int c = 0; c < m->ncpu; c++) m->hooks.init_rq(m, d, c);
  if (m->nchan && ps_ensure_channels((psModel *)m, d, m->nchan, err, errlen)) goto fail;
  return 0;
nomem:
  snprintf(err, errlen, "out of memory creating the simulator state");
fail:
  ps_data_free(d);
  return -1;
}

void ps_data_free(psData *d) {
  free(d->cpu);
  free(d->rq);
  free(d->task);
  free(d->chan);
  free(d->src);
  psu_pids_free(&ps_fast(d)->pids);
  psu_evq_free(&d->evq);
  psu_ring_free(&d->events);
  psu_ring_free(&d->latencies);
  psu_ring_free(&d->periodic);
  psu_ring_free(&d->series);
  psu_ring_free(&d->exited);
  memset(d, 0, sizeof(*d));
}

static void *dup_bytes(const void *p, size_t n, int *bad) {
  if (!n) return NULL;
  void *q = malloc(n);
  if (!q) { *bad = 1; return NULL; }
  memcpy(q, p, n);
  return q;
}

int ps_data_copy(const psModel *m, psData *dst, const psData *src) {
  int bad = 0;
  *dst = *src;
  dst->cpu = dup_bytes(src->cpu, (size_t)m->ncpu * sizeof(psCpu), &bad);
  dst->rq = dup_bytes(src->rq, (size_t)m->ncpu * m->rq_stride, &bad);
  dst->task = dup_bytes(src->task, (size_t)src->cap_task * sizeof(psTask), &bad);
  dst->chan = dup_bytes(src->chan, (size_t)src->nchan * sizeof(psChannel), &bad);
  dst->src = dup_bytes(src->src, (size_t)src->nsrc * sizeof(psSourceState), &bad);
  bad |= psu_pids_copy(&ps_fast(dst)->pids, &((const psFastState *)(const void *)src->fast)->pids);
  bad |= psu_evq_copy(&dst->evq, &src->evq);
  bad |= psu_ring_copy(&dst->events, &src->events);
  bad |= psu_ring_copy(&dst->latencies, &src->latencies);
  bad |= psu_ring_copy(&dst->periodic, &src->periodic);
  bad |= psu_ring_copy(&dst->series, &src->series);
  bad |= psu_ring_copy(&dst->exited, &src->exited);
  if (bad) {
    ps_data_free(dst);
    return -1;
  }
  return 0;
}

int ps_ensure_channels(psModel *m, psData *d, int n, char *err, int errlen) {
  if (n > d->nchan) {
    /* room for a power of two of them: Python adds channels one at a time
     * (a program's new name), and each then costs O(1), not a copy of all
     * (realloc within the block it has returns it as it is) */
    size_t room = 8;
    while (room < (size_t)n) room *= 2;
    psChannel *c = realloc(d->chan, room * sizeof(psChannel));
    if (!c) {
      snprintf(err, errlen, "out of memory adding channels");
      return -1;
    }
    for (int i = d->nchan; i < n; i++) {
      c[i].count = 0;
      c[i].head = c[i].tail = -1;
    }
    d->chan = c;
    d->nchan = n;
  }
  if (n > m->nchan) m->nchan = n;
  return 0;
}

/* ---- sources ---- */

/* Queue source s's next firing, if it has one; 0, or -1 when memory ran
 * out (nothing queued, nothing failed). */
int ps_source_schedule(const psModel *m, psData *d, int s) {
  const psSourceDef *def = &m->src[s];
  psSourceState *st = &d->src[s];
  if (def->count >= 0 && st->fired >= def->count) return 0;
  int64_t t;
  if (def->kind == PS_SRC_EVERY) {
    t = def->start_ns + st->fired * def->period_ns;
  } else {
    double gap = psu_rng_exponential(&st->rng, (double)def->period_ns);
    if (gap > (double)PS_MAX_DURATION_NS) gap = (double)PS_MAX_DURATION_NS;
    t = (st->fired ? d->now_ns : def->start_ns) + (int64_t)(gap + 0.5);
  }
  if (t < d->now_ns) t = d->now_ns;
  psEvt e = {.time_ns = t, .rank = s, .cls = PS_EV_SOURCE, .key = s};
  return psu_evq_push(&d->evq, e);
}

int ps_add_source(psModel *m, psData *d, const psSourceDef *s, char *err, int errlen) {
  if (m->nsrc == m->cap_src) {
    int32_t cap = m->cap_src ? 2 * m->cap_src : 8;
    psSourceDef *a = realloc(m->src, (size_t)cap * sizeof(psSourceDef));
    if (!a) goto nomem;
    m->src = a;
    m->cap_src = cap;
  }
  psSourceState *st = realloc(d->src, (size_t)(d->nsrc + 1) * sizeof(psSourceState));
  if (!st) goto nomem;
  d->src = st;
  int i = m->nsrc;
  m->src[i] = *s;
  psu_rng_seed(&d->src[i].rng, m->seed, 0x5eed000000ULL + (uint64_t)i);
  d->src[i].fired = 0;
  m->nsrc++;
  d->nsrc++;
  /* a failure left by an earlier run is no concern of this call (the next
   * run clears it); only its own scheduling may fail, and then it is undone */
  if (ps_source_schedule(m, d, i)) {
    m->nsrc--;
    d->nsrc--;
    snprintf(err, errlen, "out of memory adding a source");
    return -1;
  }
  return 0;
nomem:
  snprintf(err, errlen, "out of memory adding a source");
  return -1;
}

/* ---- task creation and exit ---- */

psTask *ps_new_task(const psModel *m, psData *d, int prog) {
  if (d->next_pid == INT32_MAX) {
    ps_fail(d, "pid space exhausted: %d tasks created", INT32_MAX - 1);
    return NULL;
  }
  int32_t i = d->free_slot >= 0 ? d->free_slot : d->ntask;
  if ((i == d->ntask && grow_tasks(d, d->ntask + 1)) ||
      psu_pids_insert(&ps_fast(d)->pids, d->next_pid, i)) {
    ps_fail(d, "out of memory creating a task");
    return NULL;
  }
  if (i == d->free_slot)
    d->free_slot = d->task[i].wait_next;
  else
    d->ntask++;
  psTask *t = &d->task[i];
  task_blank(t);
  t->pid = d->next_pid++;
  t->ps.prog = prog;
  t->ps.pc = m->progs[prog].first;
  t->ps.deadline_ns = t->ps.timer_ns = -1;
  t->start_ns = d->now_ns;
  t->since_ns = d->now_ns;
  t->acct = PS_ACCT_WAIT;
  if (m->watch) ps_waiting_add(d, t);
  psu_rng_seed(&t->rng, m->seed, (uint64_t)t->pid);
  d->nlive++;
  return t;
}

/* The tasks in state RUNNING on each CPU, idle tasks aside: what spawn
 * places by (psFastState.runnable). */
static void count_runnable(const psModel *m, const psData *d, int32_t out[PS_MAX_CPUS]) {
  memset(out, 0, PS_MAX_CPUS * sizeof out[0]);
  for (int32_t i = m->ncpu; i < d->ntask; i++)
    if (d->task[i].state == PS_TASK_RUNNING) out[d->task[i].cpu]++;
}

/* 0 if spawn's kept counts, when it keeps them, are the tasks' own, else
 * -1 with err. */
static int runnable_agree(const psModel *m, const psData *d, char *err, int errlen) {
  const psFastState *f = (const psFastState *)(const void *)d->fast;
  if (!f->runnable_known) return 0;
  int32_t n[PS_MAX_CPUS];
  count_runnable(m, d, n);
  for (int c = 0; c < m->ncpu; c++)
    if (n[c] != f->runnable[c]) {
      snprintf(err, errlen, "cpu %d has %d runnable tasks, but spawn counts %d", c, n[c],
               f->runnable[c]);
      return -1;
    }
  return 0;
}

void ps_forget_runnable(psData *d) { ps_fast(d)->runnable_known = 0; }

int ps_spawn(const psModel *m, psData *d, int prog, const char *name, int nice, int policy,
                  int rt_priority, const psCpuMask *cpus, int cpu, int ninit,
                  const int32_t *init_field, const int64_t *init_value, int time_slice,
                  char *err, int errlen) {
  psCpuMask cpus_allowed;
  ps_cpumask_fill(&cpus_allowed, m->ncpu);
  ps_cpumask_and(&cpus_allowed, &cpus_allowed, cpus);
  const char *bad = prog < 0 || prog >= m->nprogs ? "prog names no program"
                    : nice < -20 || nice > 19      ? "nice is outside -20..19"
                    : policy < PS_SCHED_NORMAL || policy > PS_SCHED_RR
                        ? "policy is not 0 (normal), 1 (fifo) or 2 (rr)"
                    : (policy == PS_SCHED_NORMAL ? rt_priority != 0
                                                 : rt_priority < 1 || rt_priority > 99)
                        ? "rt_priority must be 1..99 for fifo/rr and 0 for normal"
                    : !ps_cpumask_any(&cpus_allowed) ? "cpus_allowed names no CPU of this machine"
                    : cpu >= m->ncpu || (cpu >= 0 && !ps_cpu_test(&cpus_allowed, cpu))
                        ? "cpu is not one of the task's allowed CPUs"
                    : time_slice < 0 || time_slice > 1000000 ? "time_slice is outside 1..1000000"
                                                             : NULL;
  if (bad) {
    snprintf(err, errlen, "spawn: %s (prog=%d, nice=%d, policy=%d, rt_priority=%d, cpu=%d, "
             "time_slice=%d)", bad, prog, nice, policy, rt_priority, cpu, time_slice);
    return -1;
  }
  /* the init values on a blank task first: the policy checks their domain
   * before anything is created */
  psTask probe;
  task_blank(&probe);
  for (int k = 0; k < ninit; k++) {
    if (init_field[k] < 0 || init_field[k] >= m->policy->ntask_fields) {
      snprintf(err, errlen, "spawn: init field %d does not exist", init_field[k]);
      return -1;
    }
    const psFieldInfo *f = &m->policy->task_fields[init_field[k]];
    psu_field_write(f->at == PS_AT_TASK ? (void *)&probe : (void *)probe.priv, f, init_value[k]);
  }
  if (m->hooks.check_init(m, &probe, err, errlen)) return -1;
  if (d->nlive >= m->max_tasks) {
    snprintf(err, errlen, "task limit reached: max_tasks=%d live tasks", m->max_tasks);
    return -1;
  }
  psFastState *f = ps_fast(d);
  if (f->runnable_known && m->debug_checks && runnable_agree(m, d, err, errlen))
    return PS_SPAWN_INVARIANT;
  if (cpu < 0) {
    /* the allowed CPU with the fewest runnable tasks, lowest index on ties */
    if (!f->runnable_known) {
      count_runnable(m, d, f->runnable);
      f->runnable_known = 1;
    }
    int best = -1;
    PS_FOR_EACH_CPU(c, &cpus_allowed)
      if (best < 0 || f->runnable[c] < f->runnable[best]) best = c;
    cpu = best;
  }
  psTask *t = ps_new_task(m, d, prog);
  if (!t) {
    snprintf(err, errlen, "%s", d->errmsg);
    d->failed = 0;
    return -1;
  }
  snprintf(t->name, PS_NAME_LEN, "%s", name);
  t->nice = nice;
  t->policy = policy;
  t->rt_priority = rt_priority;
  t->cpus_allowed = cpus_allowed;
  t->cpu = cpu;
  t->state = PS_TASK_RUNNING;
  for (int k = 0; k < ninit; k++) {
    const psFieldInfo *f = &m->policy->task_fields[init_field[k]];
    psu_field_write(f->at == PS_AT_TASK ? (void *)t : (void *)t->priv, f, init_value[k]);
  }
  if (m->hooks.task_spawn(m, d, t)) ps_resched_cpu(d, cpu);
  t->on_rq = 1;
  /* where the policy queued it (a Python policy may have moved it, and
   * then the counts are forgotten) */
  if (f->runnable_known) f->runnable[t->cpu]++;
  if (time_slice > 0) t->time_slice = time_slice;
  return t->pid;
}

void ps_params_changed(const psModel *m, psData *d) {
  ps_forget_runnable(d);
  m->hooks.retune(m, d);
}

void ps_set_fast_paths(psModel *m, psData *d, int fast) {
  m->fast_paths = fast;
  d->evq.heap_only = !(fast & PS_FAST_WHEEL);
}

void ps_fast_counts(const psData *d, int64_t out[PS_NFAST]) {
  const psFastState *f = (const psFastState *)(const void *)d->fast;
  out[0] = f->wide_scans;
  out[1] = f->ticks_batched;
  out[2] = f->ticks_deferred;
  out[3] = d->evq.nsorted;
  out[4] = f->skips;
}

void ps_fast_skipped(psData *d) {
  ps_count_up(&((psFastState *)(void *)d->fast)->skips);
}

/* ---- invariants ---- */

/* The pid table holds each live slot's pid, and nothing else. */
static int pids_agree(const psModel *m, const psData *d, char *err, int errlen) {
  const psPids *h = &((const psFastState *)(const void *)d->fast)->pids;
  int32_t live = 0;
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    if (!d->task[i].pid) continue;
    live++;
    if (psu_pids_find(h, d->task[i].pid) != i) {
      snprintf(err, errlen, "pid %d in slot %d is not found there by its pid", d->task[i].pid, i);
      return -1;
    }
  }
  if (h->used != live) {
    snprintf(err, errlen, "the pid table holds %d pids for %d live slots", h->used, live);
    return -1;
  }
  return 0;
}

int ps_check(const psModel *m, const psData *d, char *err, int errlen) {
  for (int c = 0; c < m->ncpu; c++) {
    const psCpu *cpu = &d->cpu[c];
    const psTask *cur = &d->task[cpu->curr];
    /* idle CPUs tick too (the idle balance) */
    if (d->next_tick_ns[c] <= d->now_ns) {
      snprintf(err, errlen, "cpu %d has a tick in the past", c);
      return -1;
    }
    if (cur->is_idle) {
      if (cpu->curr != cpu->idle) {
        snprintf(err, errlen, "cpu %d runs another CPU's idle task", c);
        return -1;
      }
      continue;
    }
    if (cur->state != PS_TASK_RUNNING) {
      snprintf(err, errlen, "cpu %d runs pid %d in state %d", c, cur->pid, cur->state);
      return -1;
    }
    /* a task whose affinity changed while it ran moves as it next switches
     * out (migrate_to), and may run outside its mask until then */
    if (cur->cpu != c || (!ps_cpu_test(&cur->cpus_allowed, c) && cur->migrate_to < 0)) {
      snprintf(err, errlen, "pid %d runs on cpu %d outside its affinity or its cpu field", cur->pid, c);
      return -1;
    }
    for (int o = 0; o < c; o++)
      if (d->cpu[o].curr == cpu->curr) {
        snprintf(err, errlen, "pid %d runs on cpus %d and %d", cur->pid, o, c);
        return -1;
      }
  }
  if (psu_evq_earliest(&d->evq) < d->now_ns) {
    snprintf(err, errlen, "an event is due in the past");
    return -1;
  }
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    if ((t->state == PS_TASK_RUNNING) != (t->on_rq != 0) && t->exit_ns < 0) {
      snprintf(err, errlen, "pid %d: state %d but on_rq %d", t->pid, t->state, t->on_rq);
      return -1;
    }
    /* a task leaves a CPU its affinity no longer allows at once (do_affinity
     * moves it), or, running there, as it next switches out (migrate_to);
     * a sleeper woken with its cpu outside its affinity was queued there */
    if (t->exit_ns < 0 && !ps_cpu_test(&t->cpus_allowed, t->cpu) && t->migrate_to < 0) {
      snprintf(err, errlen, "pid %d %s cpu %d outside its affinity", t->pid,
               t->state == PS_TASK_RUNNING ? "queued on" : "last ran on", t->cpu);
      return -1;
    }
    /* migrate_to is set only on the task current on its CPU (do_affinity),
     * to an allowed CPU, and cleared as it leaves that CPU (schedule) */
    if (t->migrate_to >= 0 && (d->cpu[t->cpu].curr != i || !ps_cpu_test(&t->cpus_allowed, t->migrate_to))) {
      snprintf(err, errlen, "pid %d is to move to cpu %d, but it is not current on cpu %d or may "
               "not run there", t->pid, t->migrate_to, t->cpu);
      return -1;
    }
    /* ... and, but where the kernel has no migration thread (2.4.20), in
     * the same instant's process context: a program's op reschedules its
     * CPU before the task runs on, a call from Python moves the task
     * before it returns (syscall.c, do_affinity) -- none is ever seen
     * between instants or calls */
    if (t->migrate_to >= 0 && !m->policy->no_migration_thread) {
      snprintf(err, errlen, "pid %d is to move to cpu %d from cpu %d, but under %s "
               "set_cpus_allowed moves a running task before it returns", t->pid, t->migrate_to,
               t->cpu, m->policy->name);
      return -1;
    }
    char why[PS_ERRLEN];
    if (t->pid && m->hooks.check_init(m, t, why, sizeof why)) {
      snprintf(err, errlen, "pid %d: %.200s", t->pid, why);
      return -1;
    }
  }
  if (runnable_agree(m, d, err, errlen) || pids_agree(m, d, err, errlen) ||
      ps_watch_check(m, d, err, errlen))
    return -1;
  return m->hooks.check(m, d, err, errlen);
}

