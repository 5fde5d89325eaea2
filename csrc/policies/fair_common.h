/* What the fair schedulers share: CFS (policy_cfs.c, 2.6.23-6.5) and EEVDF
 * (policy_eevdf.c, 6.6+).  The nice-to-weight tables and the wmult fixed
 * point of kernel/sched/core.c and fair.c, the per-task sched_entity and
 * the per-CPU cfs_rq (in psTask.priv and the policy's runqueue), the
 * weighted average vruntime, min_vruntime, the ordered queue
 * (fair_rbtree.h), a real-time class beside them, and the hooks that do not
 * depend on the member: each member describes itself with a fair_class
 * (its enqueue/dequeue/pick/tick/preemption, as the kernel's fair.c of its
 * version), and the shared hooks call it.  The shared code is
 * fair_common.c (arithmetic, the cfs_rq's bookkeeping), fair_hooks.c (the
 * shared hooks, the RT class), fair_invariants.c (the invariants) and
 * balance_fair.c (placement, balancing).
 *
 * Sources read (cited as "6.5" and "6.12" below): a CFS-era fair.c of the
 * 6.x series (gregkh/linux @ 000c9ee4: place_entity with
 * entity_is_long_sleeper, check_preempt_tick, wakeup_preempt_entity,
 * sched_slice with BASE_SLICE) and 6.12.y's fair.c (DoubleZZeta/linux-6.12.67:
 * avg_vruntime, entity_lag, vruntime_eligible, pick_eevdf, update_deadline,
 * did_preempt_short); the sched_prio_to_weight / sched_prio_to_wmult tables
 * of core.c; docs/schedulers/cfs.md (§2: the weights) and eevdf.md.
 *
 * Task groups (CONFIG_FAIR_GROUP_SCHED, fair_group.c): the root cfs_rq is
 * each CPU's fair_rq; a group has a cfs_rq and a group entity per CPU
 * (fair_cpu.grp), and every cfs_rq-level function takes a cfs_rq id q
 * (FAIR_Q: the CPU, and the group in the upper bits; q == cpu for the
 * root) and an entity id (a task slot, or FAIR_GSE + q for the entity of
 * group cfs_rq q).  Without groups every entity is a task on its CPU's
 * root cfs_rq and nothing else changes.
 *
 * Simplifications, stated once: no PELT -- where the kernel uses load_avg
 * (calc_group_shares' tg->load_avg and cfs_rq->avg.load_avg) the
 * instantaneous load.weight is used, so a group's entity weighs
 * tg->shares * (this CPU's group load) / (the group's load on every CPU),
 * clamped to MIN_SHARES .. tg->shares (exactly tg->shares for a group that
 * lives on one CPU), an emptied group's entity falls to MIN_SHARES at once
 * instead of decaying, and the balancer weighs runqueues by their
 * instantaneous load.weight; a group entity's weight is kept in the 1024
 * scale (the kernel's scale_load keeps 10 more bits); at most
 * FAIR_MAX_GROUPS - 1 groups; no SCHED_BATCH / SCHED_IDLE, no
 * bandwidth control, no HRTICK (slices end at ticks, as with the feature's
 * default off); the time a context switch costs (switch_cost_ns) is charged
 * to the task that runs, as rq_clock_task would not. */
#ifndef PS_FAIR_COMMON_H
#define PS_FAIR_COMMON_H
#include <stdint.h>

#include "engine_internal.h"
#include "fair_rbtree.h"

#define FAIR_MAX_PRIO 140      /* MAX_PRIO: the idle task's prio */
#define FAIR_MAX_RT_PRIO 100
#define NICE_0_LOAD 1024       /* scale_load_down(NICE_0_LOAD) on 64-bit kernels */
#define WMULT_CONST (~0U)
#define WMULT_SHIFT 32

/* The sched_entity of a task (psTask.priv).  Weights are in the kernel's
 * 1024 scale (scale_load_down of se->load.weight, what avg_vruntime and
 * __calc_delta use).  vruntime and deadline are u64 and compared through
 * (s64) differences, as the kernel does, so they may wrap. */
typedef struct fair_se {
  fair_node node;                 /* first: the tree links (fair_rbtree.h) */
  uint64_t vruntime;
  uint64_t deadline;              /* EEVDF: vd_i */
  uint64_t min_vruntime;          /* EEVDF: smallest vruntime of its subtree (augment) */
  int64_t vlag;                   /* EEVDF: V - v_i saved at dequeue (virtual ns) */
  uint64_t slice;                 /* EEVDF: r_i, ns */
  uint64_t sum_exec_runtime;
  uint64_t exec_start;            /* last update_curr while it ran; 0 after a migration */
  uint64_t list_stamp;            /* its place in rq->cfs_tasks (most recent: largest) */
  int32_t list_prev, list_next;   /* rq->cfs_tasks' links (se->group_node): task slots toward
                                   * the head (most recent) and the tail, -1 at the ends */
  uint32_t weight;                /* sched_prio_to_weight[nice + 20] */
  int32_t custom_slice;           /* EEVDF 6.12: slice set by sched_attr.sched_runtime */
  int32_t sched_delayed;          /* EEVDF 6.12: asleep, dequeue delayed (DELAY_DEQUEUE) */
  int32_t rel_deadline;           /* EEVDF 6.12: deadline holds deadline - vruntime */
} fair_se;

