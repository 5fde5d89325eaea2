/* Snapshots: a model and its state as one flat byte string (for pickle and
 * for shipping a branched run to another process).
 *
 * Layout: magic, format version, a hash of this build's struct layouts and
 * policy tables, the preset's name, the package version that wrote it
 * (from format 5 on); the model (parameters by name), the
 * programs and sources; the state; the record rings; last a checksum
 * (FNV-1a 64) of everything before it.  The structs are stored as this
 * build lays them out, so a snapshot is read back by a build with the same
 * layout hash only.  Loading verifies the checksum, then checks every
 * length, index, count, op and time before anything is used, so that no
 * blob -- damaged or crafted -- can crash, hang or silently change a run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_private.h"

#define MAGIC "PSCHED02"
#define FORMAT_VERSION 5
#define NAME_LEN PS_SNAPSHOT_NAME

/* ---- FNV-1a 64 ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}
#define FNV_BASIS 0xcbf29ce484222325ULL

static uint64_t fnv_i64(uint64_t h, int64_t v) { return fnv(h, &v, sizeof v); }
static uint64_t fnv_str(uint64_t h, const char *s) { return fnv(h, s, strlen(s) + 1); }

static uint64_t fields_hash(uint64_t h, const psFieldInfo *f, int n) {
  for (int i = 0; i < n; i++) {
    h = fnv_str(h, f[i].name);
    h = fnv_i64(fnv_i64(fnv_i64(h, f[i].type), (int64_t)f[i].offset), f[i].at);
  }
  return h;
}

/* What a snapshot's bytes mean in this build: struct sizes, the policy's
 * state tables and parameter names. */
static uint64_t layout_hash(const psPolicy *pol) {
  int64_t sizes[] = {sizeof(psModel), sizeof(psData), sizeof(psTask), sizeof(psCpu),
                     sizeof(psOp),    sizeof(psEvt),  sizeof(psChannel), sizeof(psSourceDef),
                     sizeof(psSourceState), (int64_t)pol->rq_size, PS_MAX_PARAMS, PS_TASK_PRIV};
  uint64_t h = fnv(FNV_BASIS, sizes, sizeof sizes);
  h = fnv_str(h, pol->name);
  h = fields_hash(h, ps_task_fields, ps_ntask_fields);
  h = fields_hash(h, pol->task_fields, pol->ntask_fields);
  h = fields_hash(h, pol->rq_fields, pol->nrq_fields);
  for (int i = 0; i < pol->nparams; i++) h = fnv_str(h, pol->params[i].name);
  return h;
}

/* ---- writing ---- */

typedef struct {
  unsigned char *buf;
  size_t n, cap;
  int bad;
} writer;

static void put(writer *w, const void *p, size_t n) {
  if (w->bad || !n) return;
  if (w->n + n > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->n + n) cap *= 2;
    unsigned char *b = realloc(w->buf, cap);
    if (!b) {
      w->bad = 1;
      return;
    }
    w->buf = b;
    w->cap = cap;
  }
  memcpy(w->buf + w->n, p, n);
  w->n += n;
}

static void put_i64(writer *w, int64_t v) { put(w, &v, sizeof v); }

static void put_name(writer *w, const char *s) {
  char name[NAME_LEN] = {0};
  snprintf(name, sizeof name, "%s", s);
  put(w, name, sizeof name);
}

static void put_ring(writer *w, const psRing *r) {
  put_i64(w, r->n);
  put_i64(w, r->dropped);
  unsigned char *tmp = r->n ? malloc((size_t)r->n * r->elem) : NULL;
  if (r->n && !tmp) {
    w->bad = 1;
    return;
  }
  psu_ring_read(r, tmp);
  put(w, tmp, (size_t)r->n * r->elem);
  free(tmp);
}

