/* The sched_ext class's rules (kernel/sched/ext.c, 6.12.y): the enqueue
 * path with direct dispatch (select_task_rq_scx, enqueue_task_scx,
 * do_enqueue_task, direct_dispatch), the dispatch path of a CPU
 * (balance_one, flush_dispatch_buf, consume_dispatch_q, pick_task_scx),
 * put_prev_task_scx and set_next_task_scx, the notifiers in the kernel's
 * order (runnable, running, stopping, quiescent), slices counted down in
 * ns (update_curr_scx, task_tick_scx), weights, the watchdog
 * (check_rq_for_timeouts), and the hooks of psPolicy built on them.  RT
 * tasks form a class above, one list per CPU, best prio first (rt.c).
 *
 * Where the engine's order differs from the kernel's: schedule() calls
 * put_prev before pick_next, so the class does put_prev's work inside
 * pick_next, after balance_one and the choice of next, where
 * put_prev_set_next_task does it (6.12 core.c).  Kicks and direct
 * dispatches to another CPU's local DSQ take effect at once, where the
 * kernel defers them to an irq work or a balance callback.
 *
 * A file of ~550 lines: the class's rules are one concept, the order of
 * whose steps matters across them. */
#include "ext.h"

#include <string.h>

#define RR_TIMESLICE_MS 100

/* ---- calling the ops: the op being called is noted for errors and
 * for the kfuncs that only some ops may use ---- */

#define OPS_CALL(m, d, OP, cpu, call)          \
  do {                                         \
    ext_shared *s_ = XS(m, d);                 \
    int32_t op_ = s_->op, cpu_ = s_->this_cpu; \
    s_->op = (OP);                             \
    s_->this_cpu = (cpu);                      \
    call;                                      \
    s_->op = op_;                              \
    s_->this_cpu = cpu_;                       \
  } while (0)

static int is_ext_task(const psTask *p) { return !p->is_idle && !ext_rt(p); }

/* sched_weight_to_cgroup(sched_prio_to_weight[static_prio - MAX_RT_PRIO])
 * (scx_ops_enable_task; kernel/sched/sched.h): the 1..10000 scale where
 * nice 0 is 100, rounded to the closest */
static const int prio_to_weight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
    1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
    110,   87,    70,    56,    45,    36,    29,    23,    18,    15};

static uint32_t ext_weight_of_nice(int nice) {
  uint64_t w = ((uint64_t)prio_to_weight[nice + 20] * 100 + 512) / 1024;
  return (uint32_t)(w < 1 ? 1 : w > 10000 ? 10000 : w);
}

static void set_task_cpu(const psModel *m, psData *d, psTask *p, int dest) {
  if (p->cpu == dest) return;
  ps_log(m, d, PS_EVT_MIGRATE, dest, p, p->cpu, p->prio, 0);
  ps_count_up(&p->nr_migrations);
  p->cpu = dest;
}

/* update_curr_scx: the running task's slice, in ns */
static void update_curr(const psModel *m, psData *d, int cpu) {
  (void)m;
  psTask *curr = ps_curr(d, cpu);
  if (!is_ext_task(curr)) return;
  ext_task *x = XT(curr);
  int64_t delta = d->now_ns - x->exec_start;
  if (delta <= 0) return;
  x->exec_start = d->now_ns;
  x->slice -= (uint64_t)delta < x->slice ? (uint64_t)delta : x->slice;
}

static void set_task_runnable(psData *d, psTask *p) {
  ext_task *x = XT(p);
  if (x->flags & EXT_TASK_RESET_RUNNABLE_AT) {
    x->runnable_at = (int64_t)d->jiffies;
    x->flags &= ~EXT_TASK_RESET_RUNNABLE_AT;
  }
  x->flags |= EXT_TASK_RUNNABLE;
}

static void clr_task_runnable(psTask *p, int reset_runnable_at) {
  XT(p)->flags &= ~EXT_TASK_RUNNABLE;
  if (reset_runnable_at) XT(p)->flags |= EXT_TASK_RESET_RUNNABLE_AT;
}

/* ---- the RT class above: one list per CPU, best prio first, FIFO among
 * equals, linked through ext_task.next/prev ---- */

static void rt_link(const psModel *m, psData *d, psTask *p) {
  ext_rq *rq = XRQ(m, d, p->cpu);
  int32_t i = ps_index(d, p), before = rq->rt_head;
  while (before >= 0 && d->task[before].prio <= p->prio) before = XT(&d->task[before])->next;
  ext_task *x = XT(p);
  x->next = before;
  x->prev = before >= 0 ? XT(&d->task[before])->prev : rq->rt_tail;
  if (x->prev >= 0)
    XT(&d->task[x->prev])->next = i;
  else
    rq->rt_head = i;
  if (before >= 0)
    XT(&d->task[before])->prev = i;
  else
    rq->rt_tail = i;
  rq->rt_nr_running++;
}