/* The per-CPU runqueue: the cfs_rq, a real-time list beside it, and the
 * balancer's state; a group's cfs_rq is one too (its real-time and
 * balancer fields unused). */
typedef struct fair_rq {
  int32_t root, leftmost;         /* tasks_timeline */
  int32_t curr;                   /* cfs_rq->curr (task index), -1 none */
  int32_t curr_on_rq;             /* curr->on_rq */
  int32_t next, last, skip;       /* CFS buddies, -1 none */
  uint32_t nr_running;            /* cfs_rq->nr_running: queued entities, curr and delayed ones included */
  uint32_t nr_delayed;            /* of them, delayed (6.12) */
  uint64_t load;                  /* cfs_rq->load.weight, 1024 scale */
  uint64_t min_vruntime;
  int64_t avg_vruntime;           /* \Sum (v_i - min_vruntime) * w_i over the tree */
  int64_t avg_load;               /* \Sum w_i over the tree */
  uint64_t prev_sum_exec_runtime; /* curr's sum_exec_runtime when it was picked */
  uint64_t protect_deadline;      /* RUN_TO_PARITY: curr's deadline when picked (see fair_protected) */
  int32_t protect;                /* 1 while that copy stands */
  /* the real-time class: queued RT tasks, best first, FIFO among equals */
  int32_t rt_head, rt_tail;
  uint32_t rt_nr_running;
  uint64_t list_seq;              /* stamps for list_stamp */
  /* rq->cfs_tasks, a CPU's (root cfs_rq's) list of its fair tasks, queued
   * or delayed, running one included: task slots, head the most recently
   * enqueued or picked (stamps decrease from head to tail), -1 when empty;
   * unused (-1) in a group's cfs_rq */
  int32_t cfs_head, cfs_tail;
  /* the load balancer (balance_fair.c) */
  uint64_t next_balance;          /* jiffies of the next periodic balance */
  uint32_t balance_interval;      /* ms: sd->balance_interval */
  uint32_t nr_balance_failed;
  int64_t nr_balance_pulls;       /* tasks this CPU pulled */
  int64_t nr_wakeup_migrations;   /* wakeups and forks placed on this CPU from another */
  /* the root's rq->cfs.h_nr_running less its own runnable entities: the
   * tasks queued below group entities less those entities (fair_group.c
   * keeps it; 0 without groups) */
  int32_t h_adj;
  /* the watch's last look at this cfs_rq (fair_watch.c, unchanged): its
   * list_seq, nr_running, load, curr and curr's vruntime then */
  int32_t watch_curr;
  uint64_t watch_seq, watch_load, watch_curr_v;
  uint32_t watch_nr;
  /* a CPU's root: fair_rq_nr_running() >= 2 when last looked at
   * (fair_overload_sync), as counted in CPU 0's nr_overloaded */
  int32_t overloaded;
} fair_rq;

/* ---- task groups (fair_group.c) ---- */
#define FAIR_MAX_GROUPS 16         /* task groups, the root (0) included */
#define FAIR_GSE 0x40000000        /* entity ids from here: FAIR_GSE + q, the entity of cfs_rq q */
#define FAIR_MIN_SHARES 2          /* MIN_SHARES */
#define FAIR_MAX_SHARES 262144     /* MAX_SHARES: 1 << 18 */
/* cfs_rq id of group g's cfs_rq on cpu (g 0: the root) */
static inline int FAIR_Q(int cpu, int g) { return cpu | (g << 16); }
static inline int fair_q_cpu(int q) { return q & 0xffff; }
static inline int fair_q_group(int q) { return q >> 16; }

/* struct task_group: the hierarchy and cpu.shares (1024 scale), in CPU 0's area */
typedef struct fair_tg {
  int32_t parent;                 /* -1 for the root and for a free slot */
  int32_t shares;                 /* tg->shares, scale_load_down: 2 .. 262144 */
  int32_t depth;                  /* se->depth of its entities: 1 below the root */
  int32_t used;                   /* 1 once made */
} fair_tg;

/* A group's per-CPU part: its cfs_rq (tg->cfs_rq[cpu]) and its entity (tg->se[cpu]). */
typedef struct fair_grq {
  fair_rq cfs;
  fair_se se;
  int32_t on_rq;                  /* se->on_rq */
  int32_t pad;
} fair_grq;

