/* The fair schedulers' shared hooks (fair_common.h): the ones every member
 * runs through its fair_class (spawn, fork, wakeup, deactivate, pick_next,
 * tick, yield, nice, setscheduler, migrate, the queue dump), and the
 * real-time class beside the fair one, which only they call. */
#include "fair_common.h"

#include <string.h>

/* ---- the real-time class: one list, best prio first, FIFO among equals
 * (rt.c's per-prio lists, merged), linked through the node's left (next)
 * and right (prev) ---- */

static void rt_link(const psModel *m, psData *d, int cpu, int32_t i, int head) {
  fair_rq *rq = FRQ(m, d, cpu);
  psTask *p = &d->task[i];
  /* the first task it goes before: worse prio, or (head) equal prio */
  int32_t before = rq->rt_head;
  while (before >= 0 && (head ? d->task[before].prio < p->prio : d->task[before].prio <= p->prio))
    before = SE(&d->task[before])->node.left;
  fair_node *n = &SE(p)->node;
  n->color = FAIR_NODE_RT;
  n->parent = -1;
  n->left = before;
  n->right = before >= 0 ? SE(&d->task[before])->node.right : rq->rt_tail;
  if (n->right >= 0)
    SE(&d->task[n->right])->node.left = i;
  else
    rq->rt_head = i;
  if (before >= 0)
    SE(&d->task[before])->node.right = i;
  else
    rq->rt_tail = i;
  rq->rt_nr_running++;
  fair_overload_sync(m, d, cpu);
}

static void rt_unlink(const psModel *m, psData *d, int cpu, int32_t i) {
  fair_rq *rq = FRQ(m, d, cpu);
  fair_node *n = &SE(&d->task[i])->node;
  if (n->right >= 0)
    SE(&d->task[n->right])->node.left = n->left;
  else
    rq->rt_head = n->left;
  if (n->left >= 0)
    SE(&d->task[n->left])->node.right = n->right;
  else
    rq->rt_tail = n->right;
  n->left = n->right = -1;
  n->color = FAIR_NODE_OFF;
  rq->rt_nr_running--;
  fair_overload_sync(m, d, cpu);
}

/* update_curr_common for a running RT task: its sum_exec_runtime (read by
 * CFS when it returns to the fair class) */
static void rt_update_curr(const psModel *m, psData *d, int cpu) {
  psTask *p = ps_curr(d, cpu);
  if (p->is_idle || !fair_rt(p)) return;
  fair_se *se = SE(p);
  int64_t delta = d->now_ns - (int64_t)se->exec_start;
  if (delta <= 0) return;
  se->exec_start = (uint64_t)d->now_ns;
  se->sum_exec_runtime += (uint64_t)delta;
}

/* the RR tick (rt.c task_tick_rt): a spent slice is refilled, and the task
 * goes behind the others of its prio if there are any */
static void rt_tick(const psModel *m, psData *d, int cpu, psTask *p) {
  rt_update_curr(m, d, cpu);
  if (p->policy != PS_SCHED_RR || --p->time_slice) return;
  p->time_slice = (int32_t)FD(m)->rr_timeslice;
  const fair_node *n = &SE(p)->node;
  int alone = (n->left < 0 || d->task[n->left].prio != p->prio) &&
              (n->right < 0 || d->task[n->right].prio != p->prio);
  if (alone) return;
  int32_t i = ps_index(d, p);
  rt_unlink(m, d, cpu, i);
  rt_link(m, d, cpu, i, 0);
  ps_resched_cpu(d, cpu);
  ps_log(m, d, PS_EVT_EXPIRE, cpu, p, -1, p->prio, 0);
}

void fair_rt_enqueue(const psModel *m, psData *d, psTask *p) {
  rt_link(m, d, p->cpu, ps_index(d, p), 0);
}

static int rt_prio_of(int rt_priority) { return FAIR_MAX_RT_PRIO - 1 - rt_priority; }

/* ---- shared hooks ---- */

