/* The fair schedulers' shared code (fair_common.h): arithmetic, the
 * cfs_rq's bookkeeping, a real-time class, and the hooks every member runs
 * through its fair_class. */
#include "fair_common.h"

#include <stdio.h>
#include <string.h>

/* ---- arithmetic ---- */

/* kernel/sched/core.c (docs/schedulers/cfs.md §2): nice -20 .. 19 */
const int sched_prio_to_weight[40] = {
    /* -20 */ 88761, 71755, 56483, 46273, 36291,
    /* -15 */ 29154, 23254, 18705, 14949, 11916,
    /* -10 */ 9548,  7620,  6100,  4904,  3906,
    /*  -5 */ 3121,  2501,  1991,  1586,  1277,
    /*   0 */ 1024,  820,   655,   526,   423,
    /*   5 */ 335,   272,   215,   172,   137,
    /*  10 */ 110,   87,    70,    56,    45,
    /*  15 */ 36,    29,    23,    18,    15,
};

/* kernel/sched/core.c: 2^32 / sched_prio_to_weight[], rounded */
const uint32_t sched_prio_to_wmult[40] = {
    /* -20 */ 48388,     59856,     76040,     92818,     118348,
    /* -15 */ 147320,    184698,    229616,    287308,    360437,
    /* -10 */ 449829,    563644,    704093,    875809,    1099582,
    /*  -5 */ 1376151,   1717300,   2157191,   2708050,   3363326,
    /*   0 */ 4194304,   5237765,   6557202,   8165337,   10153587,
    /*   5 */ 12820798,  15790321,  19976592,  24970740,  31350126,
    /*  10 */ 39045157,  49367440,  61356676,  76695844,  95443717,
    /*  15 */ 119304647, 148102320, 186737708, 238609294, 286331153,
};

uint32_t fair_weight_wmult(uint32_t weight) {
  /* the weights fall with nice: bisect */
  int lo = 0, hi = 39;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if ((uint32_t)sched_prio_to_weight[mid] > weight)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (uint32_t)sched_prio_to_weight[lo] == weight ? sched_prio_to_wmult[lo] : fair_inv_weight(weight);
}

/* fair.c __update_inv_weight (64-bit) */
uint32_t fair_inv_weight(uint64_t w) {
  if (w >= WMULT_CONST) return 1;
  if (!w) return WMULT_CONST;
  return (uint32_t)(WMULT_CONST / w);
}

static int fls32(uint32_t x) { return x ? 32 - __builtin_clz(x) : 0; }

/* fair.c __calc_delta: fact = weight * inv_weight, shifted down until it
 * fits 32 bits, then mul_u64_u32_shr (a 128-bit product on 64-bit) */
uint64_t fair_calc_delta(uint64_t delta_exec, uint64_t weight, uint32_t lw_inv) {
  uint64_t fact = weight;
  uint32_t fact_hi = (uint32_t)(fact >> 32);
  int shift = WMULT_SHIFT;
  if (fact_hi) {
    int fs = fls32(fact_hi);
    shift -= fs;
    fact >>= fs;
  }
  fact = (uint64_t)(uint32_t)fact * lw_inv;
  fact_hi = (uint32_t)(fact >> 32);
  if (fact_hi) {
    int fs = fls32(fact_hi);
    shift -= fs;
    fact >>= fs;
  }
  return (uint64_t)(((unsigned __int128)delta_exec * (uint32_t)fact) >> shift);
}

/* fair.c calc_delta_fair: nice-0 tasks skip the arithmetic */
uint64_t fair_calc_delta_fair(uint64_t delta, uint32_t weight) {
  if (weight != NICE_0_LOAD) delta = fair_calc_delta(delta, NICE_0_LOAD, fair_weight_wmult(weight));
  return delta;
}

/* fair.c get_update_sysctl_factor */
int fair_sysctl_factor(int ncpus, int scaling) {
  int cpus = ncpus < 8 ? ncpus : 8;
  if (scaling == 0) return 1;
  if (scaling == 2) return cpus;
  return 1 + (31 - __builtin_clz((unsigned)cpus));
}