/* The policy's runqueue area of a CPU: grp[0].cfs, first, is the root
 * cfs_rq (FRQ; grp[0].se is unused), grp[g] group g's part. */
typedef struct fair_cpu {
  fair_grq grp[FAIR_MAX_GROUPS];
  int32_t ngroups;                /* CPU 0: groups made (slots 1 .. ngroups - 1 used) */
  int32_t spawn_group;            /* CPU 0: the group of tasks spawned from Python */
  /* CPU 0: the runqueues with two runnable tasks or more (fair_rq.overloaded);
   * while none has, find_busiest_queue can find nothing and the balancer
   * skips its scan of every CPU */
  int32_t nr_overloaded;
  fair_tg tg[FAIR_MAX_GROUPS];    /* CPU 0: the task groups; slot 0 the root */
} fair_cpu;

/* enqueue/dequeue flags (kernel/sched/sched.h) */
enum {
  DEQUEUE_SLEEP = 0x01,
  DEQUEUE_SAVE = 0x02,
  DEQUEUE_MOVE = 0x04,
  DEQUEUE_SPECIAL = 0x10,  /* a special task state (TASK_DEAD): never delayed */
  DEQUEUE_DELAYED = 0x200,
  ENQUEUE_WAKEUP = 0x01,
  ENQUEUE_RESTORE = 0x02,
  ENQUEUE_MOVE = 0x04,
  ENQUEUE_INITIAL = 0x80,
  ENQUEUE_MIGRATED = 0x100,
};
/* wake flags */
enum { WF_SYNC = 0x10, WF_FORK = 0x08 };

/* How a member implements the class (the parts of its fair.c that differ).
 * q is a cfs_rq id (FAIR_Q), i an entity id (a task slot or a group
 * entity); the walks over the hierarchy (for_each_sched_entity) are
 * fair_group.c's and call these per level. */
typedef struct fair_class {
  int key;  /* FAIR_KEY_*: what its tree is sorted by */
  /* update_curr() of cfs_rq q, at d->now_ns */
  void (*update_curr)(const psModel *m, psData *d, int q);
  /* enqueue_entity(cfs_rq, se, flags) */
  void (*enqueue_entity)(const psModel *m, psData *d, int q, int32_t i, int flags);
  /* dequeue_entity(cfs_rq, se, flags); 0 when it only delayed the dequeue */
  int (*dequeue_entity)(const psModel *m, psData *d, int q, int32_t i, int flags);
  /* pick_next_entity with cfs_rq->curr considered: an entity id, or -1
   * when what it picked was a delayed entity it then dequeued (pick again) */
  int32_t (*pick_next_entity)(const psModel *m, psData *d, int q);
  /* set_next_entity / put_prev_entity */
  void (*set_next_entity)(const psModel *m, psData *d, int q, int32_t i);
  void (*put_prev_entity)(const psModel *m, psData *d, int q, int32_t i);
  /* check_preempt_wakeup for a fair task p just enqueued on a CPU running
   * a fair task; 1 to reschedule */
  int (*check_preempt_wakeup)(const psModel *m, psData *d, psTask *p, int wake_flags);
  /* entity_tick of cfs_rq q's curr (task_tick_fair calls it at each level) */
  void (*entity_tick)(const psModel *m, psData *d, int q);
  /* yield_task_fair (sys_sched_yield then calls schedule()) */
  void (*yield_task)(const psModel *m, psData *d, psTask *p);
  /* task_fork_fair and wake_up_new_task's enqueue: place the new task p
   * (its se fresh, p->cpu chosen) and enqueue it; parent is the forking
   * task (running on its own CPU) or NULL for a task spawned from Python */
  void (*task_new)(const psModel *m, psData *d, psTask *p, psTask *parent);
  /* a sleeping task moves from CPU `from` to p->cpu as it is woken there
   * (migrate_task_rq_fair for TASK_WAKING); returns the extra enqueue flags */
  int (*migrate_wakee)(const psModel *m, psData *d, psTask *p, int from);
  /* reweight_entity(cfs_rq q, se i, w): for a task off its queue
   * (set_user_nice between dequeue and enqueue) or a group entity, queued
   * or not (update_cfs_group) */
  void (*reweight_entity)(const psModel *m, psData *d, int q, int32_t i, uint32_t w);
  /* a task leaves the fair class (switched_from_fair) or joins it
   * (switched_to_fair) while not queued; may be NULL */
  void (*detach)(const psModel *m, psData *d, psTask *p);
  void (*attach)(const psModel *m, psData *d, psTask *p);
  /* requeue_delayed_entity of entity i on cfs_rq q (a delayed task woken,
   * or a delayed group entity whose group gets a task); NULL when the
   * member never delays */
  void (*requeue_delayed)(const psModel *m, psData *d, int q, int32_t i);
  /* set_next_buddy(se) as a sleeping task's group stays queued
   * (dequeue_entities); NULL when the member's pick reads no next buddy */
  void (*set_next_buddy)(const psModel *m, psData *d, int32_t i);
} fair_class;