/* __sched_fork: a fresh sched_entity (fair_common.h) */
void fair_se_init(psTask *p) {
  fair_se *se = SE(p);
  uint64_t slice = se->slice;
  int32_t custom = se->custom_slice;
  int16_t group = se->node.group;
  memset(se, 0, sizeof *se);
  se->node.left = se->node.right = se->node.parent = -1;
  se->node.color = FAIR_NODE_OFF;
  se->list_prev = se->list_next = -1;
  /* its task group: a forked task's is its parent's (cgroup_fork) */
  se->node.group = group;
  se->weight = fair_nice_weight(p->nice);
  /* a slice asked for with sched_attr.sched_runtime stays (it is
   * inherited across fork, as sched_reset_on_fork is not modelled) */
  se->slice = slice;
  se->custom_slice = custom;
}

void fair_init_rq(const psModel *m, psData *d, int cpu) {
  fair_rq *rq = FRQ(m, d, cpu);
  rq->root = rq->leftmost = rq->curr = -1;
  rq->next = rq->last = rq->skip = -1;
  rq->rt_head = rq->rt_tail = -1;
  rq->cfs_head = rq->cfs_tail = -1;
  /* init_cfs_rq: start near the wrap, to catch unsigned mistakes */
  rq->min_vruntime = (uint64_t)(-(1LL << 20));
  rq->balance_interval = (uint32_t)FD(m)->balance_min_interval;
  psTask *idle = &d->task[d->cpu[cpu].idle];
  fair_se_init(idle);
  idle->time_slice = 0;
}

int fair_check_preempt_curr(const psModel *m, psData *d, psTask *p, int wake_flags) {
  psTask *curr = ps_curr(d, p->cpu);
  if (curr == p) return 0;
  if (curr->is_idle) return 1;
  if (fair_rt(p)) return !fair_rt(curr) || p->prio < curr->prio;
  if (fair_rt(curr)) return 0;
  return fair_class_of(m)->check_preempt_wakeup(m, d, p, wake_flags);
}

/* A task's generic prio: 120 + nice, or 99 - rt_priority (as 2.6 on). */
static void set_prio(const psModel *m, psData *d, psTask *p, int prio) {
  if (p->prio != prio) ps_log(m, d, PS_EVT_PRIO, p->cpu, p, -1, prio, p->prio);
  p->prio = prio;
}

/* A new task (spawned, or forked by parent) on p->cpu: enqueue it in its
 * class as wake_up_new_task does; 1 if it preempts. */
static int new_task(const psModel *m, psData *d, psTask *p, psTask *parent) {
  if (fair_rt(p)) {
    p->time_slice = (int32_t)FD(m)->rr_timeslice;
    rt_link(m, d, p->cpu, ps_index(d, p), 0);
  } else {
    fair_class_of(m)->task_new(m, d, p, parent);
  }
  return fair_check_preempt_curr(m, d, p, WF_FORK);
}

int fair_task_spawn(const psModel *m, psData *d, psTask *p) {
  fair_se *se = SE(p);
  /* a slice given at spawn is a sched_attr.sched_runtime request */
  se->custom_slice = se->slice != 0;
  fair_se_init(p);
  /* a task spawned from Python joins the group set for spawns */
  se->node.group = (int16_t)FCPU(m, d, 0)->spawn_group;
  p->static_prio = FAIR_MAX_PRIO - 20 + p->nice;
  p->prio = fair_rt(p) ? rt_prio_of(p->rt_priority) : p->static_prio;
  p->time_slice = 0;
  return new_task(m, d, p, NULL);
}

void fair_task_fork(const psModel *m, psData *d, psTask *parent, psTask *child) {
  /* the child's se is a copy of the parent's: __sched_fork's fresh one,
   * its slice inherited */
  fair_se_init(child);
  child->cpu = parent->cpu;
  child->time_slice = 0;
  /* wake_up_new_task's __set_task_cpu: a placement, not a migration */
  child->cpu = fair_rt(child) ? fair_select_task_rq_rt(m, d, child)
                              : fair_select_task_rq(m, d, child, parent, 0, 1);
  if (new_task(m, d, child, parent)) ps_resched_cpu(d, child->cpu);
}