static void rt_unlink(const psModel *m, psData *d, psTask *p) {
  ext_rq *rq = XRQ(m, d, p->cpu);
  ext_task *x = XT(p);
  if (x->prev >= 0)
    XT(&d->task[x->prev])->next = x->next;
  else
    rq->rt_head = x->next;
  if (x->next >= 0)
    XT(&d->task[x->next])->prev = x->prev;
  else
    rq->rt_tail = x->prev;
  x->next = x->prev = -1;
  rq->rt_nr_running--;
}

/* an RT task queued on p->cpu preempts anything but a better RT task */
static int rt_preempts(psData *d, const psTask *p) {
  const psTask *curr = ps_curr(d, p->cpu);
  return curr != p && (curr->is_idle || !ext_rt(curr) || p->prio < curr->prio);
}

/* ---- dispatch queues and the class ---- */

void ext_dispatch_enqueue(const psModel *m, psData *d, ext_dsq *q, psTask *p, uint64_t enq_flags) {
  if ((q->id & SCX_DSQ_FLAG_BUILTIN) && (enq_flags & SCX_ENQ_DSQ_PRIQ)) {
    ext_error(m, d, SCX_EXIT_ERROR, "cannot use vtime ordering for built-in DSQs");
    enq_flags &= ~SCX_ENQ_DSQ_PRIQ;
  }
  if ((enq_flags & SCX_ENQ_DSQ_PRIQ) && q->nr && !q->priq)
    ext_error(m, d, SCX_EXIT_ERROR, "DSQ ID 0x%016llx already had FIFO-enqueued tasks",
              (unsigned long long)q->id);
  else if (!(enq_flags & SCX_ENQ_DSQ_PRIQ) && q->priq)
    ext_error(m, d, SCX_EXIT_ERROR, "DSQ ID 0x%016llx already had PRIQ-enqueued tasks",
              (unsigned long long)q->id);
  ext_dsq_add(d, q, ps_index(d, p), enq_flags);
  ext_task *x = XT(p);
  x->ddsp_dsq_id = SCX_DSQ_INVALID;
  x->ddsp_enq_flags = 0;
  if (enq_flags & SCX_ENQ_CLEAR_OPSS) x->ops_state = EXT_OPSS_NONE;
  if (q->id == SCX_DSQ_LOCAL) {
    XRQ(m, d, p->cpu)->nr_dispatched++;
    psTask *curr = ps_curr(d, p->cpu);
    int preempt = 0;
    if ((enq_flags & SCX_ENQ_PREEMPT) && p != curr && is_ext_task(curr)) {
      XT(curr)->slice = 0;
      preempt = 1;
    }
    /* sched_class_above(&ext_sched_class, curr's class): the idle task */
    if (preempt || curr->is_idle) ps_resched_cpu(d, p->cpu);
  }
}

static void dispatch_dequeue(const psModel *m, psData *d, psTask *p) {
  ext_dsq *q = ext_dsq_of(m, d, p);
  if (q) ext_dsq_remove(d, q, ps_index(d, p));
}

ext_dsq *ext_find_dsq(const psModel *m, psData *d, uint64_t dsq_id, psTask *p, int *cpu) {
  *cpu = -1;
  ext_shared *s = XS(m, d);
  if (dsq_id == SCX_DSQ_LOCAL) {
    *cpu = s->this_cpu >= 0 ? s->this_cpu : p->cpu;
    return &XRQ(m, d, *cpu)->local;
  }
  if ((dsq_id & SCX_DSQ_LOCAL_ON) == SCX_DSQ_LOCAL_ON) {
    uint64_t c = dsq_id & SCX_DSQ_LOCAL_CPU_MASK;
    if (c < (uint64_t)m->ncpu) {
      *cpu = (int)c;
      return &XRQ(m, d, *cpu)->local;
    }
    ext_error(m, d, SCX_EXIT_ERROR, "invalid CPU %lld in SCX_DSQ_LOCAL_ON dispatch verdict",
              (long long)c);
    return &s->global;
  }
  ext_dsq *q = dsq_id == SCX_DSQ_GLOBAL ? &s->global : ext_user_dsq(m, d, dsq_id);
  if (!q) {
    ext_error(m, d, SCX_EXIT_ERROR, "non-existent DSQ 0x%llx for %s[%d]",
              (unsigned long long)dsq_id, p->name, p->pid);
    return &s->global;
  }
  return q;
}

/* dispatch_to_local_dsq, with task_can_run_on_remote_rq's error; a task
 * moving to another CPU's local DSQ migrates there (move_remote_task_to_
 * local_dsq: no runnable/quiescent, it is migrating) */
void ext_dispatch_to_local(const psModel *m, psData *d, int cpu, psTask *p, uint64_t enq_flags) {
  if (p->cpu != cpu && !ext_allowed(p, cpu)) {
    ext_error(m, d, SCX_EXIT_ERROR, "SCX_DSQ_LOCAL[_ON] target CPU %d not allowed for %s[%d]",
              cpu, p->name, p->pid);
    ext_dispatch_enqueue(m, d, &XS(m, d)->global, p, enq_flags | SCX_ENQ_CLEAR_OPSS);
    return;
  }
  if (p->cpu != cpu) {
    XRQ(m, d, p->cpu)->nr_running--;
    XRQ(m, d, cpu)->nr_running++;
    set_task_cpu(m, d, p, cpu);
  }
  ext_dispatch_enqueue(m, d, &XRQ(m, d, cpu)->local, p, enq_flags | SCX_ENQ_CLEAR_OPSS);
}