int ps_snapshot_save(const psModel *m, const psData *d, unsigned char **out, size_t *len) {
  writer w = {0};
  put(&w, MAGIC, 8);
  put_i64(&w, FORMAT_VERSION);
  put_i64(&w, (int64_t)layout_hash(m->policy));
  put_name(&w, m->preset->name);
  put_name(&w, PS_VERSION);
  put(&w, m, sizeof *m);
  put_i64(&w, m->policy->nparams);
  for (int i = 0; i < m->policy->nparams; i++) {
    put_name(&w, m->policy->params[i].name);
    put_i64(&w, m->param[i]);
  }
  put(&w, m->ops, (size_t)m->nops * sizeof(psOp));
  put(&w, m->progs, (size_t)m->nprogs * sizeof(psProgram));
  put(&w, m->src, (size_t)m->nsrc * sizeof(psSourceDef));
  put(&w, d, sizeof *d);
  put(&w, d->cpu, (size_t)m->ncpu * sizeof(psCpu));
  put(&w, d->rq, (size_t)m->ncpu * m->policy->rq_size);
  put(&w, d->task, (size_t)d->ntask * sizeof(psTask));
  put(&w, d->chan, (size_t)d->nchan * sizeof(psChannel));
  put(&w, d->src, (size_t)d->nsrc * sizeof(psSourceState));
  int nomem = 0;
  psEvt *evs = psu_evq_sorted(&d->evq, &nomem);
  w.bad |= nomem;
  put(&w, evs, (size_t)d->evq.n * sizeof(psEvt));
  free(evs);
  put_ring(&w, &d->events);
  put_ring(&w, &d->latencies);
  put_ring(&w, &d->periodic);
  put_ring(&w, &d->series);
  put_ring(&w, &d->exited);
  if (!w.bad) put_i64(&w, (int64_t)fnv(FNV_BASIS, w.buf, w.n));
  if (w.bad) {
    free(w.buf);
    return -1;
  }
  *out = w.buf;
  *len = w.n;
  return 0;
}

/* ---- reading ---- */

typedef struct {
  const unsigned char *p;
  size_t left;
} reader;

static int get(reader *r, void *dst, size_t n) {
  if (n > r->left) return -1;
  if (!n) return 0;
  memcpy(dst, r->p, n);
  r->p += n;
  r->left -= n;
  return 0;
}

/* Allocate count*size bytes (at least one) and read them. */
static void *get_array(reader *r, int64_t count, size_t size, int64_t max) {
  /* by division: count * size may wrap for a crafted count */
  if (count < 0 || count > max || (size_t)count > r->left / size) return NULL;
  void *a = calloc(count ? (size_t)count : 1, size);
  if (a && get(r, a, (size_t)count * size)) {
    free(a);
    return NULL;
  }
  return a;
}

static int get_ring(reader *r, psRing *ring, size_t elem) {
  int64_t n, dropped;
  psu_ring_init(ring, elem);
  if (get(r, &n, sizeof n) || get(r, &dropped, sizeof dropped)) return -1;
  if (n < 0 || dropped < 0 || (size_t)n > r->left / elem) return -1;
  if (n) {
    ring->buf = get_array(r, n, elem, n);
    if (!ring->buf) return -1;
  }
  ring->n = ring->cap = n;
  ring->dropped = dropped;
  return 0;
}

static int index_ok(int32_t i, int32_t n) { return i >= -1 && i < n; }

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* No pid is held by two slots. */
static int pids_unique(const psModel *m, const psData *d) {
  int32_t n = 0, *pids = malloc((size_t)d->ntask * sizeof(int32_t));
  if (!pids) return 0;
  for (int32_t i = m->ncpu; i < d->ntask; i++)
    if (d->task[i].pid) pids[n++] = d->task[i].pid;
  qsort(pids, (size_t)n, sizeof(int32_t), cmp_i32);
  int ok = 1;
  for (int32_t k = 1; k < n; k++) ok &= pids[k] != pids[k - 1];
  free(pids);
  return ok;
}
static int time_ok(int64_t t) { return t >= 0 && t <= PS_MAX_TIME_NS; }
/* A count that runs only add to (switches, wakeups, forks, posts ...):
 * 0..PS_COUNT_MAX, where the engine's counts stop (trace.h). */
static int count_ok(int64_t v) { return v >= 0 && v <= PS_COUNT_MAX; }
/* A time counted up to now (CPU, wait and sleep time ...): 0..now. */
static int span_ok(int64_t v, int64_t now) { return v >= 0 && v <= now; }

#define BAD(...)                            \
  do {                                      \
    snprintf(err, errlen, __VA_ARGS__);     \
    return 0;                               \
  } while (0)

/* The machine, before the policy derives anything from it. */
static int machine_ok(const psModel *m, char *err, int errlen) {
  if (m->ncpu < 1 || m->ncpu > PS_MAX_CPUS) BAD("cpus %d", m->ncpu);
  if (m->hz < 1 || m->hz > 100000 || 1000000000 % m->hz || m->tick_ns != 1000000000 / m->hz)
    BAD("hz %d with a tick of %lld ns", m->hz, (long long)m->tick_ns);
  return 1;
}