void fair_configure_common(psModel *m, int p0) {
  fair_derived *f = (fair_derived *)m->derived;
  f->migration_cost = m->param[p0];
  f->balance = m->param[p0 + 1] && m->ncpu > 1;
  f->busy_factor = m->param[p0 + 2];
  f->imbalance_pct = m->param[p0 + 3];
  /* RR_TIMESLICE = 100 * HZ / 1000 jiffies (include/linux/sched/rt.h) */
  f->rr_timeslice = 100 * m->hz / 1000 > 0 ? 100 * m->hz / 1000 : 1;
  /* an LLC (MC) domain over every CPU: sd_weight ms, 1 cache_nice_try
   * (sd_init in kernel/sched/topology.c) */
  f->balance_min_interval = m->ncpu;
  f->cache_nice_tries = 1;
}

/* ---- the cfs_rq ---- */

static int eevdf(const psModel *m) { return fair_class_of(m)->key == FAIR_KEY_DEADLINE; }

static int64_t entity_key(const fair_rq *rq, const fair_se *se) {
  return vdiff(se->vruntime, rq->min_vruntime);
}

void fair_tree_enqueue(const psModel *m, psData *d, int cpu, int32_t i) {
  fair_rq *rq = FRQ(m, d, cpu);
  fair_se *se = SE(&d->task[i]);
  /* avg_vruntime_add (EEVDF only keeps V) */
  if (eevdf(m)) {
    rq->avg_vruntime = s64_add(rq->avg_vruntime, s64_mul(entity_key(rq, se), se->weight));
    rq->avg_load += se->weight;
  }
  fair_tree t = fair_tree_of(m, d, cpu);
  fair_rb_insert(&t, i);
}

void fair_tree_dequeue(const psModel *m, psData *d, int cpu, int32_t i) {
  fair_rq *rq = FRQ(m, d, cpu);
  fair_se *se = SE(&d->task[i]);
  fair_tree t = fair_tree_of(m, d, cpu);
  fair_rb_erase(&t, i);
  if (eevdf(m)) {
    rq->avg_vruntime = s64_add(rq->avg_vruntime, -s64_mul(entity_key(rq, se), se->weight));
    rq->avg_load -= se->weight;
  }
}

void fair_account_enqueue(const psModel *m, psData *d, int cpu, psTask *p) {
  fair_rq *rq = FRQ(m, d, cpu);
  fair_se *se = SE(p);
  rq->load += se->weight;
  rq->nr_running++;
  if (se->sched_delayed) rq->nr_delayed++;
  /* list_add(&se->group_node, &rq->cfs_tasks) */
  se->list_stamp = ++rq->list_seq;
}

void fair_account_dequeue(const psModel *m, psData *d, int cpu, psTask *p) {
  fair_rq *rq = FRQ(m, d, cpu);
  fair_se *se = SE(p);
  rq->load -= se->weight;
  rq->nr_running--;
  if (se->sched_delayed) rq->nr_delayed--;
}

/* avg + curr's part and load + curr's, as avg_vruntime and
 * vruntime_eligible start */
static void avg_with_curr(const psModel *m, const psData *d, const fair_rq *rq, int64_t *avg,
                          int64_t *load) {
  *avg = rq->avg_vruntime;
  *load = rq->avg_load;
  if (rq->curr >= 0 && rq->curr_on_rq) {
    const fair_se *c = SEc(&d->task[rq->curr]);
    *avg = s64_add(*avg, s64_mul(entity_key(rq, c), c->weight));
    *load += c->weight;
  }
}

uint64_t fair_avg_vruntime(const psModel *m, const psData *d, int cpu) {
  const fair_rq *rq = FRQ(m, d, cpu);
  int64_t avg, load;
  avg_with_curr(m, d, rq, &avg, &load);
  if (load) {
    /* sign flips effective floor / ceiling */
    if (avg < 0) avg -= load - 1;
    avg /= load;
  }
  return rq->min_vruntime + (uint64_t)avg;
}

int fair_vruntime_eligible(const psModel *m, const psData *d, int cpu, uint64_t vruntime) {
  const fair_rq *rq = FRQ(m, d, cpu);
  int64_t avg, load;
  avg_with_curr(m, d, rq, &avg, &load);
  return avg >= s64_mul(vdiff(vruntime, rq->min_vruntime), load);
}