int ext_consume_dsq(const psModel *m, psData *d, int cpu, ext_dsq *q) {
  for (int32_t i = q->head; i >= 0; i = XT(&d->task[i])->next) {
    psTask *p = &d->task[i];
    if (p->cpu != cpu && !ext_allowed(p, cpu)) continue;
    ext_dsq_remove(d, q, i);
    if (p->cpu != cpu) {
      XRQ(m, d, p->cpu)->nr_running--;
      XRQ(m, d, cpu)->nr_running++;
      set_task_cpu(m, d, p, cpu);
    }
    ext_dsq_add(d, &XRQ(m, d, cpu)->local, i, 0);
    XRQ(m, d, cpu)->nr_dispatched++;
    return 1;
  }
  return 0;
}

/* finish_dispatch for each buffered insertion: a task the scheduler no
 * longer owns (dispatched already, dequeued, running) is skipped, as the
 * kernel lets a scheduler dispatch spuriously */
void ext_flush_dispatch_buf(const psModel *m, psData *d, int cpu) {
  ext_shared *s = XS(m, d);
  for (int k = 0; k < s->dsp_cursor; k++) {
    ext_dsp_ent *e = &s->dsp_buf[k];
    psTask *p = &d->task[e->task];
    if (XT(p)->ops_state != EXT_OPSS_QUEUED || !(XT(p)->flags & EXT_TASK_QUEUED)) continue;
    int lc;
    s->this_cpu = cpu;
    ext_dsq *q = ext_find_dsq(m, d, e->dsq_id, p, &lc);
    if (lc >= 0)
      ext_dispatch_to_local(m, d, lc, p, e->enq_flags);
    else
      ext_dispatch_enqueue(m, d, q, p, e->enq_flags | SCX_ENQ_CLEAR_OPSS);
  }
  s->dsp_nr_tasks += s->dsp_cursor;
  s->dsp_cursor = 0;
}

static void direct_dispatch(const psModel *m, psData *d, psTask *p, uint64_t enq_flags) {
  ext_task *x = XT(p);
  int cpu;
  XS(m, d)->this_cpu = p->cpu;
  ext_dsq *q = ext_find_dsq(m, d, x->ddsp_dsq_id, p, &cpu);
  x->ddsp_enq_flags |= enq_flags;
  if (cpu >= 0)
    ext_dispatch_to_local(m, d, cpu, p, x->ddsp_enq_flags);
  else
    ext_dispatch_enqueue(m, d, q, p, x->ddsp_enq_flags | SCX_ENQ_CLEAR_OPSS);
}

/* do_enqueue_task; sticky_cpu >= 0: straight into that local DSQ */
static void do_enqueue_task(const psModel *m, psData *d, psTask *p, uint64_t enq_flags,
                            int sticky_cpu) {
  const psExtOps *ops = XOPS(m, d);
  ext_task *x = XT(p);
  ext_shared *s = XS(m, d);
  if (sticky_cpu == p->cpu) {
    ext_dispatch_enqueue(m, d, &XRQ(m, d, p->cpu)->local, p, enq_flags);
    return;
  }
  if (ops && x->ddsp_dsq_id == SCX_DSQ_INVALID && ops->enqueue) {
    x->ops_state = EXT_OPSS_QUEUED;
    s->ddsp_task = ps_index(d, p);
    OPS_CALL(m, d, EXT_OP_ENQUEUE, p->cpu, ops->enqueue(m, d, p, enq_flags));
    s->ddsp_task = -1;
    if (x->ddsp_dsq_id == SCX_DSQ_INVALID || !XOPS(m, d)) return;
  }
  if (XOPS(m, d) && x->ddsp_dsq_id != SCX_DSQ_INVALID) {
    direct_dispatch(m, d, p, enq_flags);
    return;
  }
  /* no ops.enqueue, or the scheduler has exited: the global DSQ */
  x->slice = SCX_SLICE_DFL;
  x->ops_state = EXT_OPSS_NONE;
  x->ddsp_dsq_id = SCX_DSQ_INVALID;
  ext_dispatch_enqueue(m, d, &s->global, p, enq_flags);
}

/* enqueue_task_scx; migrating: no runnable (task_on_rq_migrating) */
static void enqueue_task(const psModel *m, psData *d, psTask *p, uint64_t enq_flags, int migrating,
                         int sticky_cpu) {
  ext_task *x = XT(p);
  if (x->flags & EXT_TASK_QUEUED) return;
  set_task_runnable(d, p);
  x->flags |= EXT_TASK_QUEUED;
  XRQ(m, d, p->cpu)->nr_running++;
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->runnable && !migrating)
    OPS_CALL(m, d, EXT_OP_RUNNABLE, p->cpu, ops->runnable(m, d, p, enq_flags));
  do_enqueue_task(m, d, p, enq_flags, sticky_cpu);
}

