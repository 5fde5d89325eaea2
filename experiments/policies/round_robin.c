/* Round robin, built outside the package:
 *
 *     import pysched as ps
 *     ps.build_policy("experiments/policies/round_robin.c")
 *     sim = ps.Simulator("rr-c")
 *
 * One FIFO queue per CPU.  The task at its head runs until it blocks or
 * its slice of timeslice_ms is used up, then goes to the tail with a fresh
 * slice; a task that wakes joins the tail and preempts only an idle CPU.
 * Every task is equal: nice and the real-time classes are recorded (prio
 * shows 120 + nice) but not obeyed, and nothing balances the CPUs (a task
 * stays on the CPU spawn chose, unless its affinity moves it).
 *
 * The queue holds the running task too (at its head), as the O(1)
 * scheduler's arrays do; links are task indices in psTask.priv, so a state
 * copies with memcpy. */
#include <stdio.h>

#include <pysched/policy_lib.h>

#define MAX_PRIO 140  /* the idle task's prio; normal tasks show 120 + nice */
#define NONE (-1)     /* no task: the end of a queue */

enum { RR_timeslice_ms, RR_NPARAMS };

static const psParamInfo rr_params[] = {
    {"timeslice_ms", 100, 1, 10000, 0, "ms",
     "the slice a task runs before the next in line; in ticks, timeslice_ms * HZ / 1000 "
     "rounded, at least 1 (timeslice_ticks)"},
};

/* What configure derives from the parameters (psModel.derived). */
typedef struct rr_const {
  int32_t timeslice_ticks;
} rr_const;

/* Per task (psTask.priv): the queue links. */
typedef struct rr_task {
  int32_t next, prev;   /* task indices, NONE at the ends */
  int64_t nr_slices;    /* slices used up */
} rr_task;

/* Per CPU: its queue. */
typedef struct rr_rq {
  int32_t head, tail;   /* task indices, NONE when empty */
  int32_t nr_running;   /* tasks queued, the running one included */
  int64_t nr_rotations; /* slices that ended with the task moving to the tail */
} rr_rq;

static inline rr_task *RR(psTask *p) { return (rr_task *)p->priv; }
static inline const rr_task *RRc(const psTask *p) { return (const rr_task *)p->priv; }
static inline rr_rq *cpu_rq(const psModel *m, const psData *d, int cpu) {
  return (rr_rq *)ps_rq(m, d, cpu);
}
static inline int32_t slice(const psModel *m) {
  return ((const rr_const *)m->derived)->timeslice_ticks;
}

static void enqueue_tail(const psModel *m, psData *d, psTask *p) {
  rr_rq *rq = cpu_rq(m, d, p->cpu);
  int32_t i = ps_index(d, p);
  RR(p)->next = NONE;
  RR(p)->prev = rq->tail;
  if (rq->tail != NONE)
    RR(&d->task[rq->tail])->next = i;
  else
    rq->head = i;
  rq->tail = i;
  rq->nr_running++;
}

static void dequeue(const psModel *m, psData *d, psTask *p) {
  rr_rq *rq = cpu_rq(m, d, p->cpu);
  rr_task *t = RR(p);
  if (t->prev != NONE)
    RR(&d->task[t->prev])->next = t->next;
  else
    rq->head = t->next;
  if (t->next != NONE)
    RR(&d->task[t->next])->prev = t->prev;
  else
    rq->tail = t->prev;
  t->next = t->prev = NONE;
  rq->nr_running--;
}

/* The CPU is idle: a task that joins its queue preempts the idle task. */
static int cpu_idle(const psData *d, int cpu) { return ps_curr(d, cpu)->is_idle; }

/* ---- hooks ---- */

static int configure_rr(psModel *m, char *err, int errlen) {
  int64_t ticks = (m->param[RR_timeslice_ms] * m->hz + 500) / 1000;
  ((rr_const *)m->derived)->timeslice_ticks = ticks < 1 ? 1 : (int32_t)ticks;
  return 0;
}