int32_t fair_first(const fair_rq *rq) { return rq->leftmost; }

void fair_update_min_vruntime(const psModel *m, psData *d, int cpu, int with_avg) {
  fair_rq *rq = FRQ(m, d, cpu);
  uint64_t vruntime = rq->min_vruntime;
  int curr = rq->curr >= 0 && rq->curr_on_rq;
  if (curr) vruntime = SE(&d->task[rq->curr])->vruntime;
  if (rq->root >= 0) {
    /* EEVDF's tree is by deadline: the root's augment holds the smallest
     * vruntime (6.12); CFS's leftmost is its smallest (6.5) */
    uint64_t first = with_avg ? SE(&d->task[rq->root])->min_vruntime
                              : SE(&d->task[rq->leftmost])->vruntime;
    vruntime = curr ? min_vruntime_of(vruntime, first) : first;
  }
  /* ensure we never gain time by being placed backwards */
  int64_t delta = vdiff(vruntime, rq->min_vruntime);
  if (delta > 0) {
    /* __update_min_vruntime: avg_vruntime' = avg_vruntime - d * avg_load */
    if (with_avg) rq->avg_vruntime = s64_add(rq->avg_vruntime, -s64_mul(rq->avg_load, delta));
    rq->min_vruntime = vruntime;
  }
}

void fair_se_init(psTask *p) {
  fair_se *se = SE(p);
  uint64_t slice = se->slice;
  int32_t custom = se->custom_slice;
  memset(se, 0, sizeof *se);
  se->node.left = se->node.right = se->node.parent = -1;
  se->node.color = FAIR_NODE_OFF;
  se->weight = fair_nice_weight(p->nice);
  /* a slice asked for with sched_attr.sched_runtime stays (it is
   * inherited across fork, as sched_reset_on_fork is not modelled) */
  se->slice = slice;
  se->custom_slice = custom;
}

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

static int rt_prio_of(int rt_priority) { return FAIR_MAX_RT_PRIO - 1 - rt_priority; }

/* ---- shared hooks ---- */

void fair_init_rq(const psModel *m, psData *d, int cpu) {
  fair_rq *rq = FRQ(m, d, cpu);
  rq->root = rq->leftmost = rq->curr = -1;
  rq->next = rq->last = rq->skip = -1;
  rq->rt_head = rq->rt_tail = -1;
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
    c->requeue_delayed(m, d, p);
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
  c->enqueue_entity(m, d, p, flags);
  return fair_check_preempt_curr(m, d, p, sync ? WF_SYNC : 0);
}

void fair_deactivate(const psModel *m, psData *d, psTask *prev) {
  if (fair_rt(prev)) {
    rt_update_curr(m, d, prev->cpu);
    rt_unlink(m, d, prev->cpu, ps_index(d, prev));
  } else {
    /* an exiting task's TASK_DEAD is a special state (is_special_task_state) */
    int special = prev->state == PS_TASK_ZOMBIE ? DEQUEUE_SPECIAL : 0;
    fair_class_of(m)->dequeue_entity(m, d, prev, DEQUEUE_SLEEP | special);
  }
}

/* pick_next_task: the RT class first, then the fair class (its
 * FAIR_GROUP_SCHED path: prev stays cfs_rq->curr while the next entity is
 * picked, and is put back only when another one is chosen), then a newly
 * idle balance, then the idle task. */