/* ops_dequeue + dequeue_task_scx; migrating: no quiescent */
static void dequeue_task(const psModel *m, psData *d, psTask *p, uint64_t deq_flags, int migrating) {
  ext_task *x = XT(p);
  if (!(x->flags & EXT_TASK_QUEUED)) return;
  clr_task_runnable(p, 0);
  const psExtOps *ops = XOPS(m, d);
  if (x->ops_state == EXT_OPSS_QUEUED) {
    if (ops && ops->dequeue)
      OPS_CALL(m, d, EXT_OP_DEQUEUE, p->cpu, ops->dequeue(m, d, p, deq_flags));
    x->ops_state = EXT_OPSS_NONE;
  }
  ops = XOPS(m, d);
  if (ops && ops->stopping && ps_curr(d, p->cpu) == p) {
    update_curr(m, d, p->cpu);
    OPS_CALL(m, d, EXT_OP_STOPPING, p->cpu, ops->stopping(m, d, p, 0));
  }
  ops = XOPS(m, d);
  if (ops && ops->quiescent && !migrating)
    OPS_CALL(m, d, EXT_OP_QUIESCENT, p->cpu, ops->quiescent(m, d, p, deq_flags));
  x->flags &= ~EXT_TASK_QUEUED;
  XRQ(m, d, p->cpu)->nr_running--;
  dispatch_dequeue(m, d, p);
}

/* select_task_rq_scx, then core.c's select_task_rq: a CPU outside the
 * task's affinity falls back to its first allowed one (select_fallback_rq) */
static int select_task_rq(const psModel *m, psData *d, psTask *p, uint64_t wake_flags,
                          int this_cpu) {
  const psExtOps *ops = XOPS(m, d);
  int prev_cpu = p->cpu, cpu = prev_cpu;
  if (ops && ops->select_cpu) {
    ext_shared *s = XS(m, d);
    s->ddsp_task = ps_index(d, p);
    int32_t r = prev_cpu;
    OPS_CALL(m, d, EXT_OP_SELECT_CPU, this_cpu, r = ops->select_cpu(m, d, p, prev_cpu, wake_flags));
    s->ddsp_task = -1;
    if (r >= 0 && r < m->ncpu) {
      cpu = r;
    } else {
      ext_error(m, d, SCX_EXIT_ERROR, "invalid CPU %d from ops.select_cpu()", r);
    }
  } else if (ops) {
    int found;
    ext_shared *s = XS(m, d);
    int32_t saved = s->this_cpu;
    s->this_cpu = this_cpu;
    cpu = scx_bpf_select_cpu_dfl(m, d, p, prev_cpu, wake_flags, &found);
    s->this_cpu = saved;
    if (found) {
      XT(p)->slice = SCX_SLICE_DFL;
      XT(p)->ddsp_dsq_id = SCX_DSQ_LOCAL;
    }
  }
  if (!ext_allowed(p, cpu))
    for (cpu = 0; cpu < m->ncpu && !ext_allowed(p, cpu); cpu++) {
    }
  return cpu;
}

/* put_prev_task_scx for a prev that stays runnable; next_lower: the CPU
 * goes to a class below (the idle task) */
static void put_prev_task(const psModel *m, psData *d, psTask *p, int next_lower) {
  update_curr(m, d, p->cpu);
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->stopping) OPS_CALL(m, d, EXT_OP_STOPPING, p->cpu, ops->stopping(m, d, p, 1));
  set_task_runnable(d, p);
  if (XT(p)->slice && XOPS(m, d)) {
    ext_dispatch_enqueue(m, d, &XRQ(m, d, p->cpu)->local, p, SCX_ENQ_HEAD);
    return;
  }
  do_enqueue_task(m, d, p, next_lower ? SCX_ENQ_LAST : 0, -1);
}

/* set_next_task_scx */
static void set_next_task(const psModel *m, psData *d, psTask *p) {
  ext_task *x = XT(p);
  if (x->flags & EXT_TASK_QUEUED) {
    x->ops_state = EXT_OPSS_NONE;
    dispatch_dequeue(m, d, p);
  }
  x->exec_start = d->now_ns;
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->running && (x->flags & EXT_TASK_QUEUED))
    OPS_CALL(m, d, EXT_OP_RUNNING, p->cpu, ops->running(m, d, p));
  clr_task_runnable(p, 1);
}