int fair_wakeup(const psModel *m, psData *d, psTask *p, psTask *waker, int sync) {
  const fair_class *c = fair_class_of(m);
  if (SE(p)->sched_delayed) {
    /* still queued (DELAY_DEQUEUE): ttwu_runnable requeues it where it is */
    fair_requeue_task(m, d, p);
    return fair_check_preempt_curr(m, d, p, 0);
  }
  if (fair_rt(p)) {
    fair_set_task_cpu(m, d, p, fair_select_task_rq_rt(m, d, p));
    rt_link(m, d, p->cpu, ps_index(d, p), 0);
    return fair_check_preempt_curr(m, d, p, 0);
  }
  int from = p->cpu, flags = ENQUEUE_WAKEUP;
  int cpu = fair_select_task_rq(m, d, p, waker, sync, 0);
  if (cpu != from) {
    flags |= c->migrate_wakee(m, d, p, from);
    fair_set_task_cpu(m, d, p, cpu);
    ps_count_up(&FRQ(m, d, cpu)->nr_wakeup_migrations);
  }
  fair_enqueue_task(m, d, p, flags);
  return fair_check_preempt_curr(m, d, p, sync ? WF_SYNC : 0);
}

void fair_deactivate(const psModel *m, psData *d, psTask *prev) {
  if (fair_rt(prev)) {
    rt_update_curr(m, d, prev->cpu);
    rt_unlink(m, d, prev->cpu, ps_index(d, prev));
  } else {
    /* an exiting task's TASK_DEAD is a special state (is_special_task_state) */
    int special = prev->state == PS_TASK_ZOMBIE ? DEQUEUE_SPECIAL : 0;
    fair_dequeue_task(m, d, prev, DEQUEUE_SLEEP | special);
  }
}

/* pick_next_task: the RT class first, then the fair class (its
 * FAIR_GROUP_SCHED path: prev stays cfs_rq->curr while the next entity is
 * picked, and is put back only when another one is chosen), then a newly
 * idle balance, then the idle task. */
psTask *fair_pick_next(const psModel *m, psData *d, int cpu) {
  fair_rq *rq = FRQ(m, d, cpu);
  rt_update_curr(m, d, cpu);
  for (;;) {
    if (rq->rt_nr_running) {
      fair_put_prev_task(m, d, cpu);
      psTask *next = &d->task[rq->rt_head];
      if (next != ps_curr(d, cpu)) SE(next)->exec_start = (uint64_t)d->now_ns;
      return next;
    }
    if (rq->nr_running) {
      int32_t i = fair_pick_task(m, d, cpu);
      if (i < 0) continue;  /* it flushed a delayed entity: pick again */
      /* set_next_task_fair's list_move(&se->group_node, &rq->cfs_tasks):
       * the running task to the head, so that the list runs from the most
       * recently run to the least (6.12 fair.c) */
      fair_cfs_tasks_move(m, d, cpu, i);
      return &d->task[i];
    }
    if (!(FD(m)->balance && fair_newidle_balance(m, d, cpu))) break;
  }
  fair_put_prev_task(m, d, cpu);
  return &d->task[d->cpu[cpu].idle];
}

void fair_tick(const psModel *m, psData *d, int cpu) {
  psTask *p = ps_curr(d, cpu);
  if (!p->is_idle) {
    if (fair_rt(p))
      rt_tick(m, d, cpu, p);
    else
      fair_tick_task(m, d, cpu);
  }
  if (FD(m)->balance) fair_trigger_load_balance(m, d, cpu);
}

/* k ticks of fair_tick at once, on a CPU whose running fair task is alone
 * on its cfs_rq (nr_running 1: update_curr can reschedule nothing, and
 * neither CFS's check_preempt_tick nor EEVDF's slice end runs) and before
 * its next periodic balance: each tick's update_curr at that tick's time,
 * the very code fair_tick runs, so that the state is what k ticks one by
 * one would leave.  Task groups and RT tasks tick one by one. */
int64_t fair_tick_batch(const psModel *m, psData *d, int cpu, int64_t k, int apply) {
  psTask *p = ps_curr(d, cpu);
  fair_rq *rq = FRQ(m, d, cpu);
  if (p->is_idle || fair_rt(p) || fair_ngroups(m, d) > 1 || rq->nr_running != 1) return 0;
  int64_t n = k;
  if (FD(m)->balance) {
    /* the batch's ticks are jiffies + 1 .. jiffies + n; fair_trigger_load_balance
     * balances at the first one at or past next_balance */
    if (rq->next_balance <= d->jiffies + 1) return 0;
    int64_t before = (int64_t)(rq->next_balance - d->jiffies - 1);
    if (n > before) n = before;
  }
  if (!apply) return n;
  int64_t now = d->now_ns, at = d->next_tick_ns[cpu];
  for (int64_t t = 0; t < n; t++, at += m->tick_ns) {
    d->now_ns = at;
    fair_tick_task(m, d, cpu);
  }
  d->now_ns = now;
  return n;
}