psTask *fair_pick_next(const psModel *m, psData *d, int cpu) {
  const fair_class *c = fair_class_of(m);
  fair_rq *rq = FRQ(m, d, cpu);
  rt_update_curr(m, d, cpu);
  for (;;) {
    if (rq->rt_nr_running) {
      if (rq->curr >= 0) c->put_prev_entity(m, d, cpu, rq->curr);
      psTask *next = &d->task[rq->rt_head];
      if (next != ps_curr(d, cpu)) SE(next)->exec_start = (uint64_t)d->now_ns;
      return next;
    }
    if (rq->nr_running) {
      int32_t i = c->pick_next_entity(m, d, cpu);
      if (i < 0) continue;  /* it flushed a delayed entity: pick again */
      if (i != rq->curr) {
        if (rq->curr >= 0) c->put_prev_entity(m, d, cpu, rq->curr);
        c->set_next_entity(m, d, cpu, i);
      }
      /* list_move(&p->se.group_node, &rq->cfs_tasks) */
      SE(&d->task[i])->list_stamp = ++rq->list_seq;
      return &d->task[i];
    }
    if (!(FD(m)->balance && fair_newidle_balance(m, d, cpu))) break;
  }
  if (rq->curr >= 0) c->put_prev_entity(m, d, cpu, rq->curr);
  return &d->task[d->cpu[cpu].idle];
}