/* balance_one: 1 to keep prev running */
static int balance_one(const psModel *m, psData *d, int cpu, psTask *prev) {
  ext_rq *rq = XRQ(m, d, cpu);
  ext_shared *s = XS(m, d);
  int prev_on_scx = is_ext_task(prev);
  int prev_on_rq = prev_on_scx && (XT(prev)->flags & EXT_TASK_QUEUED);
  if (prev_on_scx) {
    update_curr(m, d, cpu);
    if (prev_on_rq && XT(prev)->slice && XOPS(m, d)) return 1;
  }
  if (rq->local.nr || ext_consume_dsq(m, d, cpu, &s->global)) return 0;
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->dispatch) {
    int nr_loops = SCX_DSP_MAX_LOOPS;
    do {
      s->dsp_nr_tasks = 0;
      s->dsp_cpu = cpu;
      OPS_CALL(m, d, EXT_OP_DISPATCH, cpu, ops->dispatch(m, d, cpu, prev_on_scx ? prev : NULL));
      OPS_CALL(m, d, EXT_OP_DISPATCH, cpu, ext_flush_dispatch_buf(m, d, cpu));
      s->dsp_cpu = -1;
      if (prev_on_rq && XT(prev)->slice) return 1;
      if (rq->local.nr || ext_consume_dsq(m, d, cpu, &s->global)) return 0;
      if (!--nr_loops) {
        scx_bpf_kick_cpu(m, d, cpu, 0);
        break;
      }
    } while (s->dsp_nr_tasks && XOPS(m, d));
  }
  ops = XOPS(m, d);
  return prev_on_rq && (!ops || !(ops->flags & SCX_OPS_ENQ_LAST));
}

/* ---- the watchdog (check_rq_for_timeouts, every timeout/2) ---- */

static uint64_t timeout_jiffies(const psModel *m) {
  const psExtOps *ops = XOPS_ANY(m);
  uint64_t ms = ops && ops->timeout_ms ? ops->timeout_ms : SCX_WATCHDOG_MAX_TIMEOUT_MS;
  return (ms * (uint64_t)m->hz + 999) / 1000;  /* msecs_to_jiffies */
}

static void watchdog(const psModel *m, psData *d) {
  ext_shared *s = XS(m, d);
  uint64_t timeout = timeout_jiffies(m);
  if (d->jiffies < s->watchdog_next) return;
  s->watchdog_next = d->jiffies + (timeout / 2 ? timeout / 2 : 1);
  for (int cpu = 0; cpu < m->ncpu; cpu++)
    for (int32_t i = m->ncpu; i < d->ntask; i++) {
      psTask *p = &d->task[i];
      const ext_task *x = XTc(p);
      if (!p->pid || p->cpu != cpu || !(x->flags & EXT_TASK_RUNNABLE) ||
          (int64_t)(d->jiffies - ((uint64_t)x->runnable_at + timeout)) <= 0)
        continue;
      uint64_t ms = (d->jiffies - (uint64_t)x->runnable_at) * 1000 / (uint64_t)m->hz;
      ext_error(m, d, SCX_EXIT_ERROR_STALL, "%s[%d] failed to run for %u.%03us", p->name, p->pid,
                (unsigned)(ms / 1000), (unsigned)(ms % 1000));
      return;
    }
}

/* ---- the hooks ---- */

static void ext_init_task(psTask *p, const psData *d) {
  ext_task *x = XT(p);
  memset(x, 0, sizeof *x);
  x->next = x->prev = -1;
  x->dsq_id = x->ddsp_dsq_id = SCX_DSQ_INVALID;
  x->slice = SCX_SLICE_DFL;
  x->runnable_at = (int64_t)d->jiffies;
  x->flags = EXT_TASK_RESET_RUNNABLE_AT;
  x->weight = ext_weight_of_nice(p->nice);
}

/* The fallback's: while the scheduler runs, hooks are the class's; once
 * it has ended, EEVDF's (ext_fallback.c).  An error ends it at once (no
 * op is called after), but the class finishes the hook it is in on its
 * own structures, and hands the tasks over as the hook returns (settle),
 * or as the next one begins (an error from Python between runs). */
#define FALLBACK(call)                                              \
  do {                                                              \
    if (!XS(m, d)->enabled) {                                       \
      if (!XS(m, d)->fair) ext_switch_to_fair(m, d, NULL, NULL);    \
      return call;                                                  \
    }                                                               \
  } while (0)

static int ext_task_spawn(const psModel *m, psData *d, psTask *p);

/* 1 if the scheduler ended during the hook: the tasks are EEVDF's now;
 * `woken` is on_rq for the engine although not yet, `sleeping` is not
 * although still */
static int settle(const psModel *m, psData *d, const psTask *woken, const psTask *sleeping) {
  if (XS(m, d)->enabled || XS(m, d)->fair) return 0;
  ext_switch_to_fair(m, d, woken, sleeping);
  return 1;
}

static int ext_configure(psModel *m, char *err, int errlen) {
  return ps_policy_eevdf.hooks.configure(m, err, errlen);
}

static void ext_init_rq(const psModel *m, psData *d, int cpu) {
  fair_init_rq(m, d, cpu);
  ext_rq *rq = XRQ(m, d, cpu);
  ext_dsq_init(&rq->local, SCX_DSQ_LOCAL);
  rq->rt_head = rq->rt_tail = -1;
  if (cpu) return;
  ext_shared *s = &rq->shared;
  ext_dsq_init(&s->global, SCX_DSQ_GLOBAL);
  s->enabled = XOPS_ANY(m) != NULL;
  s->op = s->ddsp_task = s->dsp_cpu = s->this_cpu = -1;
  /* reset_idle_masks: every online CPU idle */
  s->idle_mask = m->ncpu == 64 ? ~0ULL : (1ULL << m->ncpu) - 1;
  s->watchdog_next = timeout_jiffies(m) / 2;
}

