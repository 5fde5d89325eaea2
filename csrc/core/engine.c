/* The machine: clock, per-CPU ticks, the event loop, the context switch and
 * accounting.  Scheduling decisions are the policy's (policy.h).
 *
 * Time (DESIGN.md, "Time"): at each instant the engine first delivers
 * everything due then in interrupt context -- the CPUs' ticks (jiffies++ then
 * scheduler_tick, CPU 0 first), then expired timers, I/O completions and
 * source firings in canonical order -- and only then lets each CPU act:
 * a need_resched switches at once (user-mode preemption on return from the
 * interrupt), and the running task continues its program in process
 * context. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* the per-instant scans' AVX2 and AVX-512 forms (next_due, cpus_at) */
#if defined(__x86_64__) && defined(__GNUC__)
#define PS_SCAN_X86 1
#include <immintrin.h>
#endif

#include "engine_internal.h"

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
    TASK_FIELD(cpus_allowed, PS_F_U64, "affinity: bit i set if it may run on CPU i"),
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

static void ring_push(const psModel *m, psData *d, psRing *r, const void *rec, const char *what) {
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
  ring_push(m, d, &d->periodic, r, "periodic");
}

void ps_livelock(psData *d) {
  /* the instant stays livelocked, its count no higher: each further run
   * fails the same way, and the state stays one a snapshot may hold */
  d->instant_actions = PS_MAX_ACTIONS_PER_INSTANT + 1;
  ps_fail(d, "livelock at t=%lld ns: %d actions without time passing (a loop of zero-length "
               "run/io, or tasks waking each other without computing?)",
            (long long)d->now_ns, PS_MAX_ACTIONS_PER_INSTANT);
}

void ps_log_event(const psModel *m, psData *d, int kind, int cpu, const psTask *p, int other,
                  int prio, int64_t value) {
  psEventRec e = {d->now_ns, value, p ? p->pid : -1, other, cpu, (int16_t)kind, (int16_t)prio};
  ring_push(m, d, &d->events, &e, "event log");
}