/* The model's recording options, programs and sources. */
static int model_ok(const psModel *m, char *err, int errlen) {
  if ((m->stagger_ticks | m->rec_events | m->rec_latency | m->rec_series | m->overwrite |
       m->debug_checks) & ~1)
    BAD("a flag is neither 0 nor 1");
  if (m->fast_paths & ~PS_FAST_ALL) BAD("fast paths %d", m->fast_paths);
  if (m->switch_cost_ns < 0 || m->switch_cost_ns > m->tick_ns) BAD("switch_cost_ns");
  if (m->max_tasks < 1 || m->max_tasks > 10000000) BAD("max_tasks %d", m->max_tasks);
  if (m->keep_exited < 0 || m->keep_exited > 10000000) BAD("keep_exited %d", m->keep_exited);
  if (m->series_every < 1 || m->max_trace_bytes < 0) BAD("series_every or max_trace_bytes");
  if (m->nseries < 0 || m->nseries > PS_MAX_SERIES_FIELDS || m->rec_series != (m->nseries > 0))
    BAD("series fields");
  for (int32_t k = 0; k < m->nseries; k++)
    if (m->series[k] < 0 || m->series[k] >= ps_nfields(m)) BAD("series field %d", m->series[k]);
  if (m->nchan < 0) BAD("channels");
  /* every program as psu_program_check sees it: loop references relative */
  int32_t next = 0;
  for (int32_t k = 0; k < m->nprogs; k++) {
    const psProgram *pr = &m->progs[k];
    if (pr->first != next || pr->n < 0 || pr->n > m->nops - pr->first) BAD("program %d", k);
    next = pr->first + pr->n;
    psOp *ops = malloc((size_t)(pr->n ? pr->n : 1) * sizeof(psOp));
    if (!ops) BAD("out of memory");
    for (int32_t i = 0; i < pr->n; i++) {
      ops[i] = m->ops[pr->first + i];
      /* a loop's END and an END's LOOP: inside the program, checked before
       * the subtraction that a crafted index would overflow */
      int32_t *ref = ops[i].kind == PS_OP_LOOP ? &ops[i].arg2
                     : ops[i].kind == PS_OP_END ? &ops[i].arg : NULL;
      if (ref && (*ref < pr->first || *ref - pr->first >= pr->n)) {
        free(ops);
        BAD("program %d: op %d refers outside it", k, i);
      }
      if (ref) *ref -= pr->first;
    }
    char msg[PS_ERRLEN];
    int rc = psu_program_check(ops, pr->n, m->nprogs, m->nchan, msg, sizeof msg);
    free(ops);
    if (rc) BAD("program %d: %.200s", k, msg);
  }
  if (next != m->nops) BAD("ops outside every program");
  for (int32_t k = 0; k < m->nsrc; k++) {
    const psSourceDef *s = &m->src[k];
    if (s->chan < 0 || s->chan >= m->nchan || (s->kind != PS_SRC_EVERY && s->kind != PS_SRC_POISSON) ||
        s->period_ns < 1 || s->period_ns > PS_MAX_DURATION_NS || !time_ok(s->start_ns) ||
        s->count < -1)
      BAD("source %d", k);
  }
  return 1;
}

/* Where task t is in its program: pc and loop frames inside it. */
static int program_state_ok(const psModel *m, const psTask *t) {
  const psProgState *s = &t->ps;
  if (s->prog < 0 || s->prog >= m->nprogs) return 0;
  const psProgram *pr = &m->progs[s->prog];
  if (s->pc < pr->first || s->pc > pr->first + pr->n || s->op_left < 0) return 0;
  /* the loop frames are those of the loops whose body holds pc, entered
   * at their LOOP op and not yet left at their END (psu_loop_end pops one
   * at every END it reaches), outermost first, each with no more rounds
   * left than its count; an END reached without its frame would pop one
   * below the stack */
  int32_t open[PS_LOOP_DEPTH];
  int depth = 0;
  for (int32_t i = pr->first; i < s->pc; i++) {
    if (m->ops[i].kind == PS_OP_LOOP) {
      if (depth == PS_LOOP_DEPTH) return 0;
      open[depth++] = i;
    } else if (m->ops[i].kind == PS_OP_END) {
      if (!depth) return 0;
      depth--;
    }
  }
  if (s->loop_depth != depth) return 0;
  for (int k = 0; k < depth; k++) {
    int64_t count = m->ops[open[k]].arg;
    if (s->loop[k].op != open[k] ||
        (count ? s->loop[k].left < 0 || s->loop[k].left >= count : s->loop[k].left != -1))
      return 0;
  }
  /* children of a fork op still to come (psu_program_unfork gives one back) */
  int at_fork = s->pc < pr->first + pr->n && m->ops[s->pc].kind == PS_OP_FORK;
  if (at_fork ? s->op_left > m->ops[s->pc].arg2 : s->op_left != 0) return 0;
  /* a timed op's call is half done only at a periodic or frame op */
  if (s->phase != 0 && (s->phase != 1 || s->pc >= pr->first + pr->n ||
                        (m->ops[s->pc].kind != PS_OP_PERIODIC && m->ops[s->pc].kind != PS_OP_FRAME)))
    return 0;
  if (s->pad || (s->deadline_ns != -1 && !time_ok(s->deadline_ns)) ||
      (s->timer_ns != -1 && !time_ok(s->timer_ns)) || !time_ok(s->due_start_ns) || !time_ok(s->due_begin_ns) ||
      !time_ok(s->call_ns) || !time_ok(s->call_due_ns) || s->call_lat_ns < 0)
    return 0;
  return 1;
}