static int generic_prio(const psTask *p) {
  return ext_rt(p) ? 99 - p->rt_priority : 120 + p->nice;
}

/* sched_fork's scx_fork (ops.init_task) and scx_post_fork's enable
 * (weight, ops.enable, ops.set_weight), then wake_up_new_task */
static int ext_task_spawn_class(const psModel *m, psData *d, psTask *p) {
  FALLBACK(fair_task_spawn(m, d, p));
  ext_init_task(p, d);
  p->static_prio = 120 + p->nice;
  p->prio = generic_prio(p);
  p->time_slice = p->policy == PS_SCHED_RR ? RR_TIMESLICE_MS * m->hz / 1000 : 0;
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->init_task) {
    int32_t r = 0;
    OPS_CALL(m, d, EXT_OP_INIT_TASK, p->cpu, r = ops->init_task(m, d, p, 1));
    if (r) ext_error(m, d, SCX_EXIT_ERROR, "ops.init_task() failed (%d) for %s[%d]", r, p->name,
                     p->pid);
  }
  if ((ops = XOPS(m, d))) {
    if (ops->enable) OPS_CALL(m, d, EXT_OP_ENABLE, p->cpu, ops->enable(m, d, p));
    XT(p)->flags |= EXT_TASK_ENABLED;
    if ((ops = XOPS(m, d)) && ops->set_weight)
      OPS_CALL(m, d, EXT_OP_SET_WEIGHT, p->cpu, ops->set_weight(m, d, p, XT(p)->weight));
  }
  if (ext_rt(p)) {
    rt_link(m, d, p);
    return rt_preempts(d, p);
  }
  int this_cpu = p->cpu;
  set_task_cpu(m, d, p, select_task_rq(m, d, p, SCX_WAKE_FORK, this_cpu));
  enqueue_task(m, d, p, 0, 0, -1);
  return ps_curr(d, p->cpu)->is_idle;
}

/* sched_fork then wake_up_new_task: the child where its parent is, as a
 * spawned task; the fallback's own fork */
static void ext_task_fork(const psModel *m, psData *d, psTask *parent, psTask *child) {
  FALLBACK(fair_task_fork(m, d, parent, child));
  child->cpu = parent->cpu;
  if (ext_task_spawn(m, d, child)) ps_resched_cpu(d, child->cpu);
}

static void ext_task_exit(const psModel *m, psData *d, psTask *p, psTask *parent) {
  (void)parent;
  const psExtOps *ops = XOPS(m, d);
  if (!ops) return;
  if ((XT(p)->flags & EXT_TASK_ENABLED) && ops->disable)
    OPS_CALL(m, d, EXT_OP_DISABLE, p->cpu, ops->disable(m, d, p));
  XT(p)->flags &= ~EXT_TASK_ENABLED;
  if ((ops = XOPS(m, d)) && ops->exit_task)
    OPS_CALL(m, d, EXT_OP_EXIT_TASK, p->cpu, ops->exit_task(m, d, p, 0));
}

static int ext_wakeup_class(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  FALLBACK(fair_wakeup(m, d, p, waker, sync));
  if (ext_rt(p)) {
    if (!ext_allowed(p, p->cpu)) set_task_cpu(m, d, p, select_task_rq(m, d, p, 0, p->cpu));
    rt_link(m, d, p);
    return rt_preempts(d, p);
  }
  uint64_t wf = SCX_WAKE_TTWU | (sync ? SCX_WAKE_SYNC : 0);
  set_task_cpu(m, d, p, select_task_rq(m, d, p, wf, waker ? waker->cpu : p->cpu));
  enqueue_task(m, d, p, SCX_ENQ_WAKEUP, 0, -1);
  return ps_curr(d, p->cpu)->is_idle;
}

static void ext_deactivate_class(const psModel *m, psData *d, psTask *prev) {
  FALLBACK(fair_deactivate(m, d, prev));
  if (ext_rt(prev))
    rt_unlink(m, d, prev);
  else
    dequeue_task(m, d, prev, SCX_DEQ_SLEEP, 0);
}

static psTask *ext_pick_next_class(const psModel *m, psData *d, int cpu) {
  FALLBACK(fair_pick_next(m, d, cpu));
  ext_rq *rq = XRQ(m, d, cpu);
  psTask *idle = &d->task[d->cpu[cpu].idle], *next;
  /* a current task moved away in this schedule() (set_affinity's
   * migration, ext_migrate) has been dequeued and enqueued there: it is no
   * prev of this CPU's */
  psTask *prev = ps_curr(d, cpu)->cpu == cpu ? ps_curr(d, cpu) : idle;
  int prev_queued = is_ext_task(prev) && (XT(prev)->flags & EXT_TASK_QUEUED);
  if (rq->rt_nr_running) {
    next = &d->task[rq->rt_head];
  } else if (balance_one(m, d, cpu, prev)) {
    if (!XT(prev)->slice) XT(prev)->slice = SCX_SLICE_DFL;
    rq->nr_keep_prev++;
    return prev;
  } else {
    next = rq->local.head >= 0 ? &d->task[rq->local.head] : idle;
    if (next != idle && !XT(next)->slice) XT(next)->slice = SCX_SLICE_DFL;
  }
  if (next == prev && ps_curr(d, cpu) == prev) return prev;
  if (prev_queued) put_prev_task(m, d, prev, next == idle);
  if (ps_curr(d, cpu)->is_idle) ext_update_idle(m, d, cpu, 0, 1);
  if (is_ext_task(next)) set_next_task(m, d, next);
  if (next == idle) ext_update_idle(m, d, cpu, 1, 1);
  return next;
}