/* ---- the hierarchy (fair_group.c) ---- */
/* the group entity whose cfs_rq is q (group_cfs_rq's owner), -1 for a root cfs_rq */
static inline int32_t fair_group_entity(int q) { return fair_q_group(q) ? FAIR_GSE + q : -1; }
/* parent_entity(se): -1 at the root */
int32_t fair_parent_entity(const psModel *m, const psData *d, int32_t i);
/* se->on_rq of a group entity (0 for a task: the members ask only of groups) */
int fair_group_on_rq(const psModel *m, const psData *d, int32_t i);
void fair_set_on_rq(const psModel *m, psData *d, int32_t i, int on);
/* find_matching_se: se and pse moved up to one cfs_rq, whose id it returns */
int fair_find_matching_se(const psModel *m, const psData *d, int32_t *se, int32_t *pse);
/* update_cfs_group(se): a group entity's weight from calc_group_shares,
 * reweighted if it changed; nothing for a task (or -1) */
void fair_update_cfs_group(const psModel *m, psData *d, int32_t i);
/* enqueue_task_fair: task p (p->cpu set) and its groups' entities up to
 * the first one already queued (fair_enqueue_task, below, with the
 * machine's groups) */
void fair_enqueue_walk(const psModel *m, psData *d, psTask *p, int flags);
/* dequeue_entities from entity i (a task, or a delayed group entity
 * picked): up while each cfs_rq empties; 0 when a task's dequeue was
 * only delayed */
int fair_dequeue_entities(const psModel *m, psData *d, int32_t i, int flags);
/* ttwu_runnable's requeue of a delayed task (enqueue_task with
 * ENQUEUE_DELAYED), with the machine's groups */
void fair_requeue_walk(const psModel *m, psData *d, psTask *p);
/* pick_next_task_fair's entity choice on cpu: down the groups, then
 * set_next_entity / put_prev_entity on the levels that change; the task's
 * slot, or -1 when a delayed entity was flushed (pick again) */
int32_t fair_pick_walk(const psModel *m, psData *d, int cpu);
/* put_prev_task_fair: every level's cfs_rq->curr of cpu, bottom up */
void fair_put_prev_walk(const psModel *m, psData *d, int cpu);
/* set_next_task_fair: task p's entity and its groups' as each level's curr */
void fair_set_next_task(const psModel *m, psData *d, psTask *p);
/* task_tick_fair: entity_tick at each level of cpu's running task */
void fair_tick_walk(const psModel *m, psData *d, int cpu);
/* psHooks.control: task groups made, moved, weighed and read from Python */
int fair_control(const psModel *m, psData *d, int op, const int64_t *args, int nargs, int64_t *out,
                 char *err, int errlen);
/* fair_invariants.c's part for the groups: every group cfs_rq's tree and
 * sums, every group entity's place, the shares */
int fair_check_groups(const psModel *m, const psData *d, int64_t *intree, int64_t *gse_in_trees,
                      char *err, int errlen);

static inline const fair_class *fair_class_of(const psModel *m) {
  return (const fair_class *)m->policy->family;
}
static inline fair_se *SE(psTask *p) { return (fair_se *)p->priv; }
static inline const fair_se *SEc(const psTask *p) { return (const fair_se *)p->priv; }
static inline fair_cpu *FCPU(const psModel *m, const psData *d, int cpu) {
  return (fair_cpu *)ps_rq(m, d, cpu);
}
static inline fair_rq *FRQ(const psModel *m, const psData *d, int cpu) {
  return (fair_rq *)ps_rq(m, d, cpu);
}
/* the cfs_rq of id q (the root's, FRQ, without a group: measured, a test
 * costs fewer instructions than the index arithmetic) */
static inline fair_rq *CFSQ(const psModel *m, const psData *d, int q) {
  if (__builtin_expect(!fair_q_group(q), 1)) return FRQ(m, d, q);
  return &FCPU(m, d, fair_q_cpu(q))->grp[fair_q_group(q)].cfs;
}
/* a group's entity, FAIR_GSE + the q of its own cfs_rq, in the runqueue
 * areas at rq of rq_size bytes each (arithmetic only: no call, so that the
 * task path, which every hot function takes, stays as short as before) */