void fair_tick(const psModel *m, psData *d, int cpu) {
  psTask *p = ps_curr(d, cpu);
  if (!p->is_idle) {
    if (fair_rt(p))
      rt_tick(m, d, cpu, p);
    else
      fair_class_of(m)->entity_tick(m, d, cpu);
  }
  if (FD(m)->balance) fair_trigger_load_balance(m, d, cpu);
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
  int queued = p->on_rq || SE(p)->sched_delayed;
  int running = ps_curr(d, cpu) == p;
  int old_prio = p->prio;
  if (queued) c->dequeue_entity(m, d, p, DEQUEUE_SAVE);
  if (running && rq->curr == i) c->put_prev_entity(m, d, cpu, i);
  c->reweight(m, d, p, fair_nice_weight(nice));
  set_prio(m, d, p, p->static_prio);
  if (queued) c->enqueue_entity(m, d, p, ENQUEUE_RESTORE);
  if (running) c->set_next_entity(m, d, cpu, i);
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
  fair_rq *rq = FRQ(m, d, cpu);
  int old_rt = fair_rt(p), new_rt = policy != PS_SCHED_NORMAL;
  /* a sleeping entity whose dequeue was delayed leaves for good first */
  if (SE(p)->sched_delayed) c->dequeue_entity(m, d, p, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
  int queued = p->on_rq, running = ps_curr(d, cpu) == p;
  int old_prio = p->prio;
  if (queued) {
    if (old_rt) {
      rt_update_curr(m, d, cpu);
      rt_unlink(m, d, cpu, i);
    } else {
      c->dequeue_entity(m, d, p, DEQUEUE_SAVE | DEQUEUE_MOVE);
    }
  }
  if (running && !old_rt && rq->curr == i) c->put_prev_entity(m, d, cpu, i);
  if (!old_rt && new_rt && !queued && c->detach) c->detach(m, d, p);
  p->policy = policy;
  p->rt_priority = rt_priority;
  set_prio(m, d, p, new_rt ? rt_prio_of(rt_priority) : p->static_prio);
  if (old_rt && !new_rt) c->reweight(m, d, p, fair_nice_weight(p->nice));
  if (old_rt && !new_rt && !queued && c->attach) c->attach(m, d, p);
  if (new_rt && !old_rt) p->time_slice = (int32_t)FD(m)->rr_timeslice;
  if (!new_rt) p->time_slice = 0;
  if (queued) {
    if (new_rt) {
      /* a task whose priority fell goes to the head of its new list */
      rt_link(m, d, cpu, i, old_prio < p->prio);
      if (running) SE(p)->exec_start = (uint64_t)d->now_ns;
    } else {
      c->enqueue_entity(m, d, p, ENQUEUE_RESTORE | ENQUEUE_MOVE);
      if (running) c->set_next_entity(m, d, cpu, i);
    }
    /* check_class_changed: the running task reschedules, a queued one may preempt */
    if (running || fair_check_preempt_curr(m, d, p, 0)) ps_resched_cpu(d, cpu);
  }
}

/* set_cpus_allowed's move of a task that is not running (or of prev as
 * schedule() lets it go) */
void fair_migrate(const psModel *m, psData *d, psTask *p, int dest) {
  const fair_class *c = fair_class_of(m);
  int src = p->cpu;
  int32_t i = ps_index(d, p);
  fair_rq *rq = FRQ(m, d, src);
  if (rq->curr == i) c->put_prev_entity(m, d, src, i);
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
    c->dequeue_entity(m, d, p, 0);
    fair_set_task_cpu(m, d, p, dest);
    c->enqueue_entity(m, d, p, ENQUEUE_MIGRATED);
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

/* The queue of `cpu` as schedule() orders it: the RT list, then the fair
 * entities in key order (vruntime for CFS, deadline for EEVDF) with the
 * running one (cfs_rq->curr, outside the tree) at its key's place. */
int fair_dump(const psModel *m, const psData *d, int cpu, int32_t *out, int max) {
  const fair_rq *rq = FRQ(m, d, cpu);
  int n = 0, key = fair_class_of(m)->key;
  for (int32_t i = rq->rt_head; i >= 0 && n < max; i = SEc(&d->task[i])->node.left)
    n = dump_row(d, i, out, n, max);
  int32_t curr = rq->curr >= 0 && rq->curr_on_rq ? rq->curr : -1;
  uint64_t ck = curr < 0 ? 0 : key ? SEc(&d->task[curr])->deadline : SEc(&d->task[curr])->vruntime;
  for (int32_t i = rq->leftmost; i >= 0 && n < max; i = fair_rb_next(d->task, i)) {
    const fair_se *se = SEc(&d->task[i]);
    if (curr >= 0 && vdiff(ck, key ? se->deadline : se->vruntime) < 0) {
      n = dump_row(d, curr, out, n, max);
      curr = -1;
    }
    n = dump_row(d, i, out, n, max);
  }
  if (curr >= 0) n = dump_row(d, curr, out, n, max);
  return n;
}

/* ---- invariants ---- */

static int link_ok(int32_t i, int32_t n) { return i >= -1 && i < n; }

static int check_links(const psModel *m, const psData *d, char *err, int errlen) {
  for (int32_t i = 0; i < d->ntask; i++) {
    const fair_se *se = SEc(&d->task[i]);
    const fair_node *n = &se->node;
    if (!link_ok(n->left, d->ntask) || !link_ok(n->right, d->ntask) ||
        !link_ok(n->parent, d->ntask) || n->color < FAIR_NODE_OFF || n->color > FAIR_NODE_RT ||
        d->task[i].cpu < 0 || d->task[i].cpu >= m->ncpu) {
      snprintf(err, errlen, "slot %d (pid %d): a link, colour or cpu out of range", i, d->task[i].pid);
      return -1;
    }
    if ((se->custom_slice & ~1) || (se->sched_delayed & ~1) || (se->rel_deadline & ~1)) {
      snprintf(err, errlen, "pid %d: a flag is not 0 or 1", d->task[i].pid);
      return -1;
    }
  }
  for (int c = 0; c < m->ncpu; c++) {
    const fair_rq *rq = FRQ(m, d, c);
    if (!link_ok(rq->root, d->ntask) || !link_ok(rq->leftmost, d->ntask) ||
        !link_ok(rq->curr, d->ntask) || !link_ok(rq->next, d->ntask) ||
        !link_ok(rq->last, d->ntask) || !link_ok(rq->skip, d->ntask) ||
        !link_ok(rq->rt_head, d->ntask) || !link_ok(rq->rt_tail, d->ntask) ||
        (rq->curr_on_rq & ~1) || (rq->protect & ~1)) {
      snprintf(err, errlen, "cpu %d: a runqueue index out of range", c);
      return -1;
    }
  }
  return 0;
}

/* Everything one CPU's queues hold: the tree (order, colours, augment,
 * leftmost), its sums (nr_running, nr_delayed, load, avg_vruntime,
 * avg_load), cfs_rq->curr, the buddies, the RT list. */
static int check_cpu(const psModel *m, const psData *d, int cpu, int32_t *intree, char *err,
                     int errlen) {
  const fair_rq *rq = FRQ(m, d, cpu);
  fair_tree t = {(psTask *)d->task, (int32_t *)&rq->root, (int32_t *)&rq->leftmost,
                 fair_class_of(m)->key};
  int32_t count;
  char why[PS_ERRLEN];
  if (fair_rb_check(&t, d->ntask, &count, why, sizeof why)) {
    snprintf(err, errlen, "cpu %d: %.200s", cpu, why);
    return -1;
  }
  *intree = count;
  uint64_t load = 0;
  int64_t avg = 0, avg_load = 0;
  uint32_t delayed = 0;
  for (int32_t i = rq->leftmost; i >= 0; i = fair_rb_next(d->task, i)) {
    const psTask *p = &d->task[i];
    const fair_se *se = SEc(p);
    if (p->cpu != cpu || fair_rt(p) || i < m->ncpu || i == rq->curr ||
        (se->sched_delayed ? p->on_rq || p->state == PS_TASK_RUNNING : !p->on_rq)) {
      snprintf(err, errlen, "cpu %d: pid %d is in its tree but not a task queued there", cpu, p->pid);
      return -1;
    }
    load += se->weight;
    avg = s64_add(avg, s64_mul(entity_key(rq, se), se->weight));
    avg_load += se->weight;
    delayed += (uint32_t)se->sched_delayed;
  }
  const psTask *run = &d->task[d->cpu[cpu].curr];
  int32_t want_curr = run->is_idle || fair_rt(run) ? -1 : d->cpu[cpu].curr;
  if (rq->curr != want_curr) {
    snprintf(err, errlen, "cpu %d: cfs_rq->curr is slot %d, but pid %d runs", cpu, rq->curr, run->pid);
    return -1;
  }
  if (rq->curr >= 0) {
    const fair_se *se = SEc(&d->task[rq->curr]);
    if (se->node.color != FAIR_NODE_OFF || !rq->curr_on_rq || se->sched_delayed) {
      snprintf(err, errlen, "cpu %d: the running entity is in its tree, off its queue or delayed", cpu);
      return -1;
    }
    load += se->weight;
  } else if (rq->curr_on_rq || rq->protect) {
    snprintf(err, errlen, "cpu %d: no cfs_rq->curr but curr_on_rq or protect set", cpu);
    return -1;
  }
  uint32_t nr = (uint32_t)count + (rq->curr >= 0);
  if (nr != rq->nr_running || delayed != rq->nr_delayed || load != rq->load) {
    snprintf(err, errlen, "cpu %d: nr_running %u, nr_delayed %u, load %llu but %u queued, %u "
             "delayed, load %llu", cpu, rq->nr_running, rq->nr_delayed,
             (unsigned long long)rq->load, nr, delayed, (unsigned long long)load);
    return -1;
  }
  if (fair_class_of(m)->key == FAIR_KEY_DEADLINE && (avg != rq->avg_vruntime || avg_load != rq->avg_load)) {
    snprintf(err, errlen, "cpu %d: avg_vruntime %lld / avg_load %lld, but the tree sums to %lld / %lld",
             cpu, (long long)rq->avg_vruntime, (long long)rq->avg_load, (long long)avg,
             (long long)avg_load);
    return -1;
  }
  int32_t buddies[3] = {rq->next, rq->last, rq->skip};
  for (int k = 0; k < 3; k++) {
    int32_t b = buddies[k];
    if (b >= 0 && (b != rq->curr && SEc(&d->task[b])->node.color != FAIR_NODE_BLACK &&
                   SEc(&d->task[b])->node.color != FAIR_NODE_RED)) {
      snprintf(err, errlen, "cpu %d: a buddy (slot %d) is not queued there", cpu, b);
      return -1;
    }
    if (b >= 0 && d->task[b].cpu != cpu) {
      snprintf(err, errlen, "cpu %d: a buddy (slot %d) is another CPU's", cpu, b);
      return -1;
    }
  }
  uint32_t nrt = 0;
  int32_t prev = -1;
  for (int32_t i = rq->rt_head; i >= 0; i = SEc(&d->task[i])->node.left) {
    const psTask *p = &d->task[i];
    const fair_node *n = &SEc(p)->node;
    if (++nrt > (uint32_t)d->ntask || n->color != FAIR_NODE_RT || n->right != prev ||
        !fair_rt(p) || !p->on_rq || p->cpu != cpu || i < m->ncpu ||
        (prev >= 0 && d->task[prev].prio > p->prio)) {
      snprintf(err, errlen, "cpu %d: the RT list is broken at slot %d", cpu, i);
      return -1;
    }
    prev = i;
  }
  if (prev != rq->rt_tail || nrt != rq->rt_nr_running) {
    snprintf(err, errlen, "cpu %d: RT tail %d (last %d), %u listed, rt_nr_running %u", cpu,
             rq->rt_tail, prev, nrt, rq->rt_nr_running);
    return -1;
  }
  return 0;
}

int fair_check(const psModel *m, const psData *d, char *err, int errlen) {
  if (check_links(m, d, err, errlen)) return -1;
  int64_t intree = 0, rt = 0;
  for (int c = 0; c < m->ncpu; c++) {
    int32_t n;
    if (check_cpu(m, d, c, &n, err, errlen)) return -1;
    intree += n;
    rt += FRQ(m, d, c)->rt_nr_running;
  }
  /* every queued task is in its class's queue, and nothing else is */
  int64_t want_tree = 0, want_rt = 0;
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    const psTask *p = &d->task[i];
    const fair_se *se = SEc(p);
    if (!p->pid) continue;
    /* what update_curr and place_entity compute with stays in range: the
     * time it ran and when it last did are at most now, and it ran no more
     * than the time up to its last update (exec_start, 0 after a
     * migration until it runs again); a saved lag within what
     * update_entity_lag's clamp can leave: twice the largest slice (a 1 s
     * base slice scaled by 4 CPUs' factor) at nice 19 is 546 s of virtual
     * time, below 2^40 ns */
    if (se->exec_start > (uint64_t)d->now_ns || se->sum_exec_runtime > (uint64_t)d->now_ns ||
        ((se->exec_start || FRQ(m, d, p->cpu)->curr == i) &&
         se->sum_exec_runtime > se->exec_start) ||
        se->vlag < -(INT64_C(1) << 40) || se->vlag > (INT64_C(1) << 40)) {
      snprintf(err, errlen, "pid %d: exec_start %llu, sum_exec_runtime %llu or vlag %lld out of "
               "range (0..now=%lld, 0..min(now, exec_start), -2^40..2^40)", p->pid,
               (unsigned long long)se->exec_start, (unsigned long long)se->sum_exec_runtime,
               (long long)se->vlag, (long long)d->now_ns);
      return -1;
    }
    /* an RR slice that runs out is refilled at that tick (task_tick_rt) */
    if (p->exit_ns < 0 && p->policy == PS_SCHED_RR && p->time_slice < 1) {
      snprintf(err, errlen, "pid %d: an RR task with time_slice %d (at least 1)", p->pid,
               p->time_slice);
      return -1;
    }
    if (fair_rt(p)) {
      want_rt += p->on_rq;
      if (se->sched_delayed) {
        snprintf(err, errlen, "pid %d: an RT task is a delayed fair entity", p->pid);
        return -1;
      }
    } else {
      want_tree += (p->on_rq && FRQ(m, d, p->cpu)->curr != i) || se->sched_delayed;
      if (se->weight != fair_nice_weight(p->nice)) {
        snprintf(err, errlen, "pid %d: weight %u but nice %d", p->pid, se->weight, p->nice);
        return -1;
      }
    }
  }
  if (want_tree != intree || want_rt != rt) {
    snprintf(err, errlen, "%lld fair entities in trees but %lld queued; %lld RT listed but %lld queued",
             (long long)intree, (long long)want_tree, (long long)rt, (long long)want_rt);
    return -1;
  }
  return 0;
}

int64_t fair_f_weight(const psModel *m, const int64_t *a) { return fair_nice_weight((int)a[0]); }
int64_t fair_f_wmult(const psModel *m, const int64_t *a) { return sched_prio_to_wmult[a[0] + 20]; }
int64_t fair_f_calc_delta_fair(const psModel *m, const int64_t *a) {
  return (int64_t)fair_calc_delta_fair((uint64_t)a[0], fair_nice_weight((int)a[1]));
}
int64_t fair_f_factor(const psModel *m, const int64_t *a) {
  return fair_sysctl_factor((int)a[0], (int)a[1]);
}