/* sys_sched_yield: the class's yield_task, then schedule() */
void fair_yield(const psModel *m, psData *d, psTask *p) {
  if (fair_rt(p)) {
    /* yield_task_rt: behind the others of its prio */
    int32_t i = ps_index(d, p);
    rt_unlink(m, d, p->cpu, i);
    rt_link(m, d, p->cpu, i, 0);
  } else {
    fair_class_of(m)->yield_task(m, d, p);
  }
  ps_resched_cpu(d, p->cpu);
}

/* set_user_nice: an RT task only records its static prio (its weight
 * follows when it returns to the fair class); a fair one is dequeued (if
 * queued) and put (if running), reweighted, enqueued and set again, then
 * prio_changed_fair decides on preemption. */
void fair_set_nice(const psModel *m, psData *d, psTask *p, int nice) {
  const fair_class *c = fair_class_of(m);
  p->static_prio = FAIR_MAX_PRIO - 20 + nice;
  if (fair_rt(p)) return;
  int cpu = p->cpu;
  int32_t i = ps_index(d, p);
  fair_rq *rq = FRQ(m, d, cpu);
  int q = fair_cfs_rq_of(m, d, i);
  int queued = p->on_rq || SE(p)->sched_delayed;
  int running = ps_curr(d, cpu) == p;
  int old_prio = p->prio;
  if (queued) fair_dequeue_task(m, d, p, DEQUEUE_SAVE);
  if (running && CFSQ(m, d, q)->curr == i) fair_put_prev_task(m, d, cpu);
  c->reweight_entity(m, d, q, i, fair_nice_weight(nice));
  set_prio(m, d, p, p->static_prio);
  if (queued) fair_enqueue_task(m, d, p, ENQUEUE_RESTORE);
  if (running) fair_set_next_task(m, d, p);
  /* prio_changed_fair (a delayed entity is asleep: no preemption) */
  if (!p->on_rq || rq->nr_running == 1) return;
  if (running ? p->prio > old_prio : fair_check_preempt_curr(m, d, p, 0)) ps_resched_cpu(d, cpu);
}

/* __sched_setscheduler: out of the old class (dequeue/put), the new
 * policy, into the new class (enqueue/set), then check_class_changed. */