/* Every generic index, count and time of the state, so that the engine and
 * the policy's check may walk it safely. */
/* ev: the nev events the snapshot holds, not yet queued. */
static int state_ok(const psModel *m, const psData *d, const psEvt *ev, int64_t nev, char *err,
                    int errlen) {
  int64_t now = d->now_ns;
  if (!time_ok(now) || d->jiffies != (uint64_t)(now / m->tick_ns)) BAD("the clock");
  if (d->instant_actions < 0 || d->instant_actions > PS_MAX_ACTIONS_PER_INSTANT + 1) BAD("actions");
  for (int c = 0; c < m->ncpu; c++) {
    const psCpu *cpu = &d->cpu[c];
    if (cpu->curr < 0 || cpu->curr >= d->ntask || cpu->idle != c) BAD("cpu %d's task", c);
    /* its next tick: the first after now on its grid, CPU c's ticks falling
     * c * tick_ns / ncpu after CPU 0's with staggered ticks (ps_data_init) */
    int64_t phase = m->stagger_ticks ? c * (m->tick_ns / m->ncpu) : 0, next = d->next_tick_ns[c];
    if (next <= now || next - m->tick_ns > (now > phase ? now : phase) ||
        (next - phase) % m->tick_ns || cpu->run_since_ns > now || cpu->run_since_ns < 0 ||
        cpu->overhead_until_ns > now + m->switch_cost_ns)
      BAD("cpu %d's times", c);
    /* busy time is accounted up to run_since_ns (sync_cpu) */
    if (!count_ok(cpu->nr_switches) || !span_ok(cpu->busy_ns, cpu->run_since_ns) || cpu->ticks < 0 ||
        (uint64_t)cpu->ticks > d->jiffies + 1 || cpu->busy_ticks < 0 || cpu->busy_ticks > cpu->ticks)
      BAD("cpu %d's counters", c);
  }
  if (d->next_pid < 1 || d->next_pid == INT32_MAX || !index_ok(d->free_slot, d->ntask))
    BAD("pid counter or free list");
  int32_t alive = 0, nfree = 0;
  uint64_t all = m->ncpu == 64 ? ~(uint64_t)0 : (((uint64_t)1 << m->ncpu) - 1);
  for (int32_t i = 0; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    int idle = i < m->ncpu;
    /* a free slot: pid 0, DEAD; a task: a pid that has been given out */
    int free_slot = !idle && !t->pid;
    if (t->is_idle != idle || (idle && t->pid) || t->pid < 0 || t->pid >= d->next_pid ||
        free_slot != (t->state == PS_TASK_DEAD) || (free_slot && (t->on_rq || t->exit_ns < 0)))
      BAD("task %d's identity", i);
    /* an idle task never sleeps, exits, waits or moves: schedule() would
     * reap an idle task that has an exit time */
    if (idle && (t->exit_ns != -1 || t->state != PS_TASK_RUNNING || t->on_rq || t->cpu != i ||
                 t->cpus_allowed != (uint64_t)1 << i || t->migrate_to != -1 || t->wait_chan != -1 ||
                 t->burst_left_ns || t->woken_ns != -1))
      BAD("cpu %d's idle task", i);
    if (t->ppid < 0 || t->ppid >= t->pid + !t->pid || (!t->pid && t->ppid)) BAD("pid %d's parent", t->pid);
    if (t->state != 0 && t->state != 1 && t->state != 2 && t->state != 4 && t->state != 8)
      BAD("pid %d's state", t->pid);
    /* a slice counts down to 0 (scheduler_tick); spawn gives at most 10^6
     * ticks, and sched_exit's return of a child's slice caps at the policy's
     * maximum: twice that bounds every policy's */
    if (t->policy < PS_SCHED_NORMAL || t->policy > PS_SCHED_RR || t->rt_priority < 0 ||
        t->rt_priority > 99 || (!idle && (t->nice < -20 || t->nice > 19)) ||
        (t->pid && (t->time_slice < 0 || t->time_slice > 2000000)))
      BAD("pid %d's policy, nice or time_slice", t->pid);
    if (t->cpu < 0 || t->cpu >= m->ncpu || !(t->cpus_allowed & all) || (t->cpus_allowed & ~all) ||
        t->migrate_to < -1 || t->migrate_to >= m->ncpu || (t->on_rq & ~1))
      BAD("pid %d's cpu", t->pid);
    if (t->burst_left_ns < 0 || t->burst_left_ns > PS_MAX_DURATION_NS ||
        !index_ok(t->wait_chan, m->nchan) || !index_ok(t->wait_next, d->ntask))
      BAD("pid %d's work or waits", t->pid);
    if (t->acct < PS_ACCT_RUN || t->acct > PS_ACCT_NONE || !time_ok(t->since_ns) ||
        t->since_ns > now || (t->exit_ns != -1 && (t->exit_ns < 0 || t->exit_ns > now)) ||
        (t->woken_ns != -1 && (t->woken_ns < 0 || t->woken_ns > now)))
      BAD("pid %d's accounting", t->pid);
    if (!span_ok(t->cpu_ns, now) || !span_ok(t->wait_ns, now) || !span_ok(t->sleep_ns, now) ||
        t->cpu_ticks < 0 || (uint64_t)t->cpu_ticks > d->jiffies + 1 || !count_ok(t->nvcsw) ||
        !count_ok(t->nivcsw) || !count_ok(t->nr_wakeups) || !count_ok(t->nr_migrations) ||
        !count_ok(t->lat_count) || !span_ok(t->lat_sum_ns, now) || !span_ok(t->lat_max_ns, now) ||
        t->lat_max_ns > t->lat_sum_ns || !span_ok(t->start_ns, now) ||
        /* the accounted intervals tile its life up to since_ns (acct) */
        t->cpu_ns + t->wait_ns + t->sleep_ns != t->since_ns - t->start_ns)
      BAD("pid %d's counters", t->pid);
    if (!idle && !program_state_ok(m, t)) BAD("pid %d's program state", t->pid);
    alive += !idle && t->exit_ns < 0;
    nfree += free_slot;
  }
  if (alive != d->nlive) BAD("%d live tasks, not %d", alive, d->nlive);
  if (!pids_unique(m, d)) BAD("a pid held by two tasks");
  /* the free list: exactly the free slots, each once */
  int32_t n = 0;
  for (int32_t i = d->free_slot; i >= 0; i = d->task[i].wait_next, n++)
    if (n >= nfree || i < m->ncpu || d->task[i].pid) BAD("the free list");
  if (n != nfree) BAD("the free list");
  for (int64_t k = 0; k < d->exited.n; k++) {
    const psTask *t = psu_ring_at(&d->exited, k);
    if (t->is_idle || t->pid < 1 || t->pid >= d->next_pid || t->state != PS_TASK_DEAD ||
        t->exit_ns < 0 || t->exit_ns > now)
      BAD("exited record %lld", (long long)k);
  }
  if (!count_ok(d->nr_forks) || !count_ok(d->nr_exits)) BAD("the fork and exit counts");
  for (int k = 0; k < PS_NWARN; k++)
    if (!count_ok(d->warn[k])) BAD("warning count %d", k);
  for (int32_t k = 0; k < d->nchan; k++) {
    const psChannel *c = &d->chan[k];
    if (!count_ok(c->count) || !index_ok(c->head, d->ntask) || !index_ok(c->tail, d->ntask))
      BAD("channel %d", k);
    /* its waiters: a chain of tasks that wait on it, ending at tail */
    int32_t n = 0, last = -1;
    for (int32_t i = c->head; i >= 0; i = d->task[i].wait_next, n++) {
      if (n > d->ntask || d->task[i].wait_chan != k) BAD("channel %d's waiters", k);
      last = i;
    }
    if (last != c->tail) BAD("channel %d's waiters", k);
  }
  for (int32_t k = 0; k < d->nsrc; k++)
    if (d->src[k].fired < 0 || (m->src[k].count >= 0 && d->src[k].fired > m->src[k].count))
      BAD("source %d's state", k);
  for (int64_t k = 0; k < nev; k++) {
    const psEvt *e = &ev[k];
    if (e->cls < PS_EV_TIMER || e->cls > PS_EV_SOURCE || e->key < 0 || e->pad ||
        e->key >= (e->cls == PS_EV_SOURCE ? m->nsrc : d->ntask) ||
        e->rank != (e->cls == PS_EV_SOURCE ? e->key : d->task[e->key].pid) || e->rank < (e->cls != PS_EV_SOURCE) ||
        e->time_ns < now ||
        e->time_ns > now + PS_MAX_DURATION_NS + m->tick_ns)
      BAD("event %lld", (long long)k);
    /* a source that has fired all its count has no next firing
     * (source_schedule) */
    if (e->cls == PS_EV_SOURCE && m->src[e->key].count >= 0 &&
        d->src[e->key].fired >= m->src[e->key].count)
      BAD("event %lld: source %d fires past its count", (long long)k, e->key);
    /* a periodic source's next firing is where its count puts it
     * (source_schedule; start_ns is never before the instant it was added) */
    if (e->cls == PS_EV_SOURCE && m->src[e->key].kind == PS_SRC_EVERY) {
      const psSourceDef *s = &m->src[e->key];
      int64_t fired = d->src[e->key].fired;
      if (fired > (PS_MAX_TIME_NS - s->start_ns) / s->period_ns ||
          e->time_ns != s->start_ns + fired * s->period_ns)
        BAD("event %lld: source %d's next firing", (long long)k, e->key);
    }
    /* written earliest first (psu_evq_sorted) */
    const psEvt *parent = &ev[(k - 1) / 2];
    if (k && (parent->time_ns > e->time_ns ||
              (parent->time_ns == e->time_ns &&
               (parent->cls > e->cls || (parent->cls == e->cls && parent->rank > e->rank)))))
      BAD("event %lld out of order", (long long)k);
  }
  return 1;
}