static void ext_tick_class(const psModel *m, psData *d, int cpu) {
  FALLBACK(fair_tick(m, d, cpu));
  if (cpu == 0) watchdog(m, d);
  if (!XS(m, d)->enabled) return;
  psTask *curr = ps_curr(d, cpu);
  if (curr->is_idle) {
    /* pick_task_idle's refresh: a CPU that stays idle is idle again */
    ext_update_idle(m, d, cpu, 1, 0);
    return;
  }
  if (ext_rt(curr)) {
    /* task_tick_rt: an RR task behind the others of its prio */
    if (curr->policy != PS_SCHED_RR || --curr->time_slice > 0) return;
    curr->time_slice = RR_TIMESLICE_MS * m->hz / 1000;
    ext_task *x = XT(curr);
    if ((x->next >= 0 && d->task[x->next].prio == curr->prio) ||
        (x->prev >= 0 && d->task[x->prev].prio == curr->prio)) {
      rt_unlink(m, d, curr);
      rt_link(m, d, curr);
      ps_resched_cpu(d, cpu);
    }
    return;
  }
  update_curr(m, d, cpu);
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->tick) OPS_CALL(m, d, EXT_OP_TICK, cpu, ops->tick(m, d, curr));
  if (!XT(curr)->slice) ps_resched_cpu(d, cpu);
}

static void ext_yield_class(const psModel *m, psData *d, psTask *p) {
  FALLBACK(fair_yield(m, d, p));
  if (ext_rt(p)) {
    rt_unlink(m, d, p);
    rt_link(m, d, p);
  } else {
    const psExtOps *ops = XOPS(m, d);
    if (ops && ops->yield)
      OPS_CALL(m, d, EXT_OP_YIELD, p->cpu, ops->yield(m, d, p, NULL));
    else
      XT(p)->slice = 0;
  }
  ps_resched_cpu(d, p->cpu);
}

/* reweight_task_scx */
static void ext_set_nice_class(const psModel *m, psData *d, psTask *p, int nice) {
  FALLBACK(fair_set_nice(m, d, p, nice));
  p->static_prio = 120 + nice;
  if (!ext_rt(p)) p->prio = p->static_prio;
  XT(p)->weight = ext_weight_of_nice(nice);
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->set_weight && (XT(p)->flags & EXT_TASK_ENABLED))
    OPS_CALL(m, d, EXT_OP_SET_WEIGHT, p->cpu, ops->set_weight(m, d, p, XT(p)->weight));
}

/* __sched_setscheduler: out of the old class, into the new one */
static void ext_set_scheduler_class(const psModel *m, psData *d, psTask *p, int policy, int rt) {
  FALLBACK(fair_set_scheduler(m, d, p, policy, rt));
  int queued = p->on_rq, was_rt = ext_rt(p), running = ps_curr(d, p->cpu) == p;
  if (queued) {
    if (was_rt)
      rt_unlink(m, d, p);
    else
      dequeue_task(m, d, p, 0, 0);
  }
  p->policy = policy;
  p->rt_priority = rt;
  p->prio = generic_prio(p);
  p->time_slice = policy == PS_SCHED_RR ? RR_TIMESLICE_MS * m->hz / 1000 : 0;
  if (queued) {
    if (ext_rt(p)) {
      rt_link(m, d, p);
    } else if (running) {
      /* enqueue_task_scx with ENQUEUE_RESTORE of the current task: into
       * its local DSQ (sticky), then set_next_task_scx takes it out and
       * calls running */
      enqueue_task(m, d, p, ENQUEUE_RESTORE, 0, p->cpu);
      set_next_task(m, d, p);
    } else {
      enqueue_task(m, d, p, ENQUEUE_RESTORE, 0, -1);
    }
  }
  ps_resched_cpu(d, p->cpu);
}

/* set_cpus_allowed_scx (ops.set_cpumask), then move_queued_task */
static void ext_migrate_class(const psModel *m, psData *d, psTask *p, int dest) {
  FALLBACK(fair_migrate(m, d, p, dest));
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->set_cpumask && !ext_rt(p))
    OPS_CALL(m, d, EXT_OP_SET_CPUMASK, p->cpu, ops->set_cpumask(m, d, p, p->cpus_allowed));
  if (!p->on_rq) {
    set_task_cpu(m, d, p, dest);
    return;
  }
  if (ext_rt(p)) {
    rt_unlink(m, d, p);
    set_task_cpu(m, d, p, dest);
    rt_link(m, d, p);
    if (rt_preempts(d, p)) ps_resched_cpu(d, dest);
    return;
  }
  int running = ps_curr(d, p->cpu) == p;
  if (running) update_curr(m, d, p->cpu);
  dequeue_task(m, d, p, 0, 1);
  set_task_cpu(m, d, p, dest);
  enqueue_task(m, d, p, 0, 1, -1);
  if (ps_curr(d, dest)->is_idle) ps_resched_cpu(d, dest);
}