static inline fair_se *fair_group_se_at(unsigned char *rq, size_t rq_size, int32_t i) {
  int q = i - FAIR_GSE;
  fair_cpu *c = (fair_cpu *)(rq + (size_t)fair_q_cpu(q) * rq_size);
  return &c->grp[fair_q_group(q)].se;
}
/* the entity of id i: a task's, or a group's */
static inline fair_se *fair_ent(const psModel *m, const psData *d, int32_t i) {
  if (__builtin_expect(i < FAIR_GSE, 1)) return (fair_se *)d->task[i].priv;
  return fair_group_se_at(d->rq, m->rq_stride, i);
}
static inline int fair_is_group(int32_t i) { return i >= FAIR_GSE; }
/* a valid entity id (for checks of a state that may be damaged) */
static inline int fair_ent_ok(const psModel *m, const psData *d, int32_t i) {
  if (i >= 0 && i < d->ntask) return 1;
  if (i < FAIR_GSE) return 0;
  int q = i - FAIR_GSE;
  return fair_q_cpu(q) < m->ncpu && fair_q_group(q) >= 1 && fair_q_group(q) < FAIR_MAX_GROUPS;
}
/* cfs_rq_of(se): the cfs_rq an entity is queued on */
static inline int fair_cfs_rq_of(const psModel *m, const psData *d, int32_t i) {
  if (i < FAIR_GSE) return FAIR_Q(d->task[i].cpu, SEc(&d->task[i])->node.group);
  int q = i - FAIR_GSE;
  return FAIR_Q(fair_q_cpu(q), fair_ent(m, d, i)->node.group);
}
/* the task groups made, the root included (1 without groups) */
static inline int fair_ngroups(const psModel *m, const psData *d) {
  int n = FCPU(m, d, 0)->ngroups;
  return n < 1 ? 1 : n;
}
/* the task the CPU of cfs_rq q runs (for the logs of a group entity's expiry) */
static inline psTask *fair_task_of(psData *d, int q, int32_t i) {
  return i < FAIR_GSE ? &d->task[i] : ps_curr(d, fair_q_cpu(q));
}
static inline psTask *fair_task(psData *d, int32_t i) { return &d->task[i]; }
static inline int fair_rt(const psTask *p) { return p->policy != PS_SCHED_NORMAL; }
static inline fair_tree fair_tree_of(const psModel *m, psData *d, int q) {
  fair_rq *rq = CFSQ(m, d, q);
  /* no group entity without groups: the tree takes its task-only path */
  fair_tree t = {d->task, fair_ngroups(m, d) > 1 ? d->rq : NULL, m->rq_stride, &rq->root,
                 &rq->leftmost, fair_class_of(m)->key};
  return t;
}
/* the walks of fair_group.c, each a single call of the member's without
 * groups (the machine's every run before it made one) */
static inline void fair_enqueue_task(const psModel *m, psData *d, psTask *p, int flags) {
  if (fair_ngroups(m, d) > 1)
    fair_enqueue_walk(m, d, p, flags);
  else
    fair_class_of(m)->enqueue_entity(m, d, p->cpu, ps_index(d, p), flags);
}
static inline int fair_dequeue_task(const psModel *m, psData *d, psTask *p, int flags) {
  if (fair_ngroups(m, d) > 1) return fair_dequeue_entities(m, d, ps_index(d, p), flags);
  return fair_class_of(m)->dequeue_entity(m, d, p->cpu, ps_index(d, p), flags);
}
static inline int32_t fair_pick_task(const psModel *m, psData *d, int cpu) {
  if (fair_ngroups(m, d) > 1) return fair_pick_walk(m, d, cpu);
  const fair_class *c = fair_class_of(m);
  fair_rq *rq = FRQ(m, d, cpu);
  int32_t i = c->pick_next_entity(m, d, cpu);
  if (i >= 0 && i != rq->curr) {
    if (rq->curr >= 0) c->put_prev_entity(m, d, cpu, rq->curr);
    c->set_next_entity(m, d, cpu, i);
  }
  return i;
}
static inline void fair_put_prev_task(const psModel *m, psData *d, int cpu) {
  fair_rq *rq = FRQ(m, d, cpu);
  if (fair_ngroups(m, d) > 1)
    fair_put_prev_walk(m, d, cpu);
  else if (rq->curr >= 0)
    fair_class_of(m)->put_prev_entity(m, d, cpu, rq->curr);
}
static inline void fair_tick_task(const psModel *m, psData *d, int cpu) {
  if (fair_ngroups(m, d) > 1)
    fair_tick_walk(m, d, cpu);
  else
    fair_class_of(m)->entity_tick(m, d, cpu);
}
static inline void fair_requeue_task(const psModel *m, psData *d, psTask *p) {
  if (fair_ngroups(m, d) > 1)
    fair_requeue_walk(m, d, p);
  else
    fair_class_of(m)->requeue_delayed(m, d, p->cpu, ps_index(d, p));
}