/* The records of the rings, as the engine writes them: oldest first, at or
 * before now, naming CPUs of this machine and pids given out, so that
 * every reader (events(), export_ftrace ...) may index by them. */
static int records_ok(const psModel *m, const psData *d, char *err, int errlen) {
  int64_t now = d->now_ns, last = 0;
  int32_t pids = d->next_pid, ids = pids > m->ncpu ? pids : m->ncpu;
  for (int64_t k = 0; k < d->events.n; k++) {
    const psEventRec *e = psu_ring_at(&d->events, k);
    if (e->time_ns < last || e->time_ns > now || e->kind < 0 || e->kind >= PS_NEVT_KINDS ||
        e->cpu < 0 || e->cpu >= m->ncpu || e->pid < -1 || e->pid >= pids || e->other < -1 ||
        e->other >= ids)
      BAD("event record %lld", (long long)k);
    last = e->time_ns;
  }
  last = 0;
  for (int64_t k = 0; k < d->latencies.n; k++) {
    const psLatencyRec *l = psu_ring_at(&d->latencies, k);
    if (l->time_ns < last || l->time_ns > now || l->latency_ns < 0 || l->latency_ns > l->time_ns ||
        l->pid < 1 || l->pid >= pids || l->cpu < 0 || l->cpu >= m->ncpu)
      BAD("latency record %lld", (long long)k);
    last = l->time_ns;
  }
  for (int64_t k = 0; k < d->periodic.n; k++) {
    const psPeriodicRec *r = psu_ring_at(&d->periodic, k);
    if (!span_ok(r->start_ns, now) || !time_ok(r->due_ns) || !span_ok(r->latency_ns, now) ||
        (r->finish_ns != -1 && !span_ok(r->finish_ns, now)) || r->missed_latency_ns < 0 ||
        r->pid < 1 || r->pid >= pids || (r->met & ~1) || r->missed < 0 || r->dropped < 0)
      BAD("timed-op record %lld", (long long)k);
  }
  last = 0;
  for (int64_t k = 0; k < d->series.n; k++) {
    const psSampleRec *r = psu_ring_at(&d->series, k);
    if (r->time_ns < last || r->time_ns > now || r->pid < 0 || r->pid >= pids || r->field < 0 ||
        r->field >= m->nseries)
      BAD("series record %lld", (long long)k);
    last = r->time_ns;
  }
  if (!count_ok(d->events.dropped) || !count_ok(d->latencies.dropped) ||
      !count_ok(d->periodic.dropped) || !count_ok(d->series.dropped) || !count_ok(d->exited.dropped))
    BAD("a count of dropped records");
  return 1;
}

