/* The sched_ext class's psPolicy (ps_ext_class): its hooks, each the
 * kernel's entry into the class (wake_up_new_task, try_to_wake_up,
 * __schedule, scheduler_tick, sched_yield, set_user_nice,
 * __sched_setscheduler, set_cpus_allowed) built on the rules of
 * ext_class.c, with EEVDF's hooks once a scheduler has ended
 * (ext_fallback.c), and its tables. */
#include "ext.h"

#include <string.h>

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
  s->op = s->ddsp_task = s->dsp_cpu = s->this_cpu = s->exit_op = -1;
  /* reset_idle_masks: every online CPU idle */
  ps_cpumask_fill(&s->idle_mask, m->ncpu);
  s->watchdog_next = ext_timeout_jiffies(m, d) / 2;
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
    if (r) ext_error(m, d, SCX_EXIT_ERROR, p, "ops.init_task() failed (%d) for %s[%d]", r, p->name,
                     p->pid);
  }
  if ((ops = XOPS(m, d))) {
    if (ops->enable) OPS_CALL(m, d, EXT_OP_ENABLE, p->cpu, ops->enable(m, d, p));
    XT(p)->flags |= EXT_TASK_ENABLED;
    if ((ops = XOPS(m, d)) && ops->set_weight)
      OPS_CALL(m, d, EXT_OP_SET_WEIGHT, p->cpu, ops->set_weight(m, d, p, XT(p)->weight));
  }
  if (ext_rt(p)) {
    ext_rt_link(m, d, p);
    return ext_rt_preempts(d, p);
  }
  int this_cpu = p->cpu;
  ext_set_task_cpu(m, d, p, ext_select_task_rq(m, d, p, SCX_WAKE_FORK, this_cpu));
  ext_enqueue_task(m, d, p, 0, 0, -1);
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
    if (!ext_allowed(p, p->cpu)) ext_set_task_cpu(m, d, p, ext_select_task_rq(m, d, p, 0, p->cpu));
    ext_rt_link(m, d, p);
    return ext_rt_preempts(d, p);
  }
  uint64_t wf = SCX_WAKE_TTWU | (sync ? SCX_WAKE_SYNC : 0);
  ext_set_task_cpu(m, d, p, ext_select_task_rq(m, d, p, wf, waker ? waker->cpu : p->cpu));
  ext_enqueue_task(m, d, p, SCX_ENQ_WAKEUP, 0, -1);
  return ps_curr(d, p->cpu)->is_idle;
}

static void ext_deactivate_class(const psModel *m, psData *d, psTask *prev) {
  FALLBACK(fair_deactivate(m, d, prev));
  if (ext_rt(prev))
    ext_rt_unlink(m, d, prev);
  else
    ext_dequeue_task(m, d, prev, SCX_DEQ_SLEEP, 0);
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
  } else if (ext_balance_one(m, d, cpu, prev)) {
    if (!XT(prev)->slice) XT(prev)->slice = SCX_SLICE_DFL;
    rq->nr_keep_prev++;
    return prev;
  } else {
    next = rq->local.head >= 0 ? &d->task[rq->local.head] : idle;
    if (next != idle && !XT(next)->slice) XT(next)->slice = SCX_SLICE_DFL;
  }
  if (next == prev && ps_curr(d, cpu) == prev) return prev;
  if (prev_queued) ext_put_prev_task(m, d, prev, next == idle);
  if (ps_curr(d, cpu)->is_idle) ext_update_idle(m, d, cpu, 0, 1);
  if (is_ext_task(next)) ext_set_next_task(m, d, next);
  if (next == idle) ext_update_idle(m, d, cpu, 1, 1);
  return next;
}

static void ext_tick_class(const psModel *m, psData *d, int cpu) {
  FALLBACK(fair_tick(m, d, cpu));
  if (cpu == 0) ext_watchdog(m, d);
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
      ext_rt_unlink(m, d, curr);
      ext_rt_link(m, d, curr);
      ps_resched_cpu(d, cpu);
    }
    return;
  }
  ext_update_curr(m, d, cpu);
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->tick) OPS_CALL(m, d, EXT_OP_TICK, cpu, ops->tick(m, d, curr));
  if (!XT(curr)->slice) ps_resched_cpu(d, cpu);
}

static void ext_yield_class(const psModel *m, psData *d, psTask *p) {
  FALLBACK(fair_yield(m, d, p));
  if (ext_rt(p)) {
    ext_rt_unlink(m, d, p);
    ext_rt_link(m, d, p);
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
      ext_rt_unlink(m, d, p);
    else
      ext_dequeue_task(m, d, p, 0, 0);
  }
  p->policy = policy;
  p->rt_priority = rt;
  p->prio = generic_prio(p);
  p->time_slice = policy == PS_SCHED_RR ? RR_TIMESLICE_MS * m->hz / 1000 : 0;
  if (queued) {
    if (ext_rt(p)) {
      ext_rt_link(m, d, p);
    } else if (running) {
      /* enqueue_task_scx with ENQUEUE_RESTORE of the current task: into
       * its local DSQ (sticky), then set_next_task_scx takes it out and
       * calls running */
      ext_enqueue_task(m, d, p, ENQUEUE_RESTORE, 0, p->cpu);
      ext_set_next_task(m, d, p);
    } else {
      ext_enqueue_task(m, d, p, ENQUEUE_RESTORE, 0, -1);
    }
  }
  ps_resched_cpu(d, p->cpu);
}

/* set_cpus_allowed_scx (ops.set_cpumask), then move_queued_task */
static void ext_migrate_class(const psModel *m, psData *d, psTask *p, int dest) {
  FALLBACK(fair_migrate(m, d, p, dest));
  const psExtOps *ops = XOPS(m, d);
  if (ops && ops->set_cpumask && !ext_rt(p))
    OPS_CALL(m, d, EXT_OP_SET_CPUMASK, p->cpu, ops->set_cpumask(m, d, p, &p->cpus_allowed));
  if (!p->on_rq) {
    ext_set_task_cpu(m, d, p, dest);
    return;
  }
  if (ext_rt(p)) {
    ext_rt_unlink(m, d, p);
    ext_set_task_cpu(m, d, p, dest);
    ext_rt_link(m, d, p);
    if (ext_rt_preempts(d, p)) ps_resched_cpu(d, dest);
    return;
  }
  int running = ps_curr(d, p->cpu) == p;
  if (running) ext_update_curr(m, d, p->cpu);
  ext_dequeue_task(m, d, p, 0, 1);
  ext_set_task_cpu(m, d, p, dest);
  ext_enqueue_task(m, d, p, 0, 1, -1);
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
    /* a u64 id as the kernel's, read unsigned: SCX_DSQ_INVALID is 1 << 63 */
    {"dsq_id", PS_F_U64, offsetof(ext_task, dsq_id),
     "the DSQ it is queued on (SCX_DSQ_INVALID: none)", PS_AT_PRIV},
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