/* ---- arithmetic (kernel/sched/core.c, fair.c) ---- */
extern const int sched_prio_to_weight[40];
extern const uint32_t sched_prio_to_wmult[40];
static inline uint32_t fair_nice_weight(int nice) { return (uint32_t)sched_prio_to_weight[nice + 20]; }
/* sched_prio_to_wmult[] of a task weight (set_load_weight's inv_weight) */
uint32_t fair_weight_wmult(uint32_t weight);
/* __update_inv_weight: WMULT_CONST / w for a runqueue's summed weight */
uint32_t fair_inv_weight(uint64_t w);
/* __calc_delta(delta_exec, weight, lw): delta_exec * weight / lw.weight in
 * wmult fixed point, lw given as its weight's inverse */
uint64_t fair_calc_delta(uint64_t delta_exec, uint64_t weight, uint32_t lw_inv);
/* calc_delta_fair(delta, se): delta * NICE_0_LOAD / w */
uint64_t fair_calc_delta_fair(uint64_t delta, uint32_t weight);
/* get_update_sysctl_factor(): SCHED_TUNABLESCALING_NONE 0 -> 1, LOG 1 ->
 * 1 + ilog2(min(ncpus, 8)), LINEAR 2 -> min(ncpus, 8) */
int fair_sysctl_factor(int ncpus, int scaling);

/* The formulas both fair policies declare (ps.formula): the weight tables,
 * __calc_delta and the sysctl factor, as the first rows of their tables. */
int64_t fair_f_weight(const psModel *m, const int64_t *a);
int64_t fair_f_wmult(const psModel *m, const int64_t *a);
int64_t fair_f_calc_delta_fair(const psModel *m, const int64_t *a);
int64_t fair_f_factor(const psModel *m, const int64_t *a);
#define FAIR_COMMON_FORMULAS                                                                      \
  {"weight", "nice", 1, {-20}, {19}, fair_f_weight, "sched_prio_to_weight[nice + 20]"},            \
  {"wmult", "nice", 1, {-20}, {19}, fair_f_wmult, "sched_prio_to_wmult[nice + 20] = 2^32 / weight"}, \
  {"calc_delta_fair", "delta_ns, nice", 2, {0, -20}, {1000000000000LL, 19}, fair_f_calc_delta_fair,  \
   "delta * 1024 / weight in wmult fixed point (__calc_delta)"},                                   \
  {"sysctl_factor", "ncpus, scaling", 2, {1, 0}, {4096, 2}, fair_f_factor,                         \
   "get_update_sysctl_factor(): scaling 0 none, 1 log, 2 linear"}

/* (s64)(a - b) comparisons of u64 virtual times */
static inline int64_t vdiff(uint64_t a, uint64_t b) { return (int64_t)(a - b); }
static inline uint64_t max_vruntime(uint64_t max, uint64_t v) { return vdiff(v, max) > 0 ? v : max; }
static inline uint64_t min_vruntime_of(uint64_t min, uint64_t v) { return vdiff(v, min) < 0 ? v : min; }
/* s64 products and sums as the kernel computes them (it wraps; C must not) */
static inline int64_t s64_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t s64_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

/* ---- the cfs_rq ---- */
/* entity_key(cfs_rq, se): v_i - min_vruntime, the key of avg_vruntime's sums */
static inline int64_t entity_key(const fair_rq *rq, const fair_se *se) {
  return vdiff(se->vruntime, rq->min_vruntime);
}
/* __enqueue_entity / __dequeue_entity: the tree, and (EEVDF) avg_vruntime's sums */
void fair_tree_enqueue(const psModel *m, psData *d, int q, int32_t i);
void fair_tree_dequeue(const psModel *m, psData *d, int q, int32_t i);
/* account_entity_enqueue / _dequeue: load and nr_running, and rq->cfs_tasks */
void fair_account_enqueue(const psModel *m, psData *d, int q, int32_t i);
void fair_account_dequeue(const psModel *m, psData *d, int q, int32_t i);
/* set_next_entity's list_move(&se->group_node, &rq->cfs_tasks): task i,
 * picked on cpu, to the head of that CPU's list */
void fair_cfs_tasks_move(const psModel *m, psData *d, int cpu, int32_t i);
/* avg_vruntime(cfs_rq): V, curr counted while on_rq, floored */
uint64_t fair_avg_vruntime(const psModel *m, const psData *d, int q);
/* vruntime_eligible(cfs_rq, v): V >= v without the division's rounding */
int fair_vruntime_eligible(const psModel *m, const psData *d, int q, uint64_t vruntime);
/* update_min_vruntime(cfs_rq); with_avg: also shift avg_vruntime's keys
 * (EEVDF's __update_min_vruntime) */