static void init_rq_rr(const psModel *m, psData *d, int cpu) {
  rr_rq *rq = cpu_rq(m, d, cpu);
  rq->head = rq->tail = NONE;
  RR(&d->task[d->cpu[cpu].idle])->next = RR(&d->task[d->cpu[cpu].idle])->prev = NONE;
}

static int task_spawn_rr(const psModel *m, psData *d, psTask *p) {
  p->static_prio = p->prio = MAX_PRIO - 20 + p->nice;
  p->time_slice = slice(m);
  RR(p)->nr_slices = 0;
  enqueue_tail(m, d, p);
  return cpu_idle(d, p->cpu);
}

/* A forked child: a fresh slice at the tail of its parent's CPU; the parent
 * runs on. */
static void task_fork_rr(const psModel *m, psData *d, psTask *parent, psTask *child) {
  child->cpu = parent->cpu;
  child->time_slice = slice(m);
  RR(child)->nr_slices = 0;
  enqueue_tail(m, d, child);
}

static int wakeup_rr(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  enqueue_tail(m, d, p);
  return cpu_idle(d, p->cpu);
}

static void deactivate_rr(const psModel *m, psData *d, psTask *prev) { dequeue(m, d, prev); }

static psTask *pick_next_rr(const psModel *m, psData *d, int cpu) {
  int32_t head = cpu_rq(m, d, cpu)->head;
  return head == NONE ? &d->task[d->cpu[cpu].idle] : &d->task[head];
}

/* The slice ends: a fresh one, and the tail of the queue if others wait. */
static void tick_rr(const psModel *m, psData *d, int cpu) {
  psTask *p = ps_curr(d, cpu);
  if (p->is_idle || --p->time_slice > 0) return;
  p->time_slice = slice(m);
  RR(p)->nr_slices++;
  rr_rq *rq = cpu_rq(m, d, cpu);
  if (rq->nr_running < 2) return;
  dequeue(m, d, p);
  enqueue_tail(m, d, p);
  rq->nr_rotations++;
  ps_log(m, d, PS_EVT_EXPIRE, cpu, p, -1, p->prio, 0);
  ps_resched_cpu(d, cpu);
}

/* Optional: the engine offers k ticks with nothing else due; all but the
 * one that ends the slice only count time_slice down, so take those at once. */
static int64_t tick_batch_rr(const psModel *m, psData *d, int cpu, int64_t k, int apply) {
  psTask *p = ps_curr(d, cpu);
  int64_t n = p->time_slice - 1;
  if (n > k) n = k;
  if (n <= 0) return 0;
  if (apply) p->time_slice -= (int32_t)n;
  return n;
}

/* sched_yield: to the tail, keeping what is left of the slice. */
static void yield_rr(const psModel *m, psData *d, psTask *p) {
  dequeue(m, d, p);
  enqueue_tail(m, d, p);
  ps_resched_cpu(d, p->cpu);
}

static void set_nice_rr(const psModel *m, psData *d, psTask *p, int nice) {
  p->static_prio = p->prio = MAX_PRIO - 20 + nice;
}

static const psColumn rr_queue_columns[2] = {{"time_slice", NULL}, {"pid", NULL}};

/* The queue of `cpu` from head (running or next) to tail. */
static int dump_rr(const psModel *m, const psData *d, int cpu, int32_t *out, int max) {
  int n = 0;
  for (int32_t i = cpu_rq(m, d, cpu)->head; i != NONE && n < max; i = RRc(&d->task[i])->next) {
    out[2 * n] = d->task[i].time_slice;
    out[2 * n + 1] = d->task[i].pid;
    n++;
  }
  return n;
}

/* Each queue is a well-linked list of the on_rq tasks of its CPU, counted by
 * nr_running; no idle task is queued.  Indices are checked before they are
 * followed (a state may come from a damaged snapshot). */