psTask *ps_task_by_pid(const psModel *m, const psData *d, int pid) {
  if (pid < 1 || pid >= d->next_pid) return NULL;
  /* until tasks are reaped, pid n sits in slot n + ncpu - 1 */
  int64_t guess = (int64_t)pid + m->ncpu - 1;
  if (guess < d->ntask && d->task[guess].pid == pid) return &d->task[guess];
  for (int32_t i = m->ncpu; i < d->ntask; i++)
    if (d->task[i].pid == pid) return &d->task[i];
  return NULL;
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

/* ---- accounting ---- */

static void acct(psTask *t, int64_t now, int to) {
  int64_t dt = now - t->since_ns;
  if (t->acct == PS_ACCT_RUN) t->cpu_ns += dt;
  else if (t->acct == PS_ACCT_WAIT) t->wait_ns += dt;
  else if (t->acct == PS_ACCT_SLEEP) t->sleep_ns += dt;
  t->acct = to;
  t->since_ns = now;
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
  psu_evq_init(&d->evq, m->tick_ns);
  d->next_pid = 1;
  d->free_slot = -1;
  d->cpu = calloc((size_t)m->ncpu, sizeof(psCpu));
  d->rq = calloc((size_t)m->ncpu, m->policy->rq_size);
  if (!d->cpu || !d->rq || grow_tasks(d, m->ncpu)) goto nomem;
  for (int c = 0; c < m->ncpu; c++) {
    psTask *idle = &d->task[c];
    task_blank(idle);
    idle->is_idle = 1;
    idle->cpu = c;
    idle->prio = idle->static_prio = m->policy->max_prio;
    idle->cpus_allowed = (uint64_t)1 << c;
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
  dst->rq = dup_bytes(src->rq, (size_t)m->ncpu * m->policy->rq_size, &bad);
  dst->task = dup_bytes(src->task, (size_t)src->cap_task * sizeof(psTask), &bad);
  dst->chan = dup_bytes(src->chan, (size_t)src->nchan * sizeof(psChannel), &bad);
  dst->src = dup_bytes(src->src, (size_t)src->nsrc * sizeof(psSourceState), &bad);
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
    psChannel *c = realloc(d->chan, (size_t)n * sizeof(psChannel));
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

/* ---- events and wakeups ---- */

/* Inline in the delivery of a timer, which most wakeups are. */
__attribute__((always_inline)) static inline int try_to_wake_up(const psModel *m, psData *d,
                                                                psTask *p, int mask,
                                                                psTask *waker, int sync) {
  if (!(p->state & mask)) return 0;
  ps_ready(m, d, p);
  ps_ready(m, d, waker);
  acct(p, d->now_ns, PS_ACCT_WAIT);
  int preempt = m->hooks.wakeup(m, d, p, waker, sync);
  p->on_rq = 1;
  p->state = PS_TASK_RUNNING;
  ps_count_up(&p->nr_wakeups);
  p->woken_ns = d->now_ns;
  ps_log(m, d, PS_EVT_WAKEUP, p->cpu, p, waker ? waker->pid : -1, p->prio, sync);
  if (preempt) ps_resched_cpu(d, p->cpu);
  return 1;
}

int ps_try_to_wake_up(const psModel *m, psData *d, psTask *p, int mask, psTask *waker, int sync) {
  return try_to_wake_up(m, d, p, mask, waker, sync);
}

/* Queue source s's next firing, if it has one; 0, or -1 when memory ran
 * out (nothing queued, nothing failed). */
static int source_schedule(const psModel *m, psData *d, int s) {
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
  psEvt e = {t, PS_EV_SOURCE, s, s, 0};
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
  if (source_schedule(m, d, i)) {
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
  int32_t i = d->free_slot;
  if (i >= 0) {
    d->free_slot = d->task[i].wait_next;
  } else {
    if (grow_tasks(d, d->ntask + 1)) {
      ps_fail(d, "out of memory creating a task");
      return NULL;
    }
    i = d->ntask++;
  }
  psTask *t = &d->task[i];
  task_blank(t);
  t->pid = d->next_pid++;
  t->ps.prog = prog;
  t->ps.pc = m->progs[prog].first;
  t->ps.deadline_ns = t->ps.timer_ns = -1;
  t->start_ns = d->now_ns;
  t->since_ns = d->now_ns;
  t->acct = PS_ACCT_WAIT;
  psu_rng_seed(&t->rng, m->seed, (uint64_t)t->pid);
  d->nlive++;
  return t;
}

/* The exited task p has left its CPU for good: keep its record, free its
 * slot.  Its policy data stays in the slot (dequeued, as the policy left
 * it), so that policy invariants hold for free slots too. */
static void reap(const psModel *m, psData *d, psTask *p) {
  p->state = PS_TASK_DEAD;
  /* a full ring drops its oldest record and counts it; so do these */
  if (!m->keep_exited ||
      psu_ring_push(&d->exited, p, (int64_t)m->keep_exited * (int64_t)sizeof(psTask), 1) ==
          PS_RING_NOMEM)
    ps_count_up(&d->exited.dropped);
  p->pid = 0;
  p->ppid = 0;
  p->wait_next = d->free_slot;
  d->free_slot = ps_index(d, p);
}

int ps_spawn(const psModel *m, psData *d, int prog, const char *name, int nice, int policy,
                  int rt_priority, uint64_t cpus_allowed, int cpu, int ninit,
                  const int32_t *init_field, const int64_t *init_value, int time_slice,
                  char *err, int errlen) {
  uint64_t all = m->ncpu == 64 ? ~(uint64_t)0 : (((uint64_t)1 << m->ncpu) - 1);
  const char *bad = prog < 0 || prog >= m->nprogs ? "prog names no program"
                    : nice < -20 || nice > 19      ? "nice is outside -20..19"
                    : policy < PS_SCHED_NORMAL || policy > PS_SCHED_RR
                        ? "policy is not 0 (normal), 1 (fifo) or 2 (rr)"
                    : (policy == PS_SCHED_NORMAL ? rt_priority != 0
                                                 : rt_priority < 1 || rt_priority > 99)
                        ? "rt_priority must be 1..99 for fifo/rr and 0 for normal"
                    : !(cpus_allowed & all) ? "cpus_allowed names no CPU of this machine"
                    : cpu >= m->ncpu || (cpu >= 0 && !(cpus_allowed >> cpu & 1))
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
  cpus_allowed &= all;
  if (d->nlive >= m->max_tasks) {
    snprintf(err, errlen, "task limit reached: max_tasks=%d live tasks", m->max_tasks);
    return -1;
  }
  if (cpu < 0) {
    /* the allowed CPU with the fewest runnable tasks, lowest index on ties */
    int best = -1;
    int64_t load[PS_MAX_CPUS] = {0};
    for (int32_t i = m->ncpu; i < d->ntask; i++)
      if (d->task[i].state == PS_TASK_RUNNING) load[d->task[i].cpu]++;
    for (int c = 0; c < m->ncpu; c++)
      if ((cpus_allowed >> c & 1) && (best < 0 || load[c] < load[best])) best = c;
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
  if (time_slice > 0) t->time_slice = time_slice;
  return t->pid;
}

/* ---- the context switch ---- */

static void record_latency(const psModel *m, psData *d, psTask *t, int cpu) {
  int64_t lat = d->now_ns - t->woken_ns;
  t->woken_ns = -1;
  ps_count_up(&t->lat_count);
  t->lat_sum_ns += lat;
  if (lat > t->lat_max_ns) t->lat_max_ns = lat;
  if (m->rec_latency) {
    psLatencyRec r = {d->now_ns, lat, t->pid, cpu};
    ring_push(m, d, &d->latencies, &r, "latency");
  }
}

/* What pick_next returned, as the message of its refusal says it: a task
 * pointer is only followed once it is known to be one of d's slots. */
static void describe_pick(const psData *d, int c, const psTask *next, char *out, int len) {
  uintptr_t off = (uintptr_t)next - (uintptr_t)d->task;
  if (!next) {
    snprintf(out, len, "NULL");
  } else if (off >= (uintptr_t)d->ntask * sizeof(psTask)) {
    snprintf(out, len, "%p, which is not a task of this simulator (its %d are at %p)",
             (const void *)next, d->ntask, (const void *)d->task);
  } else if (off % sizeof(psTask)) {
    snprintf(out, len, "%p, which points into task slot %d, %zu bytes past its start",
             (const void *)next, (int)(off / sizeof(psTask)), (size_t)(off % sizeof(psTask)));
  } else if (next->is_idle) {
    snprintf(out, len, "the idle task of cpu %d", next->cpu);
  } else if (!next->pid) {
    snprintf(out, len, "task slot %d, which is free", ps_index(d, next));
  } else if (next->exit_ns >= 0) {
    snprintf(out, len, "pid %d, which has exited", next->pid);
  } else if (next->state != PS_TASK_RUNNING) {
    snprintf(out, len, "pid %d, which is asleep (state %d)", next->pid, next->state);
  } else if (!next->on_rq) {
    snprintf(out, len, "pid %d, which is not queued (on_rq 0)", next->pid);
  } else if (next->cpu != c) {
    snprintf(out, len, "pid %d, which is queued on cpu %d", next->pid, next->cpu);
  } else {
    snprintf(out, len, "pid %d, whose affinity (0x%llx) excludes cpu %d", next->pid,
             (unsigned long long)next->cpus_allowed, c);
  }
}

/* pick_next returned what the engine cannot switch to (pick_next_ok):
 * the step fails as a policy's error (PS_FAILED_POLICY), naming the
 * policy, the CPU, the time and what it returned; the CPU keeps prev. */
/* The migrate hook moved p to dest (policy.h): a task left outside its
 * affinity would wake or be picked where it may not run.  The step, or the
 * syscall from Python, fails as a policy's error. */
void ps_migrated(const psModel *m, psData *d, const psTask *p, int dest) {
  /* a hook that failed (a Python policy's exception) has said why */
  if (__builtin_expect(p->cpu == dest, 1) || d->failed) return;
  ps_fail(d, "policy %s: migrate left pid %d on cpu %d, not on cpu %d as set_cpus_allowed asked",
          m->policy->name, p->pid, p->cpu, dest);
  d->failed = PS_FAILED_POLICY;
}

__attribute__((noinline, cold)) static void pick_next_refused(const psModel *m, psData *d,
                                                              int c, const psTask *next) {
  char what[160];
  describe_pick(d, c, next, what, sizeof what);
  /* the state is half switched: this failure takes the place of one the
   * step met before, and of a full buffer's resumable stop */
  d->failed = 0;
  d->trace_full = 0;
  ps_fail(d, "policy %s: pick_next on cpu %d at t=%lld ns returned %s", m->policy->name, c,
          (long long)d->now_ns, what);
  d->failed = PS_FAILED_POLICY;
}

/* next is a task the engine may switch CPU c to: one of d's slots (a
 * pointer within the array and on a slot's start: a policy's NULL, stray
 * or misaligned pointer is refused before it is followed), and either c's
 * idle task or a task queued on c (state RUNNING, on_rq, cpu c) whose
 * affinity allows c -- an idle task is RUNNING, never on_rq, and its cpu
 * and affinity are its CPU's, so one test takes both.  In every build, on
 * every switch: a range check, a multiply for the slot's start, and five
 * loads from the two lines of the task the switch reads next -- 23
 * instructions a switch (bench_cachesim (h): 931 -> 954 on 1 CPU), 0-4 ns
 * of 50-100 in bench_ticks (docs/extending/c-policy.md). */
static inline int pick_next_ok(const psData *d, int c, const psTask *next) {
  uintptr_t off = (uintptr_t)next - (uintptr_t)d->task;
  if (off >= (uintptr_t)d->ntask * sizeof(psTask) || off % sizeof(psTask)) return 0;
  /* on_rq and is_idle are 0 or 1 (the engine's): any other value is refused */
  if ((uint32_t)(next->cpu ^ c) | (uint32_t)next->state) return 0;
  return (int)((uint32_t)(next->on_rq | next->is_idle) & (uint32_t)(next->cpus_allowed >> c) & 1);
}

static void schedule(const psModel *m, psData *d, int c) {
  psCpu *cpu = &d->cpu[c];
  psTask *prev = &d->task[cpu->curr];
  m->hooks.put_prev(m, d, prev);
  if (prev->state != PS_TASK_RUNNING && prev->on_rq) {
    m->hooks.deactivate(m, d, prev);
    prev->on_rq = 0;
  }
  if (prev->migrate_to >= 0) {
    /* its affinity changed while it ran: the migration thread moves it now */
    int dest = prev->migrate_to;
    prev->migrate_to = -1;
    if (prev->exit_ns < 0) {
      ps_catch_up(m, d, dest);
      m->hooks.migrate(m, d, prev, dest);
      ps_migrated(m, d, prev, dest);
    }
  }
  psTask *next = m->hooks.pick_next(m, d, c);
  cpu->need_resched = 0;
  if (__builtin_expect(!pick_next_ok(d, c, next), 0)) {
    pick_next_refused(m, d, c, next);
    return;
  }
  if (next == prev) return;
  int64_t now = d->now_ns;
  if (!prev->is_idle) {
    if (prev->state == PS_TASK_RUNNING) {
      ps_count_up(&prev->nivcsw);
      acct(prev, now, PS_ACCT_WAIT);
    } else if (prev->exit_ns >= 0) {
      ps_count_up(&prev->nvcsw);
      acct(prev, now, PS_ACCT_NONE);
    } else {
      ps_count_up(&prev->nvcsw);
      acct(prev, now, PS_ACCT_SLEEP);
    }
  }
  if (!next->is_idle) {
    acct(next, now, PS_ACCT_RUN);
    if (next->woken_ns >= 0) record_latency(m, d, next, c);
  }
  cpu->curr = ps_index(d, next);
  cpu->run_since_ns = now;
  cpu->overhead_until_ns = now + m->switch_cost_ns;
  ps_count_up(&cpu->nr_switches);
  int exited = prev->exit_ns >= 0;
  ps_log(m, d, PS_EVT_SWITCH, c, next, prev->pid, next->prio,
         exited ? PS_TASK_DEAD : prev->state);
  if (exited) reap(m, d, prev);
}

/* ---- stepping ---- */

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
static void advance_to(const psModel *m, psData *d, int64_t t) {
  for (int c = 0; c < m->ncpu; c++)
    if (d->burst_end_ns[c] <= t) sync_cpu(d, c, t);
  d->now_ns = t;
}

static void sync_all(const psModel *m, psData *d) {
  for (int c = 0; c < m->ncpu; c++) sync_cpu(d, c, d->now_ns);
}

/* What falls due next on the CPUs: the earliest tick and the earliest end
 * of a burst.  Minima alone, written to compile without branches (which
 * CPU holds the minimum is data a branch predictor cannot learn); the CPUs
 * that have them are found (cpus_at) only when the instant is theirs.  On
 * 64 CPUs this scan ran once per instant and was half of the loop's work
 * while it also built both masks. */
typedef struct psDue {
  int64_t tick, burst_end;
} psDue;

/* The scans from CPU c on, into u and at: the scalar loops, and the wide
 * forms' remainders. */
static inline psDue next_due_from(const psModel *m, const psData *d, psDue u, int c) {
  for (; c < m->ncpu; c++) {
    int64_t tick = d->next_tick_ns[c], end = d->burst_end_ns[c];
    u.tick = tick < u.tick ? tick : u.tick;
    u.burst_end = end < u.burst_end ? end : u.burst_end;
  }
  return u;
}

static inline psDue next_due_scalar(const psModel *m, const psData *d) {
  psDue u = {d->next_tick_ns[0], d->burst_end_ns[0]};
  return next_due_from(m, d, u, 1);
}

/* The CPUs whose entry of times (a CPU's next tick or burst end) is t. */
static inline uint64_t cpus_at_from(const psModel *m, const int64_t *times, int64_t t,
                                    uint64_t at, int c) {
  for (; c < m->ncpu; c++) at |= (uint64_t)(times[c] == t) << c;
  return at;
}

static inline uint64_t cpus_at_scalar(const psModel *m, const int64_t *times, int64_t t) {
  return cpus_at_from(m, times, t, 0, 0);
}

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
__attribute__((target("avx2"))) static psDue next_due_avx2(const psModel *m, const psData *d) {
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

__attribute__((target("avx2"))) static uint64_t cpus_at_avx2(const psModel *m,
                                                             const int64_t *times, int64_t t) {
  __m256i at_t = _mm256_set1_epi64x(t);
  uint64_t at = 0;
  int c = 0;
  for (; c + 4 <= m->ncpu; c += 4) {
    __m256i eq = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)&times[c]), at_t);
    at |= (uint64_t)_mm256_movemask_pd(_mm256_castsi256_pd(eq)) << c;
  }
  return cpus_at_from(m, times, t, at, c);
}

__attribute__((target("avx512f"))) static psDue next_due_avx512(const psModel *m,
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

__attribute__((target("avx512f"))) static uint64_t cpus_at_avx512(const psModel *m,
                                                                 const int64_t *times, int64_t t) {
  __m512i at_t = _mm512_set1_epi64(t);
  uint64_t at = 0;
  int c = 0;
  for (; c + 8 <= m->ncpu; c += 8)
    at |= (uint64_t)_mm512_cmpeq_epi64_mask(_mm512_loadu_si512(&times[c]), at_t) << c;
  return cpus_at_from(m, times, t, at, c);
}
#endif

/* The dispatchers are inline, so that 1 to 15 CPUs keep the scalar loops
 * inline (a call cost 1-2 % on 2 and 8 CPUs). */
__attribute__((always_inline)) static inline psDue next_due(const psModel *m, const psData *d) {
#ifdef PS_SCAN_X86
  if (m->ncpu >= 16) {
    if (__builtin_cpu_supports("avx512f")) return next_due_avx512(m, d);
    if (__builtin_cpu_supports("avx2")) return next_due_avx2(m, d);
  }
#endif
  return next_due_scalar(m, d);
}

/* cpus_at_scalar, for t the least of the entries: on one CPU that CPU,
 * without the scan (which cost the wakeup-heavy case c0 2 % of its time). */
__attribute__((always_inline)) static inline uint64_t cpus_at(const psModel *m,
                                                              const int64_t *times, int64_t t) {
  if (m->ncpu == 1) return 1;
#ifdef PS_SCAN_X86
  if (m->ncpu >= 16) {
    if (__builtin_cpu_supports("avx512f")) return cpus_at_avx512(m, times, t);
    if (__builtin_cpu_supports("avx2")) return cpus_at_avx2(m, times, t);
  }
#endif
  return cpus_at_scalar(m, times, t);
}

/* Every wide form this processor has, on any number of CPUs, gives the
 * scalar loops' results now (so next_due and cpus_at, which take one of
 * them, do too).  Under debug_checks after every instant, so that a run of
 * the tests checks the AVX2 form on a processor that would use AVX-512. */
__attribute__((noinline, cold)) static int scans_agree(const psModel *m, const psData *d,
                                                      char *err, int errlen) {
#ifdef PS_SCAN_X86
  const struct {
    const char *name;
    int supported;
    psDue (*next_due)(const psModel *, const psData *);
    uint64_t (*cpus_at)(const psModel *, const int64_t *, int64_t);
  } wide[] = {
      {"avx2", __builtin_cpu_supports("avx2"), next_due_avx2, cpus_at_avx2},
      {"avx512", __builtin_cpu_supports("avx512f"), next_due_avx512, cpus_at_avx512},
  };
  psDue s = next_due_scalar(m, d);
  uint64_t tick_at = cpus_at_scalar(m, d->next_tick_ns, s.tick);
  uint64_t end_at = cpus_at_scalar(m, d->burst_end_ns, s.burst_end);
  for (int i = 0; i < 2; i++) {
    if (!wide[i].supported) continue;
    psDue w = wide[i].next_due(m, d);
    const char *bad = w.tick != s.tick || w.burst_end != s.burst_end ? "next_due"
                      : wide[i].cpus_at(m, d->next_tick_ns, s.tick) != tick_at ||
                              wide[i].cpus_at(m, d->burst_end_ns, s.burst_end) != end_at
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

static void sample_series(const psModel *m, psData *d) {
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    if (t->exit_ns >= 0) continue;
    for (int k = 0; k < m->nseries; k++) {
      psSampleRec r = {d->now_ns, ps_task_value(m, d, t, m->series[k]), t->pid, k};
      ring_push(m, d, &d->series, &r, "series");
    }
  }
}

/* The ticks at t of the CPUs in `ticking`, in CPU order. */
__attribute__((always_inline)) static inline void deliver_ticks(const psModel *m, psData *d, int64_t t,
                                                          uint64_t ticking) {
  int sampled = 0;
  /* CPU 0's tick, given or deferred, is the jiffy */
  if (t == ps_jiffy_time(m, d->jiffies + 1)) {
    d->jiffies++;
    sampled = m->rec_series && d->jiffies % (uint64_t)m->series_every == 0;
  }
  for (; ticking; ticking &= ticking - 1) {
    int c = __builtin_ctzll(ticking);
    psCpu *cpu = &d->cpu[c];
    ps_catch_up(m, d, c);  /* the window before this tick */
    d->next_tick_ns[c] += m->tick_ns;
    d->cpus_fresh |= 1ULL << c;
    cpu->ticks++;
    psTask *cur = &d->task[cpu->curr];
    if (!cur->is_idle) {
      cur->cpu_ticks++;
      cpu->busy_ticks++;
    }
    m->hooks.tick(m, d, c);
  }
  if (sampled) sample_series(m, d);
}

/* Of the next k ticks, those that may pass at once: none at or after the
 * next series sample. */
static int64_t before_sample(const psModel *m, const psData *d, int64_t k) {
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
 * sample may fall among them.  e: the earliest event, or NULL. */
static void batch_ticks(const psModel *m, psData *d, int64_t t_end, const psEvt *e) {
  if ((m->ncpu > 1 && m->stagger_ticks) || d->cpus_deferred) return;
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
  advance_to(m, d, last);
}

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
 * them from the clock at each instant. */
static int can_defer(const psModel *m) {
  return m->policy->tick_batch_local && m->ncpu > 1 && !m->stagger_ticks;
}

/* The ticks are counted in jiffies, not divided out of times: ticks
 * together, the next tick of every CPU is the next jiffy's, and at every
 * instant d->jiffies is up to date.  (A division costs tens of cycles, a
 * few of them per event were a third of the cost on 64 CPUs.) */
static void defer_ticks(const psModel *m, psData *d, uint64_t end_jiffies) {
  uint64_t fresh = d->cpus_fresh;
  d->cpus_fresh = 0;
  for (; fresh; fresh &= fresh - 1) {
    int c = __builtin_ctzll(fresh);
    psCpu *cpu = &d->cpu[c];
    if (d->task[cpu->curr].is_idle || cpu->need_resched || d->jiffies >= end_jiffies) continue;
    /* a burst that ends by the tick after next settles the CPU by then */
    if (d->burst_end_ns[c] < d->next_tick_ns[c] + m->tick_ns) continue;
    int64_t k = before_sample(m, d, (int64_t)(end_jiffies - d->jiffies));
    if (k < 2) continue;
    int64_t n = m->hooks.tick_batch(m, d, c, k, 0);
    if (n < 2) continue;  /* one tick deferred saves nothing */
    cpu->defer_n = n;
    cpu->defer_asked_ns = d->now_ns;
    cpu->defer_jiffies = d->jiffies;
    d->next_tick_ns[c] += n * m->tick_ns;
    d->cpus_deferred |= 1ULL << c;
  }
}

/* tick_batch on CPU c with the clock of the instant that deferred its ticks
 * (out of line: inline, it cost the trusted path 3 instructions a switch). */
__attribute__((noinline)) static int64_t tick_batch_as_asked(const psModel *m, psData *d, int c, int64_t k, int apply) {
  const psCpu *cpu = &d->cpu[c];
  int64_t now = d->now_ns;
  uint64_t jiffies = d->jiffies;
  d->now_ns = cpu->defer_asked_ns;
  d->jiffies = cpu->defer_jiffies;
  int64_t n = m->hooks.tick_batch(m, d, c, k, apply);
  d->now_ns = now;
  d->jiffies = jiffies;
  return n;
}

void ps_catch_up_ticks(const psModel *m, psData *d, int c) {
  psCpu *cpu = &d->cpu[c];
  int64_t k = (int64_t)(d->jiffies - cpu->defer_jiffies);
  if (k > cpu->defer_n) k = cpu->defer_n;
  d->cpus_deferred &= ~(1ULL << c);
  cpu->defer_n = 0;
  d->next_tick_ns[c] = ps_jiffy_time(m, cpu->defer_jiffies + 1 + (uint64_t)k);
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
}

/* At a pause: every tick up to now has fallen due. */
static void catch_up_all(const psModel *m, psData *d) {
  if (d->cpus_deferred & 1) d->jiffies = (uint64_t)(d->now_ns / m->tick_ns);
  while (d->cpus_deferred) ps_catch_up_ticks(m, d, __builtin_ctzll(d->cpus_deferred));
}

static void deliver_event(const psModel *m, psData *d, psEvt e) {
  switch (e.cls) {
    case PS_EV_TIMER:
      try_to_wake_up(m, d, &d->task[e.key], PS_TASK_INTERRUPTIBLE, NULL, 0);
      break;
    case PS_EV_IO:
      ps_try_to_wake_up(m, d, &d->task[e.key], PS_TASK_UNINTERRUPTIBLE, NULL, 0);
      break;
    default:
      d->src[e.key].fired++;
      ps_post(m, d, m->src[e.key].chan, NULL, 0);
      if (source_schedule(m, d, e.key)) ps_fail(d, "out of memory queueing an event");
      break;
  }
}

/* Process context of CPU c: it reschedules if asked and its task runs its
 * program, until it runs a task with CPU work left or idles. */
static void settle(const psModel *m, psData *d, int c) {
  psCpu *cpu = &d->cpu[c];
  ps_catch_up(m, d, c);
  d->cpus_fresh |= 1ULL << c;
  /* most often the clock's advance has brought it up to date already */
  if (cpu->run_since_ns != d->now_ns) sync_cpu(d, c, d->now_ns);
  for (;;) {
    if (cpu->need_resched) schedule(m, d, c);
    psTask *cur = &d->task[cpu->curr];
    if (cur->is_idle || cur->burst_left_ns > 0 || d->failed) break;
    ps_run_program(m, d, cpu->curr);
  }
  const psTask *cur = &d->task[cpu->curr];
  int64_t from = cpu->run_since_ns > cpu->overhead_until_ns ? cpu->run_since_ns
                                                             : cpu->overhead_until_ns;
  d->burst_end_ns[c] = cur->is_idle ? INT64_MAX : from + cur->burst_left_ns;
}

_Static_assert(PS_MAX_CPUS <= 64, "cpus_due holds one bit per CPU");

/* Every due CPU settles, in passes in CPU order: a CPU that a wakeup makes
 * due behind the pass waits for the next pass, one ahead of it is reached
 * in this one -- as passes over every CPU until one is quiet would go, the
 * CPUs not due having nothing to do. */
__attribute__((always_inline)) static inline void resolve(const psModel *m, psData *d) {
  while (d->cpus_due && !d->failed) {
    for (int c = -1;;) {
      uint64_t ahead = c < 63 ? d->cpus_due & (~0ULL << (c + 1)) : 0;
      if (!ahead || d->failed) break;
      c = __builtin_ctzll(ahead);
      settle(m, d, c);
      d->cpus_due &= ~(1ULL << c);
    }
  }
}

/* After an instant, every busy CPU's burst ends later, as every CPU's
 * tick does (ps_check): one due by now means a scan (next_due, cpus_at)
 * missed its CPU, and the run would repeat this instant for ever with no
 * action for the livelock guard to count.  Checked only here: a step that
 * failed leaves its instant unsettled, and the next run settles it first. */
static int unsettled(const psModel *m, const psData *d, char *err, int errlen) {
  for (int c = 0; c < m->ncpu; c++)
    if (!d->task[d->cpu[c].curr].is_idle && d->burst_end_ns[c] <= d->now_ns) {
      snprintf(err, errlen, "cpu %d: the burst of pid %d ended at t=%lld ns and was not settled",
               c, d->task[d->cpu[c].curr].pid, (long long)d->burst_end_ns[c]);
      return -1;
    }
  return 0;
}

int ps_check_time(int64_t t, char *err, int errlen) {
  if (t <= PS_MAX_TIME_NS) return 0;
  snprintf(err, errlen, "t=%lld ns is past the last time a run may reach, %lld ns (%.0f years)",
           (long long)t, (long long)PS_MAX_TIME_NS, PS_MAX_TIME_NS / 3.15576e16);
  return -1;
}

int ps_run_until(const psModel *m, psData *d, int64_t t_end, int64_t max_instants, char *err,
                 int errlen) {
  if (ps_check_time(t_end, err, errlen)) return -1;
  d->failed = 0;
  d->trace_full = 0;
  /* anything left to do at the current instant (a spawn, a renice) first */
  d->cpus_due = m->ncpu == 64 ? ~0ULL : (1ULL << m->ncpu) - 1;  /* PS_MAX_CPUS <= 64 */
  resolve(m, d);
  int defer = can_defer(m);
  uint64_t end_jiffies = (uint64_t)(t_end / m->tick_ns);
  int64_t instants = 0;
  while (!d->failed) {
    if (defer) defer_ticks(m, d, end_jiffies);
    /* a pause between two instants is invisible: resuming equals running on */
    if (max_instants && instants++ == max_instants) {
      catch_up_all(m, d);
      sync_all(m, d);
      return 1;
    }
    /* the earliest event: the ticks batched before it queue none */
    const psEvt *e = psu_evq_top(&d->evq);
    batch_ticks(m, d, t_end, e);
    psDue u = next_due(m, d);
    int64_t t = u.tick < u.burst_end ? u.tick : u.burst_end;
    if (e && e->time_ns < t) t = e->time_ns;
    if (t > t_end) {
      advance_to(m, d, t_end);
      break;
    }
    /* advance_to(m, d, t), knowing which bursts end by t */
    for (uint64_t b = u.burst_end == t ? cpus_at(m, d->burst_end_ns, t) : 0; b; b &= b - 1)
      sync_cpu(d, __builtin_ctzll(b), t);
    d->now_ns = t;
    if (d->cpus_deferred & 1) {
      /* CPU 0's ticks before t were jiffies; one at t is delivered now */
      if (ps_jiffy_time(m, d->jiffies + 1) < t) d->jiffies = (uint64_t)((t - 1) / m->tick_ns);
      if (u.tick != t && ps_jiffy_time(m, d->jiffies + 1) == t) deliver_ticks(m, d, t, 0);
    }
    if (u.tick == t) deliver_ticks(m, d, t, cpus_at(m, d->next_tick_ns, t));
    for (const psEvt *top; (top = psu_evq_top(&d->evq)) && top->time_ns == t && !d->failed;) {
      psEvt e = *top;
      psu_evq_take(&d->evq);
      /* the next wakeup's task on its way while this one is delivered: on
       * many CPUs a woken task has left the cache since it went to sleep
       * (bench_ticks (h), 64 CPUs: -2 % per switch; 8: -2 %; 1 and 2: -0.6 %) */
      const psEvt *nx = psu_evq_next_in_bucket(&d->evq);
      if (nx && nx->time_ns == t && nx->cls != PS_EV_SOURCE) {
        const psTask *q = &d->task[nx->key];
        __builtin_prefetch(&q->state);
        __builtin_prefetch(&q->cpu);
        __builtin_prefetch(&q->since_ns);
        __builtin_prefetch(q->priv);
      }
      deliver_event(m, d, e);
    }
    resolve(m, d);
    if (m->debug_checks && !d->failed) {
      char msg[PS_ERRLEN];
      if (ps_check(m, d, msg, sizeof msg) || unsettled(m, d, msg, sizeof msg) ||
          scans_agree(m, d, msg, sizeof msg))
        ps_fail(d, "invariant broken at t=%lld ns: %s", (long long)d->now_ns, msg);
    }
    if (d->trace_full) d->failed = 1;
  }
  catch_up_all(m, d);
  sync_all(m, d);
  if (d->failed) {
    snprintf(err, errlen, "%s", d->errmsg);
    /* the error is the caller's now: a call between runs (a post from
     * Python ...) acts on the state as on any other, as it would on a
     * snapshot of it -- unless a policy broke the hooks' contract, after
     * which the state may be half-updated and the binding refuses to go on */
    if (d->failed != PS_FAILED_POLICY) d->failed = 0;
    return -1;
  }
  return 0;
}

void ps_params_changed(const psModel *m, psData *d) { m->hooks.retune(m, d); }

/* ---- invariants ---- */

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
    /* a task whose affinity changed while it ran moves at its next switch
     * (migrate_to), and may run outside its mask until then */
    if (cur->cpu != c || (!(cur->cpus_allowed >> c & 1) && cur->migrate_to < 0)) {
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
    if (t->exit_ns < 0 && !(t->cpus_allowed >> t->cpu & 1) && t->migrate_to < 0) {
      snprintf(err, errlen, "pid %d %s cpu %d outside its affinity", t->pid,
               t->state == PS_TASK_RUNNING ? "queued on" : "last ran on", t->cpu);
      return -1;
    }
    /* migrate_to is set only on the task current on its CPU (do_affinity),
     * to an allowed CPU, and cleared as it leaves that CPU (schedule) */
    if (t->migrate_to >= 0 && (d->cpu[t->cpu].curr != i || !(t->cpus_allowed >> t->migrate_to & 1))) {
      snprintf(err, errlen, "pid %d is to move to cpu %d, but it is not current on cpu %d or may "
               "not run there", t->pid, t->migrate_to, t->cpu);
      return -1;
    }
    char why[PS_ERRLEN];
    if (t->pid && m->hooks.check_init(m, t, why, sizeof why)) {
      snprintf(err, errlen, "pid %d: %.200s", t->pid, why);
      return -1;
    }
  }
  return m->hooks.check(m, d, err, errlen);
}