void fair_update_min_vruntime(const psModel *m, psData *d, int q, int with_avg);
/* the smallest vruntime in the tree: leftmost's (by vruntime) or the root's augment */
int32_t fair_first(const fair_rq *rq);
/* RUN_TO_PARITY's slice protection of curr: the kernel stashes curr's
 * deadline in se->vlag when it picks it (the HACK in set_next_entity) and
 * compares later; here the copy lives in the runqueue so that vlag always
 * reads as a lag, and every place the kernel overwrites curr's vlag ends
 * the protection instead */
static inline int fair_protected(const fair_rq *rq, const fair_se *curr) {
  return rq->protect && rq->protect_deadline == curr->deadline;
}
static inline void fair_set_protect(fair_rq *rq, const fair_se *se) {
  rq->protect = 1;
  rq->protect_deadline = se->deadline;
}

/* ---- shared hooks (fair_hooks.c; fair_check is fair_invariants.c's) ---- */
/* a fresh sched_entity for task p (__sched_fork), weight from its nice */
void fair_se_init(psTask *p);
void fair_init_rq(const psModel *m, psData *d, int cpu);
/* an RT task joins its CPU's RT list (the sched_ext class's fallback
 * hands its RT tasks over so) */
void fair_rt_enqueue(const psModel *m, psData *d, psTask *p);
int fair_task_spawn(const psModel *m, psData *d, psTask *p);
void fair_task_fork(const psModel *m, psData *d, psTask *parent, psTask *child);
int fair_wakeup(const psModel *m, psData *d, psTask *p, psTask *waker, int sync);
void fair_deactivate(const psModel *m, psData *d, psTask *prev);
psTask *fair_pick_next(const psModel *m, psData *d, int cpu);
void fair_tick(const psModel *m, psData *d, int cpu);
int64_t fair_tick_batch(const psModel *m, psData *d, int cpu, int64_t k, int apply);
void fair_yield(const psModel *m, psData *d, psTask *p);
void fair_set_nice(const psModel *m, psData *d, psTask *p, int nice);
void fair_set_scheduler(const psModel *m, psData *d, psTask *p, int policy, int rt_priority);
void fair_migrate(const psModel *m, psData *d, psTask *p, int dest);
int fair_dump(const psModel *m, const psData *d, int cpu, int32_t *out, int max);
int fair_check(const psModel *m, const psData *d, char *err, int errlen);
extern const psColumn fair_queue_columns[3];
/* fair_watch.c: psHooks.watch, every queued task's lag after an instant;
 * and entity i's lag where the kernel reads it as it leaves cfs_rq q or is
 * placed again (EEVDF's update_entity_lag, v its V then; CFS's
 * dequeue_entity, v unused) -- both only while a watch is on */
void fair_watch(const psModel *m, psData *d);
void fair_watch_entity_lag(const psModel *m, psData *d, int q, int32_t i, uint64_t v);

#define FAIR_HOOKS                                                                         \
  .init_rq = fair_init_rq, .task_spawn = fair_task_spawn, .task_fork = fair_task_fork,     \
  .wakeup = fair_wakeup, .deactivate = fair_deactivate,                                    \
  .pick_next = fair_pick_next, .tick = fair_tick, .tick_batch = fair_tick_batch,          \
  .yield = fair_yield,                                                                     \
  .set_nice = fair_set_nice, .set_scheduler = fair_set_scheduler, .migrate = fair_migrate, \
  .dump = fair_dump, .check = fair_check, .control = fair_control, .watch = fair_watch
#define FAIR_QUEUE_COLUMNS .queue_columns = fair_queue_columns, .nqueue_columns = 3

/* check_preempt_curr after p was enqueued on p->cpu: a real-time task
 * preempts a fair or lower RT one, a fair task goes to the member's
 * check_preempt_wakeup, anything preempts the idle task.  1 to reschedule. */
int fair_check_preempt_curr(const psModel *m, psData *d, psTask *p, int wake_flags);

/* The parameters every member reads, by index in its table: set by the
 * member's configure hook into the derived constants below. */
typedef struct fair_derived {
  int64_t factor;              /* get_update_sysctl_factor() for this machine */
  int64_t migration_cost;      /* sysctl_sched_migration_cost, ns */
  int64_t rr_timeslice;        /* sched_rr_timeslice: RR_TIMESLICE = 100 ms in ticks */
  int64_t balance_min_interval;/* sd->min_interval: sd_weight ms */
  int64_t busy_factor;         /* sd->busy_factor */
  int64_t imbalance_pct;       /* sd->imbalance_pct */
  int64_t cache_nice_tries;    /* sd->cache_nice_tries */
  int64_t balance;             /* 1: the load balancer runs (SMP) */
  int64_t member[16];          /* the member's own constants (its sysctls) */
} fair_derived;

static inline const fair_derived *FD(const psModel *m) { return (const fair_derived *)m->derived; }