static int check_rr(const psModel *m, const psData *d, char *err, int errlen) {
  int32_t listed = 0;
  for (int c = 0; c < m->ncpu; c++) {
    const rr_rq *rq = cpu_rq(m, d, c);
    int32_t prev = NONE, n = 0;
    for (int32_t i = rq->head; i != NONE; i = RRc(&d->task[i])->next) {
      if (i < m->ncpu || i >= d->ntask || ++n > d->ntask) {
        snprintf(err, errlen, "cpu %d: queue index %d out of range, or a cycle", c, i);
        return -1;
      }
      const psTask *t = &d->task[i];
      if (RRc(t)->prev != prev || !t->on_rq || t->cpu != c) {
        snprintf(err, errlen, "cpu %d: pid %d is mislinked, not on_rq or of cpu %d", c, t->pid,
                 t->cpu);
        return -1;
      }
      prev = i;
    }
    if (rq->tail != prev || rq->nr_running != n) {
      snprintf(err, errlen, "cpu %d: tail %d (last %d), nr_running %d for %d queued", c, rq->tail,
               prev, rq->nr_running, n);
      return -1;
    }
    listed += n;
  }
  int32_t on_rq = 0;
  for (int32_t i = m->ncpu; i < d->ntask; i++) on_rq += d->task[i].on_rq != 0;
  if (on_rq != listed) {
    snprintf(err, errlen, "%d tasks on_rq but %d queued", on_rq, listed);
    return -1;
  }
  return 0;
}

/* ---- tables ---- */

#define TF(name, type, doc) PS_FIELD(rr_task, name, type, doc)
static const psFieldInfo rr_task_fields[] = {
    TF(nr_slices, PS_F_I64, "slices used up"),
    TF(next, PS_F_I32, "next task index in its CPU's queue, -1 at the tail"),
    TF(prev, PS_F_I32, "previous task index in its CPU's queue, -1 at the head"),
};

#define RF(name, type, doc) PS_FIELD(rr_rq, name, type, doc)
static const psFieldInfo rr_rq_fields[] = {
    RF(nr_running, PS_F_I32, "tasks queued on this CPU, the running one included"),
    RF(nr_rotations, PS_F_I64, "slices that ended with the task moving to the tail"),
};

static const psFieldInfo rr_derived_fields[] = {
    {"timeslice_ticks", PS_F_I32, offsetof(rr_const, timeslice_ticks),
     "the slice in ticks at this HZ", PS_AT_MODEL},
};

static int64_t f_timeslice_ticks(const psModel *m, const int64_t *a) { return slice(m); }

static const psFormula rr_formulas[] = {
    {"timeslice_ticks", "", 0, {0}, {0}, f_timeslice_ticks, "the slice in ticks at this HZ"},
};

static const char *const rr_headline[] = {"time_slice", "nr_slices", NULL};

extern const psPolicy rr_policy;
static const psPreset rr_presets[] = {
    {"rr-c", &rr_policy, {NULL}, "round robin built outside the package: 100 ms slices", 0},
};

_Static_assert(sizeof(rr_task) <= PS_TASK_PRIV, "rr_task must fit psTask.priv");
_Static_assert(sizeof(rr_const) <= PS_DERIVED_BYTES, "rr_const must fit psModel.derived");

const psPolicy rr_policy = {
    .name = "round-robin",
    .doc = "round robin: one FIFO queue per CPU, a fixed slice, no priorities",
    PS_POLICY_TABLES(rr),
    .derived_fields = rr_derived_fields,
    .nderived_fields = PS_NELEM(rr_derived_fields),
    .rq_size = sizeof(rr_rq),
    .max_prio = MAX_PRIO,
    .headline = rr_headline,
    .queue_columns = rr_queue_columns,
    .nqueue_columns = PS_NELEM(rr_queue_columns),
    .hooks = {
        .configure = configure_rr,
        .init_rq = init_rq_rr,
        .task_spawn = task_spawn_rr,
        .task_fork = task_fork_rr,
        .wakeup = wakeup_rr,
        .deactivate = deactivate_rr,
        .pick_next = pick_next_rr,
        .tick = tick_rr,
        .tick_batch = tick_batch_rr,
        .yield = yield_rr,
        .set_nice = set_nice_rr,
        .dump = dump_rr,
        .check = check_rr,
    },
    /* no balancing: what tick_batch's ticks change on a CPU only that CPU
     * sees, so on several CPUs the engine may defer a busy CPU's ticks */
    .tick_batch_local = 1,
};

PS_POLICY_LIBRARY(&rr_policy);