void fair_set_scheduler(const psModel *m, psData *d, psTask *p, int policy, int rt_priority) {
  const fair_class *c = fair_class_of(m);
  int cpu = p->cpu;
  int32_t i = ps_index(d, p);
  int q = fair_cfs_rq_of(m, d, i);
  int old_rt = fair_rt(p), new_rt = policy != PS_SCHED_NORMAL;
  /* a sleeping entity whose dequeue was delayed leaves for good first */
  if (SE(p)->sched_delayed) fair_dequeue_task(m, d, p, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
  int queued = p->on_rq, running = ps_curr(d, cpu) == p;
  int old_prio = p->prio;
  if (queued) {
    if (old_rt) {
      rt_update_curr(m, d, cpu);
      rt_unlink(m, d, cpu, i);
    } else {
      fair_dequeue_task(m, d, p, DEQUEUE_SAVE | DEQUEUE_MOVE);
    }
  }
  if (running && !old_rt && CFSQ(m, d, q)->curr == i) fair_put_prev_task(m, d, cpu);
  if (!old_rt && new_rt && !queued && c->detach) c->detach(m, d, p);
  p->policy = policy;
  p->rt_priority = rt_priority;
  set_prio(m, d, p, new_rt ? rt_prio_of(rt_priority) : p->static_prio);
  if (old_rt && !new_rt) c->reweight_entity(m, d, q, i, fair_nice_weight(p->nice));
  if (old_rt && !new_rt && !queued && c->attach) c->attach(m, d, p);
  if (new_rt && !old_rt) p->time_slice = (int32_t)FD(m)->rr_timeslice;
  if (!new_rt) p->time_slice = 0;
  if (queued) {
    if (new_rt) {
      /* a task whose priority fell goes to the head of its new list */
      rt_link(m, d, cpu, i, old_prio < p->prio);
      if (running) SE(p)->exec_start = (uint64_t)d->now_ns;
    } else {
      fair_enqueue_task(m, d, p, ENQUEUE_RESTORE | ENQUEUE_MOVE);
      if (running) fair_set_next_task(m, d, p);
    }
    /* check_class_changed: the running task reschedules, a queued one may preempt */
    if (running || fair_check_preempt_curr(m, d, p, 0)) ps_resched_cpu(d, cpu);
  }
}

/* set_cpus_allowed's move of a task that is not running (or of prev as
 * schedule() lets it go) */
void fair_migrate(const psModel *m, psData *d, psTask *p, int dest) {
  int src = p->cpu;
  int32_t i = ps_index(d, p);
  if (!fair_rt(p) && CFSQ(m, d, fair_cfs_rq_of(m, d, i))->curr == i) fair_put_prev_task(m, d, src);
  if (fair_rt(p)) {
    if (p->on_rq) rt_unlink(m, d, src, i);
    fair_set_task_cpu(m, d, p, dest);
    if (p->on_rq) {
      rt_link(m, d, dest, i, 0);
      if (fair_check_preempt_curr(m, d, p, 0)) ps_resched_cpu(d, dest);
    }
  } else if (p->on_rq) {
    fair_move_queued(m, d, p, dest);
  } else if (SE(p)->sched_delayed) {
    /* move_queued_task: a delayed entity is still queued, and stays delayed */
    fair_dequeue_task(m, d, p, 0);
    fair_set_task_cpu(m, d, p, dest);
    fair_enqueue_task(m, d, p, ENQUEUE_MIGRATED);
  } else {
    /* asleep: it will wake there (set_task_cpu, not TASK_WAKING) */
    fair_set_task_cpu(m, d, p, dest);
  }
}

const psColumn fair_queue_columns[3] = {{"class", "rt,fair,delayed"}, {"prio", NULL}, {"pid", NULL}};

static int dump_row(const psData *d, int32_t i, int32_t *out, int n, int max) {
  if (n >= max) return n;
  const psTask *t = &d->task[i];
  out[3 * n] = fair_rt(t) ? 0 : SEc(t)->sched_delayed ? 2 : 1;
  out[3 * n + 1] = t->prio;
  out[3 * n + 2] = t->pid;
  return n + 1;
}

/* The entities of cfs_rq q in key order (vruntime for CFS, deadline for
 * EEVDF) with the running one (cfs_rq->curr, outside the tree) at its
 * key's place; a group entity stands for its own cfs_rq's tasks. */
static int dump_cfs_rq(const psModel *m, const psData *d, int q, int32_t *out, int n, int max);
static int dump_entity(const psModel *m, const psData *d, int32_t i, int32_t *out, int n, int max) {
  return fair_is_group(i) ? dump_cfs_rq(m, d, i - FAIR_GSE, out, n, max) : dump_row(d, i, out, n, max);
}
static int dump_cfs_rq(const psModel *m, const psData *d, int q, int32_t *out, int n, int max) {
  const fair_rq *rq = CFSQ(m, d, q);
  int key = fair_class_of(m)->key;
  int32_t curr = rq->curr >= 0 && rq->curr_on_rq ? rq->curr : -1;
  const fair_se *cs = curr >= 0 ? fair_ent(m, d, curr) : NULL;
  uint64_t ck = !cs ? 0 : key ? cs->deadline : cs->vruntime;
  for (int32_t i = rq->leftmost; i >= 0 && n < max; i = fair_rb_next(m, d, i)) {
    const fair_se *se = fair_ent(m, d, i);
    if (curr >= 0 && vdiff(ck, key ? se->deadline : se->vruntime) < 0) {
      n = dump_entity(m, d, curr, out, n, max);
      curr = -1;
    }
    n = dump_entity(m, d, i, out, n, max);
  }
  if (curr >= 0) n = dump_entity(m, d, curr, out, n, max);
  return n;
}

/* The queue of `cpu` as schedule() orders it: the RT list, then the fair
 * entities, a group's tasks where its entity stands. */
int fair_dump(const psModel *m, const psData *d, int cpu, int32_t *out, int max) {
  const fair_rq *rq = FRQ(m, d, cpu);
  int n = 0;
  for (int32_t i = rq->rt_head; i >= 0 && n < max; i = SEc(&d->task[i])->node.left)
    n = dump_row(d, i, out, n, max);
  return dump_cfs_rq(m, d, cpu, out, n, max);
}