/* The balancer's parameters, in both members' tables. */
#define FAIR_BALANCE_PARAMS(X)                                                                     \
  X(sched_migration_cost, 500000, 0, 1000000000, 0, "ns",                                         \
    "sysctl_sched_migration_cost: a task that ran this recently is cache-hot and is not pulled "  \
    "by the balancer (unless balancing failed more than cache_nice_tries times)")                 \
  X(load_balance, 1, 0, 1, 0, "bool",                                                             \
    "the SMP load balancer model (balance_fair.c): periodic pulls by weighted load, newly idle "  \
    "pulls; 0: tasks stay where wakeups and forks put them")                                      \
  X(busy_factor, 16, 1, 1000, 0, "",                                                              \
    "sd->busy_factor: a busy CPU balances busy_factor times less often than an idle one")        \
  X(imbalance_pct, 117, 100, 1000, 0, "%",                                                        \
    "sd->imbalance_pct of the LLC domain: a busy CPU pulls only when the busiest runqueue's "     \
    "load exceeds its own by this much")

/* Task groups' parameter, in both members' tables (read by pysched.groups). */
#define FAIR_GROUP_PARAMS(X)                                                                       \
  X(autogroup, 0, 0, 1, 0, "bool",                                                                \
    "sched_autogroup_enabled (CONFIG_SCHED_AUTOGROUP): 1, every session (spawn(session=...)) "    \
    "gets a task group of its own, 1024 shares at nice 0; 0, sessions share the root group (a "   \
    "distribution kernel's default is 1)")

/* How sleeps end, in both members' tables; the engine reads them by name
 * (psModel.hrtimer_param, syscall.c).  2.6.16 on, nanosleep and
 * clock_nanosleep are hrtimers (kernel/time/hrtimer.c, hrtimer_nanosleep),
 * not jiffy timers. */
#define FAIR_TIMER_PARAMS(X)                                                                       \
  X(hrtimer_sleep, 1, 0, 1, 0, "bool",                                                            \
    "1: a sleep is an hrtimer (hrtimer_nanosleep) and ends at its nanosecond plus the task's "    \
    "timer slack; 0: a jiffy timer, ending at the first tick at least its length after it began") \
  X(timer_slack_ns, 50000, 0, 1000000000, 0, "ns",                                                \
    "current->timer_slack_ns, 50 us by default (init_task): an hrtimer sleep of a normal task "   \
    "ends this much after its requested time (the range's hard expiry); 0 for SCHED_FIFO/RR")

/* Fill the shared constants (configure) from the parameter at index p0,
 * the first of FAIR_BALANCE_PARAMS in the member's table. */
void fair_configure_common(psModel *m, int p0);

/* balance_fair.c */
/* select_task_rq_fair for a wakeup (waker may be NULL) or a fork (parent
 * set, fork 1): the CPU to enqueue p on */
int fair_select_task_rq(const psModel *m, psData *d, psTask *p, psTask *waker, int sync, int fork);
/* select_task_rq_rt: a CPU whose current task p would preempt */
int fair_select_task_rq_rt(const psModel *m, psData *d, psTask *p);
/* trigger_load_balance at the end of the tick of `cpu` */
void fair_trigger_load_balance(const psModel *m, psData *d, int cpu);
/* newidle_balance: cpu found nothing to run; 1 if it pulled a task */
int fair_newidle_balance(const psModel *m, psData *d, int cpu);
/* Move the queued, not running, fair task p to CPU dest as
 * detach_task/attach_task do (dequeue without sleep, enqueue migrated),
 * with a preemption check on dest. */
void fair_move_queued(const psModel *m, psData *d, psTask *p, int dest);
/* p->cpu = dest for a task placed or woken on another CPU, counted and logged */
void fair_set_task_cpu(const psModel *m, psData *d, psTask *p, int dest);

/* Number of runnable tasks of cpu's runqueue, both classes, delayed
 * entities excluded (rq->nr_running). */
static inline uint32_t fair_rq_nr_running(const fair_rq *rq) {
  return rq->nr_running - rq->nr_delayed + rq->rt_nr_running + (uint32_t)rq->h_adj;
}

/* After a change of what fair_rq_nr_running() sums on cpu's root: its
 * overloaded flag and the count of such runqueues brought up to date.
 * Idempotent, so every place that changes a term calls it, whichever
 * cfs_rq it changed (a group's reaches the root through h_adj, whose
 * update calls it again). */
static inline void fair_overload_sync(const psModel *m, psData *d, int cpu) {
  fair_rq *rq = FRQ(m, d, cpu);
  int32_t now = fair_rq_nr_running(rq) >= 2;
  if (now == rq->overloaded) return;
  FCPU(m, d, 0)->nr_overloaded += now - rq->overloaded;
  rq->overloaded = now;
}

#endif
