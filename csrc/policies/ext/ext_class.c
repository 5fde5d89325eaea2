/* The sched_ext class's rules (kernel/sched/ext.c, 6.12.y): the enqueue
 * path with direct dispatch (select_task_rq_scx, enqueue_task_scx,
 * do_enqueue_task, direct_dispatch), the dispatch path of a CPU
 * (balance_one, flush_dispatch_buf, consume_dispatch_q, pick_task_scx),
 * put_prev_task_scx and set_next_task_scx, the notifiers in the kernel's
 * order (runnable, running, stopping, quiescent), slices counted down in
 * ns (update_curr_scx, task_tick_scx), weights, the watchdog
 * (check_rq_for_timeouts).  RT tasks form a class above, one list per
 * CPU, best prio first (rt.c).  The psPolicy hooks built on these rules
 * are ext_hooks.c's.
 *
 * Where the engine's order differs from the kernel's: schedule() calls
 * put_prev before pick_next, so the class does put_prev's work inside
 * pick_next, after balance_one and the choice of next, where
 * put_prev_set_next_task does it (6.12 core.c).  Kicks and direct
 * dispatches to another CPU's local DSQ take effect at once, where the
 * kernel defers them to an irq work or a balance callback.
 */
#include "ext.h"

#include <string.h>

/* sched_weight_to_cgroup(sched_prio_to_weight[static_prio - MAX_RT_PRIO])
 * (scx_ops_enable_task; kernel/sched/sched.h): the 1..10000 scale where
 * nice 0 is 100, rounded to the closest; the table is core.c's
 * (fair_common.c) */
uint32_t ext_weight_of_nice(int nice) {
  uint64_t w = ((uint64_t)sched_prio_to_weight[nice + 20] * 100 + 512) / 1024;
  return (uint32_t)(w < 1 ? 1 : w > 10000 ? 10000 : w);
}

void ext_set_task_cpu(const psModel *m, psData *d, psTask *p, int dest) {
  if (p->cpu == dest) return;
  ps_log(m, d, PS_EVT_MIGRATE, dest, p, p->cpu, p->prio, 0);
  ps_count_up(&p->nr_migrations);
  p->cpu = dest;
}

/* update_curr_scx: the running task's slice, in ns (SCX_SLICE_INF stays) */
void ext_update_curr(const psModel *m, psData *d, int cpu) {
  (void)m;
  psTask *curr = ps_curr(d, cpu);
  if (!is_ext_task(curr)) return;
  ext_task *x = XT(curr);
  int64_t delta = d->now_ns - x->exec_start;
  if (delta <= 0) return;
  x->exec_start = d->now_ns;
  if (x->slice != SCX_SLICE_INF) x->slice -= (uint64_t)delta < x->slice ? (uint64_t)delta : x->slice;
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

void ext_rt_link(const psModel *m, psData *d, psTask *p) {
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

void ext_rt_unlink(const psModel *m, psData *d, psTask *p) {
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
int ext_rt_preempts(psData *d, const psTask *p) {
  const psTask *curr = ps_curr(d, p->cpu);
  return curr != p && (curr->is_idle || !ext_rt(curr) || p->prio < curr->prio);
}

/* ---- dispatch queues and the class ---- */

void ext_dispatch_enqueue(const psModel *m, psData *d, ext_dsq *q, psTask *p, uint64_t enq_flags) {
  if ((q->id & SCX_DSQ_FLAG_BUILTIN) && (enq_flags & SCX_ENQ_DSQ_PRIQ)) {
    ext_error(m, d, SCX_EXIT_ERROR, p, "cannot use vtime ordering for built-in DSQs");
    enq_flags &= ~SCX_ENQ_DSQ_PRIQ;
  }
  if ((enq_flags & SCX_ENQ_DSQ_PRIQ) && q->nr && !q->priq)
    ext_error(m, d, SCX_EXIT_ERROR, p, "DSQ ID 0x%016llx already had FIFO-enqueued tasks",
              (unsigned long long)q->id);
  else if (!(enq_flags & SCX_ENQ_DSQ_PRIQ) && q->priq)
    ext_error(m, d, SCX_EXIT_ERROR, p, "DSQ ID 0x%016llx already had PRIQ-enqueued tasks",
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
    ext_error(m, d, SCX_EXIT_ERROR, p, "invalid CPU %lld in SCX_DSQ_LOCAL_ON dispatch verdict",
              (long long)c);
    return &s->global;
  }
  ext_dsq *q = dsq_id == SCX_DSQ_GLOBAL ? &s->global : ext_user_dsq(m, d, dsq_id);
  if (!q) {
    ext_error(m, d, SCX_EXIT_ERROR, p, "non-existent DSQ 0x%llx for %s[%d]",
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
    ext_error(m, d, SCX_EXIT_ERROR | EXT_AFFINITY, p,
              "SCX_DSQ_LOCAL[_ON] target CPU %d not allowed for %s[%d]",
              cpu, p->name, p->pid);
    ext_dispatch_enqueue(m, d, &XS(m, d)->global, p, enq_flags | SCX_ENQ_CLEAR_OPSS);
    return;
  }
  if (p->cpu != cpu) {
    XRQ(m, d, p->cpu)->nr_running--;
    XRQ(m, d, cpu)->nr_running++;
    ext_set_task_cpu(m, d, p, cpu);
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
      ext_set_task_cpu(m, d, p, cpu);
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
    x->enq_ns = d->now_ns;
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
void ext_enqueue_task(const psModel *m, psData *d, psTask *p, uint64_t enq_flags, int migrating,
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
void ext_dequeue_task(const psModel *m, psData *d, psTask *p, uint64_t deq_flags, int migrating) {
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
    ext_update_curr(m, d, p->cpu);
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
int ext_select_task_rq(const psModel *m, psData *d, psTask *p, uint64_t wake_flags,
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
      ext_error(m, d, SCX_EXIT_ERROR, p, "invalid CPU %d from ops.select_cpu()", r);
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
void ext_put_prev_task(const psModel *m, psData *d, psTask *p, int next_lower) {
  ext_update_curr(m, d, p->cpu);
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
void ext_set_next_task(const psModel *m, psData *d, psTask *p) {
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
int ext_balance_one(const psModel *m, psData *d, int cpu, psTask *prev) {
  ext_rq *rq = XRQ(m, d, cpu);
  ext_shared *s = XS(m, d);
  int prev_on_scx = is_ext_task(prev);
  int prev_on_rq = prev_on_scx && (XT(prev)->flags & EXT_TASK_QUEUED);
  if (prev_on_scx) {
    ext_update_curr(m, d, cpu);
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

/* ---- the ext_watchdog (check_rq_for_timeouts, every timeout/2) ---- */

uint64_t ext_timeout_jiffies(const psModel *m, const psData *d) {
  const psExtOps *ops = XOPS_ANY(m);
  uint64_t ms = ops && ops->timeout_ms ? ops->timeout_ms : SCX_WATCHDOG_MAX_TIMEOUT_MS;
  if (XS(m, d)->strict_timeout_ms) ms = XS(m, d)->strict_timeout_ms;
  return (ms * (uint64_t)m->hz + 999) / 1000;  /* msecs_to_jiffies */
}

void ext_watchdog(const psModel *m, psData *d) {
  ext_shared *s = XS(m, d);
  uint64_t timeout = ext_timeout_jiffies(m, d);
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
      ext_error(m, d, SCX_EXIT_ERROR_STALL, p, "%s[%d] failed to run for %u.%03us", p->name, p->pid,
                (unsigned)(ms / 1000), (unsigned)(ms % 1000));
      return;
    }
}