/* The parameters by name, checked and applied as one set. */
static int get_params(reader *r, psModel *m, char *err, int errlen) {
  int64_t n;
  if (get(r, &n, sizeof n) || n != m->policy->nparams) BAD("the parameter list");
  char names[PS_MAX_PARAMS][NAME_LEN];
  const char *ptrs[PS_MAX_PARAMS];
  int64_t values[PS_MAX_PARAMS];
  int seen[PS_MAX_PARAMS] = {0};
  for (int64_t i = 0; i < n; i++) {
    if (get(r, names[i], NAME_LEN) || get(r, &values[i], sizeof values[i])) BAD("parameters");
    names[i][NAME_LEN - 1] = 0;
    ptrs[i] = names[i];
    int k = ps_param_index(m, names[i]);
    if (k < 0 || seen[k]++) BAD("parameter %lld unknown or repeated", (long long)i);
  }
  char msg[PS_ERRLEN];
  if (ps_set_params(m, ptrs, values, (int)n, msg, sizeof msg)) BAD("%s", msg);
  return 1;
}

/* The header: magic, format version, layout hash, preset name and the
 * package version that wrote it (made_by, "" before format 5); 0, or -1
 * with err. */
static int get_header(reader *r, int64_t *version, int64_t *hash, char *name, char *made_by,
                      char *err, int errlen) {
  char magic[8];
  made_by[0] = 0;
  if (get(r, magic, 8) || memcmp(magic, MAGIC, 8) || get(r, version, sizeof *version) ||
      get(r, hash, sizeof *hash) || get(r, name, NAME_LEN) ||
      (*version >= 5 && get(r, made_by, NAME_LEN))) {
    snprintf(err, errlen, "not a pysched snapshot");
    return -1;
  }
  name[NAME_LEN - 1] = 0;
  made_by[NAME_LEN - 1] = 0;
  return 0;
}