static int ext_task_spawn(const psModel *m, psData *d, psTask *p) {
  int r = ext_task_spawn_class(m, d, p);
  return settle(m, d, p, NULL) ? 0 : r;
}

static int ext_wakeup(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  int r = ext_wakeup_class(m, d, p, waker, sync);
  return settle(m, d, p, NULL) ? 0 : r;
}

static void ext_deactivate(const psModel *m, psData *d, psTask *prev) {
  ext_deactivate_class(m, d, prev);
  settle(m, d, NULL, prev);
}

static void ext_tick(const psModel *m, psData *d, int cpu) {
  ext_tick_class(m, d, cpu);
  settle(m, d, NULL, NULL);
}

static void ext_yield(const psModel *m, psData *d, psTask *p) {
  ext_yield_class(m, d, p);
  settle(m, d, NULL, NULL);
}

static void ext_set_nice(const psModel *m, psData *d, psTask *p, int nice) {
  ext_set_nice_class(m, d, p, nice);
  settle(m, d, NULL, NULL);
}

static void ext_set_scheduler(const psModel *m, psData *d, psTask *p, int policy, int rt) {
  ext_set_scheduler_class(m, d, p, policy, rt);
  settle(m, d, NULL, NULL);
}

static void ext_migrate(const psModel *m, psData *d, psTask *p, int dest) {
  ext_migrate_class(m, d, p, dest);
  settle(m, d, NULL, NULL);
}

/* an error during balance_one: the tasks are EEVDF's, prev still current
 * (the engine's view), and EEVDF picks */
static psTask *ext_pick_next(const psModel *m, psData *d, int cpu) {
  psTask *next = ext_pick_next_class(m, d, cpu);
  return settle(m, d, NULL, NULL) ? fair_pick_next(m, d, cpu) : next;
}

static int ext_check(const psModel *m, const psData *d, char *err, int errlen) {
  if (!XS(m, d)->enabled) return fair_check(m, d, err, errlen);
  return ext_check_dsqs(m, d, err, errlen);
}

static const psFieldInfo ext_task_fields[] = {
    {"slice", PS_F_I64, offsetof(ext_task, slice), "ns of slice left (p->scx.slice)", PS_AT_PRIV},
    {"dsq_vtime", PS_F_I64, offsetof(ext_task, dsq_vtime), "p->scx.dsq_vtime", PS_AT_PRIV},
    {"weight", PS_F_U32, offsetof(ext_task, weight), "p->scx.weight, 1..10000 (nice 0: 100)",
     PS_AT_PRIV},
    {"dsq_id", PS_F_I64, offsetof(ext_task, dsq_id), "the DSQ it is queued on (-2^63: none)",
     PS_AT_PRIV},
};

/* ext_rq's fields, after the fallback's fair_rq in the CPU's area */
#define XRF(name, type, doc) {#name, type, EXT_RQ_OFFSET + offsetof(ext_rq, name), doc, PS_AT_PRIV}
static const psFieldInfo ext_rq_fields[] = {
    XRF(nr_running, PS_F_I32, "ext tasks runnable on this CPU"),
    XRF(nr_dispatched, PS_F_I64, "tasks moved into this CPU's local DSQ"),
    XRF(nr_kicks, PS_F_I64, "scx_bpf_kick_cpu calls aimed at this CPU"),
    XRF(nr_keep_prev, PS_F_I64, "schedules that kept prev running"),
};

static const char *const ext_headline[] = {"slice", "dsq_vtime", NULL};

const psExtPolicy ps_ext_class = {
    .pol = {
        .name = "sched_ext",
        .doc = "The sched_ext class (kernel/sched/ext.c, 6.12): dispatch queues and a "
               "scheduler's ops, EEVDF as its fallback",
        .task_fields = ext_task_fields,
        .ntask_fields = PS_NELEM(ext_task_fields),
        .rq_fields = ext_rq_fields,
        .nrq_fields = PS_NELEM(ext_rq_fields),
        .rq_size = EXT_RQ_OFFSET + sizeof(ext_rq),
        .max_prio = 140,
        .headline = ext_headline,
        .hooks = {.configure = ext_configure, .init_rq = ext_init_rq,
                  .task_spawn = ext_task_spawn, .task_fork = ext_task_fork,
                  .task_exit = ext_task_exit, .wakeup = ext_wakeup,
                  .deactivate = ext_deactivate, .pick_next = ext_pick_next, .tick = ext_tick,
                  .yield = ext_yield, .set_nice = ext_set_nice,
                  .set_scheduler = ext_set_scheduler, .migrate = ext_migrate,
                  .check = ext_check},
    },
};