int ps_snapshot_preset_name(const unsigned char *buf, size_t len, char *name, char *err,
                            int errlen) {
  reader r = {buf, len};
  int64_t version, hash;
  char made_by[NAME_LEN];
  return get_header(&r, &version, &hash, name, made_by, err, errlen);
}

/* Whether this build reads a snapshot of that header for preset pre; 0, or
 * -1 (or PS_SNAPSHOT_OTHER_LAYOUT) with err saying what made it and what
 * this build reads. */
static int readable(int64_t version, int64_t hash, const char *name, const char *made_by,
                    const psPreset *pre, char *err, int errlen) {
  char who[NAME_LEN + 32];
  if (made_by[0])
    snprintf(who, sizeof who, "pysched %s", made_by);
  else
    snprintf(who, sizeof who, "a pysched older than 0.2.0");
  if (version != FORMAT_VERSION) {
    snprintf(err, errlen, "the snapshot was made by %s (snapshot format %lld); this build, "
             "pysched %s, reads format %d", who, (long long)version, PS_VERSION, FORMAT_VERSION);
    return -1;
  }
  if (strcmp(name, pre->name)) {
    snprintf(err, errlen, "the snapshot is of preset '%s', not '%s'", name, pre->name);
    return -1;
  }
  if ((uint64_t)hash == layout_hash(pre->policy)) return 0;
  snprintf(err, errlen, "the snapshot was made by %s for a '%s' whose structs or policy tables "
           "differ from this build's (pysched %s, snapshot format %d)", who, name, PS_VERSION,
           FORMAT_VERSION);
  return strcmp(made_by, PS_VERSION) ? -1 : PS_SNAPSHOT_OTHER_LAYOUT;
}

int ps_snapshot_load(const unsigned char *buf, size_t len, const psPreset *pre, psModel *m,
                     psData *d, char *err, int errlen) {
  reader r = {buf, len};
  char name[NAME_LEN], made_by[NAME_LEN];
  int64_t version, hash, sum;
  char why[PS_ERRLEN] = "truncated";
  psEvt *ev = NULL;
  memset(m, 0, sizeof *m);
  memset(d, 0, sizeof *d);
  if (get_header(&r, &version, &hash, name, made_by, err, errlen)) return -1;
  int rc = readable(version, hash, name, made_by, pre, err, errlen);
  if (rc) return rc;
  if (len < 8 + sizeof sum) goto bad;
  memcpy(&sum, buf + len - sizeof sum, sizeof sum);
  if ((uint64_t)sum != fnv(FNV_BASIS, buf, len - sizeof sum)) {
    snprintf(why, sizeof why, "its checksum does not match");
    goto bad;
  }
  r.left -= sizeof sum;
  psModel mm;
  psData dd;
  if (get(&r, &mm, sizeof mm)) goto bad;
  /* only plain values are taken from the stored struct; pointers and the
   * policy come from this build */
  mm.policy = pre->policy;
  mm.preset = pre;
  mm.ctx = NULL;
  mm.ops = NULL;
  mm.progs = NULL;
  mm.src = NULL;
  if (ps_hooks_resolve(pre->policy, &mm.hooks, why, sizeof why)) goto bad;
  *m = mm;
  if (!machine_ok(m, why, sizeof why) || !get_params(&r, m, why, sizeof why)) goto bad;
  m->ops = get_array(&r, mm.nops, sizeof(psOp), 1 << 26);
  m->progs = get_array(&r, mm.nprogs, sizeof(psProgram), 1 << 26);
  m->src = get_array(&r, mm.nsrc, sizeof(psSourceDef), 1 << 26);
  if (!m->ops || !m->progs || !m->src) goto bad;
  m->cap_ops = mm.nops ? mm.nops : 1;
  m->cap_progs = mm.nprogs ? mm.nprogs : 1;
  m->cap_src = mm.nsrc ? mm.nsrc : 1;
  if (!model_ok(m, why, sizeof why)) goto bad;
  if (get(&r, &dd, sizeof dd)) goto bad;
  if (dd.ntask < m->ncpu || dd.nchan != m->nchan || dd.nsrc != m->nsrc || dd.evq.n < 0) goto bad;
  d->now_ns = dd.now_ns;
  d->jiffies = dd.jiffies;
  d->ntask = d->cap_task = dd.ntask;
  d->nlive = dd.nlive;
  d->next_pid = dd.next_pid;
  d->free_slot = dd.free_slot;
  d->nchan = dd.nchan;
  d->nsrc = dd.nsrc;
  memcpy(d->warn, dd.warn, sizeof d->warn);
  d->nr_forks = dd.nr_forks;
  d->nr_exits = dd.nr_exits;
  /* the livelock count travels too: a twin fails where its original would */
  d->instant_ns = dd.instant_ns;
  d->instant_actions = dd.instant_actions;
  /* what the fast paths did goes on counting; their deferred ticks are
   * none between runs */
  const psFastState *counts = ps_fast(&dd);
  ps_fast(d)->wide_scans = counts->wide_scans;
  ps_fast(d)->ticks_batched = counts->ticks_batched;
  ps_fast(d)->ticks_deferred = counts->ticks_deferred;
  /* the ticks are checked below; the bursts' ends are set again when the
   * next run starts (every CPU settles then) */
  memcpy(d->next_tick_ns, dd.next_tick_ns, sizeof d->next_tick_ns);
  memcpy(d->burst_end_ns, dd.burst_end_ns, sizeof d->burst_end_ns);
  d->cpu = get_array(&r, m->ncpu, sizeof(psCpu), PS_MAX_CPUS);
  d->rq = get_array(&r, m->ncpu, m->policy->rq_size, PS_MAX_CPUS);
  d->task = get_array(&r, dd.ntask, sizeof(psTask), 1 << 26);
  d->chan = get_array(&r, dd.nchan, sizeof(psChannel), 1 << 26);
  d->src = get_array(&r, dd.nsrc, sizeof(psSourceState), 1 << 26);
  psu_evq_init(&d->evq, m->tick_ns, !(m->fast_paths & PS_FAST_WHEEL));
  d->evq.nsorted = dd.evq.nsorted;
  d->evq.last_ns = dd.now_ns;
  ev = get_array(&r, dd.evq.n, sizeof(psEvt), 1 << 26);
  if (!d->cpu || !d->rq || !d->task || !d->chan || !d->src || !ev) goto bad;
  if (get_ring(&r, &d->events, sizeof(psEventRec)) ||
      get_ring(&r, &d->latencies, sizeof(psLatencyRec)) ||
      get_ring(&r, &d->periodic, sizeof(psPeriodicRec)) ||
      get_ring(&r, &d->series, sizeof(psSampleRec)) ||
      get_ring(&r, &d->exited, sizeof(psTask)) || d->exited.n > m->keep_exited || r.left)
    goto bad;
  if (!state_ok(m, d, ev, dd.evq.n, why, sizeof why) || !records_ok(m, d, why, sizeof why))
    goto bad;
  for (int64_t k = 0; k < dd.evq.n; k++)
    if (psu_evq_push(&d->evq, ev[k])) goto bad;
  free(ev);
  ev = NULL;
  if (ps_check(m, d, why, sizeof why)) goto bad;
  return 0;
bad:
  free(ev);
  ps_data_free(d);
  ps_model_free(m);
  snprintf(err, errlen, "the snapshot is damaged: %s", why);
  return -1;
}
