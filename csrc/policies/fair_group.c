/* Task groups for the fair schedulers (fair_common.h): the walks over the
 * hierarchy that kernel/sched/fair.c does with CONFIG_FAIR_GROUP_SCHED
 * (for_each_sched_entity), the group entities' weights (calc_group_shares,
 * update_cfs_group) and the task groups themselves (sched_create_group,
 * sched_group_set_shares, sched_move_task), made from Python through the
 * control hook.  The members' per-level functions (enqueue_entity ...) are
 * policy_cfs.c's (6.5) and policy_eevdf.c's (6.12).
 *
 * Sources: 6.12.y's fair.c (enqueue_task_fair with the group entity's
 * slice from cfs_rq_min_slice, dequeue_entities, pick_next_task_fair's
 * loop, put_prev_task_fair, set_next_task_fair, task_tick_fair,
 * find_matching_se, calc_group_shares, update_cfs_group, reweight_entity,
 * init_tg_cfs_entry, __sched_group_set_shares, task_change_group_fair),
 * 6.5's dequeue_task_fair (set_next_buddy of a sleeper's group) and
 * detach/attach_task_cfs_rq, core.c's sched_move_task.
 *
 * Without a group every task's entity is on its CPU's root cfs_rq and each
 * walk is the one call the hooks made before groups existed: the paths
 * below test for that first, so a run without groups is unchanged. */
#include <stdio.h>
#include <string.h>

#include "fair_common.h"

static fair_tg *TG(const psModel *m, const psData *d, int g) { return &FCPU(m, d, 0)->tg[g]; }
static int ngroups(const psModel *m, const psData *d) { return fair_ngroups(m, d); }
static fair_grq *GRQ(const psModel *m, const psData *d, int q) {
  return &FCPU(m, d, fair_q_cpu(q))->grp[fair_q_group(q)];
}
static int eevdf(const psModel *m) { return fair_class_of(m)->key == FAIR_KEY_DEADLINE; }

int32_t fair_parent_entity(const psModel *m, const psData *d, int32_t i) {
  return fair_group_entity(fair_cfs_rq_of(m, d, i));
}

int fair_group_on_rq(const psModel *m, const psData *d, int32_t i) {
  return fair_is_group(i) && GRQ(m, d, i - FAIR_GSE)->on_rq;
}

void fair_set_on_rq(const psModel *m, psData *d, int32_t i, int on) {
  if (fair_is_group(i)) GRQ(m, d, i - FAIR_GSE)->on_rq = on;
}

/* se->depth: 0 on the root cfs_rq */
static int depth(const psModel *m, const psData *d, int32_t i) {
  int g = fair_q_group(fair_cfs_rq_of(m, d, i));
  return g ? TG(m, d, g)->depth + 1 : 0;
}

int fair_find_matching_se(const psModel *m, const psData *d, int32_t *se, int32_t *pse) {
  if (ngroups(m, d) <= 1) return d->task[*pse].cpu;
  int sd = depth(m, d, *se), pd = depth(m, d, *pse);
  for (; sd > pd; sd--) *se = fair_parent_entity(m, d, *se);
  for (; pd > sd; pd--) *pse = fair_parent_entity(m, d, *pse);
  while (fair_cfs_rq_of(m, d, *se) != fair_cfs_rq_of(m, d, *pse)) {
    *se = fair_parent_entity(m, d, *se);
    *pse = fair_parent_entity(m, d, *pse);
  }
  return fair_cfs_rq_of(m, d, *se);
}

/* calc_group_shares(cfs_rq q): tg->shares * load / tg_weight, clamped to
 * MIN_SHARES .. tg->shares, with the instantaneous load.weight for both
 * load_avg terms (tg_weight = the group's load on every CPU) */
static uint32_t calc_group_shares(const psModel *m, const psData *d, int q) {
  int g = fair_q_group(q);
  int64_t tg_shares = TG(m, d, g)->shares;
  int64_t load = (int64_t)CFSQ(m, d, q)->load, tg_weight = 0;
  for (int c = 0; c < m->ncpu; c++) tg_weight += (int64_t)CFSQ(m, d, FAIR_Q(c, g))->load;
  int64_t shares = tg_shares * load;
  if (tg_weight) shares /= tg_weight;
  if (shares < FAIR_MIN_SHARES) shares = FAIR_MIN_SHARES;
  if (shares > tg_shares) shares = tg_shares;
  return (uint32_t)shares;
}

void fair_update_cfs_group(const psModel *m, psData *d, int32_t i) {
  if (!fair_is_group(i)) return;
  uint32_t shares = calc_group_shares(m, d, i - FAIR_GSE);
  if (fair_ent(m, d, i)->weight != shares)
    fair_class_of(m)->reweight_entity(m, d, fair_cfs_rq_of(m, d, i), i, shares);
}

/* cfs_rq_min_slice: the shortest request of cfs_rq q's entities, curr's
 * included (~0 when empty); the kernel keeps it as an augment of the tree,
 * here it is counted when a group entity's slice is set */
static uint64_t min_slice(const psModel *m, psData *d, int q) {
  const fair_rq *rq = CFSQ(m, d, q);
  uint64_t s = ~(uint64_t)0;
  if (rq->curr >= 0 && rq->curr_on_rq) s = fair_ent(m, d, rq->curr)->slice;
  for (int32_t e = rq->leftmost; e >= 0; e = fair_rb_next(m, d, e))
    if (fair_ent(m, d, e)->slice < s) s = fair_ent(m, d, e)->slice;
  return s;
}

/* rq->cfs.h_nr_running less the root's runnable entities (fair_rq.h_adj):
 * the runnable entities of every group cfs_rq less the runnable group
 * entities, each of which stands for its cfs_rq (a delayed group entity's
 * cfs_rq is empty: dequeue_entities leaves a group entity queued while its
 * cfs_rq has load) */
static void update_h_adj(const psModel *m, psData *d, int cpu) {
  fair_cpu *c = FCPU(m, d, cpu);
  int32_t adj = 0;
  for (int g = 1; g < ngroups(m, d); g++) {
    const fair_grq *gr = &c->grp[g];
    adj += (int32_t)(gr->cfs.nr_running - gr->cfs.nr_delayed);
    if (gr->on_rq && !gr->se.sched_delayed) adj--;
  }
  c->grp[0].cfs.h_adj = adj;
  fair_overload_sync(m, d, cpu);
}

void fair_enqueue_walk(const psModel *m, psData *d, psTask *p, int flags) {
  const fair_class *c = fair_class_of(m);
  int32_t e = ps_index(d, p);
  int q = fair_cfs_rq_of(m, d, e);
  if (!fair_q_group(q)) {
    c->enqueue_entity(m, d, q, e, flags);
    return;
  }
  uint64_t slice = 0;
  for (; e >= 0; e = fair_parent_entity(m, d, e)) {
    q = fair_cfs_rq_of(m, d, e);
    if (fair_group_on_rq(m, d, e)) {
      if (fair_ent(m, d, e)->sched_delayed) c->requeue_delayed(m, d, q, e);
      break;
    }
    /* a group entity's request is its cfs_rq's shortest (6.12) */
    if (eevdf(m) && slice) {
      fair_ent(m, d, e)->slice = slice;
      fair_ent(m, d, e)->custom_slice = 1;
    }
    c->enqueue_entity(m, d, q, e, flags);
    if (eevdf(m)) slice = min_slice(m, d, q);
    flags = ENQUEUE_WAKEUP;
  }
  for (; e >= 0; e = fair_parent_entity(m, d, e)) {
    q = fair_cfs_rq_of(m, d, e);
    fair_update_cfs_group(m, d, e);
    if (eevdf(m)) {
      fair_ent(m, d, e)->slice = slice;
      slice = min_slice(m, d, q);
    }
  }
  update_h_adj(m, d, p->cpu);
}

int fair_dequeue_entities(const psModel *m, psData *d, int32_t i, int flags) {
  const fair_class *c = fair_class_of(m);
  int q = fair_cfs_rq_of(m, d, i);
  if (!fair_q_group(q) && !fair_is_group(i)) return c->dequeue_entity(m, d, q, i, flags);
  int task_sleep = flags & DEQUEUE_SLEEP, cpu = fair_q_cpu(q);
  uint64_t slice = fair_is_group(i) && eevdf(m) ? min_slice(m, d, i - FAIR_GSE) : 0;
  int32_t e = i;
  for (; e >= 0; e = fair_parent_entity(m, d, e)) {
    q = fair_cfs_rq_of(m, d, e);
    if (!c->dequeue_entity(m, d, q, e, flags)) {
      if (e == i && !fair_is_group(i)) {
        update_h_adj(m, d, cpu);
        return 0;
      }
      break;
    }
    /* don't dequeue the parent while it has other entities besides us */
    if (CFSQ(m, d, q)->load) {
      if (eevdf(m)) slice = min_slice(m, d, q);
      e = fair_parent_entity(m, d, e);
      /* bias pick_next to a task of this cfs_rq: the sleeper is within its slice */
      if (task_sleep && e >= 0 && c->set_next_buddy) c->set_next_buddy(m, d, e);
      break;
    }
    flags |= DEQUEUE_SLEEP;
    flags &= ~(DEQUEUE_DELAYED | DEQUEUE_SPECIAL);
  }
  for (; e >= 0; e = fair_parent_entity(m, d, e)) {
    q = fair_cfs_rq_of(m, d, e);
    fair_update_cfs_group(m, d, e);
    if (eevdf(m)) {
      fair_ent(m, d, e)->slice = slice;
      slice = min_slice(m, d, q);
    }
  }
  update_h_adj(m, d, cpu);
  return 1;
}

void fair_requeue_walk(const psModel *m, psData *d, psTask *p) {
  int32_t i = ps_index(d, p);
  int q = fair_cfs_rq_of(m, d, i);
  fair_class_of(m)->requeue_delayed(m, d, q, i);
  if (fair_q_group(q)) update_h_adj(m, d, p->cpu);
}

/* put_prev_entity of cfs_rq q's curr, after the levels below it */
static void put_prev_subtree(const psModel *m, psData *d, int q) {
  int32_t e = CFSQ(m, d, q)->curr;
  if (e < 0) return;
  if (fair_is_group(e)) put_prev_subtree(m, d, e - FAIR_GSE);
  fair_class_of(m)->put_prev_entity(m, d, q, e);
}

void fair_put_prev_walk(const psModel *m, psData *d, int cpu) { put_prev_subtree(m, d, cpu); }

void fair_set_next_task(const psModel *m, psData *d, psTask *p) {
  for (int32_t e = ps_index(d, p); e >= 0; e = fair_parent_entity(m, d, e))
    fair_class_of(m)->set_next_entity(m, d, fair_cfs_rq_of(m, d, e), e);
}

int32_t fair_pick_walk(const psModel *m, psData *d, int cpu) {
  const fair_class *c = fair_class_of(m);
  /* down the groups: each level's curr brought up to date, then its pick */
  int q = cpu;
  int32_t e;
  for (;;) {
    fair_rq *r = CFSQ(m, d, q);
    if (r->curr >= 0 && r->curr_on_rq) c->update_curr(m, d, q);
    e = c->pick_next_entity(m, d, q);
    if (e < 0) return -1;
    if (!fair_is_group(e)) break;
    q = e - FAIR_GSE;
  }
  /* then from the top, where the chosen chain leaves the current one,
   * the current one is put and the chosen one set */
  int32_t chain[FAIR_MAX_GROUPS + 1];
  int n = 0;
  for (int32_t x = e; x >= 0 && n <= FAIR_MAX_GROUPS; x = fair_parent_entity(m, d, x)) chain[n++] = x;
  while (n--) {
    int32_t x = chain[n];
    int xq = fair_cfs_rq_of(m, d, x);
    if (CFSQ(m, d, xq)->curr == x) continue;
    put_prev_subtree(m, d, xq);
    c->set_next_entity(m, d, xq, x);
  }
  return e;
}

void fair_tick_walk(const psModel *m, psData *d, int cpu) {
  const fair_class *c = fair_class_of(m);
  for (int32_t e = d->cpu[cpu].curr; e >= 0; e = fair_parent_entity(m, d, e))
    c->entity_tick(m, d, fair_cfs_rq_of(m, d, e));
}

/* ---- the task groups ---- */

enum {
  FAIR_CTL_GROUP_NEW = 0,    /* (parent, shares) -> (group id) */
  FAIR_CTL_SET_SHARES = 1,   /* (group, shares) */
  FAIR_CTL_MOVE = 2,         /* (pid, group): cgroup.procs */
  FAIR_CTL_GROUP_INFO = 3,   /* (group) -> (cpu ns, shares, parent, depth) */
  FAIR_CTL_TASK_GROUP = 4,   /* (pid) -> (group) */
  FAIR_CTL_SPAWN_GROUP = 5,  /* (group): where tasks spawned from Python go */
  FAIR_CTL_GROUP_CPU = 6,    /* (group, cpu) -> (entity weight, on_rq, cfs_rq load, nr_running) */
  FAIR_CTL_NGROUPS = 7,      /* () -> (groups made, the root included) */
};

/* init_tg_cfs_entry: group g's cfs_rq and entity on every CPU; the entity
 * weighs NICE_0_LOAD until its first update_cfs_group */
static void init_group(const psModel *m, psData *d, int g, int parent) {
  for (int c = 0; c < m->ncpu; c++) {
    fair_grq *gr = GRQ(m, d, FAIR_Q(c, g));
    memset(gr, 0, sizeof *gr);
    fair_rq *rq = &gr->cfs;
    rq->root = rq->leftmost = rq->curr = -1;
    rq->next = rq->last = rq->skip = -1;
    rq->rt_head = rq->rt_tail = -1;
    rq->cfs_head = rq->cfs_tail = -1;
    rq->min_vruntime = (uint64_t)(-(1LL << 20));
    fair_se *se = &gr->se;
    se->node.left = se->node.right = se->node.parent = -1;
    se->list_prev = se->list_next = -1;
    se->node.color = FAIR_NODE_OFF;
    se->node.group = (int16_t)parent;
    se->weight = NICE_0_LOAD;
  }
  fair_tg *tg = TG(m, d, g);
  tg->parent = parent;
  tg->depth = parent ? TG(m, d, parent)->depth + 1 : 0;
  tg->used = 1;
}

static int check_shares(int64_t shares, char *err, int errlen) {
  if (shares < FAIR_MIN_SHARES || shares > FAIR_MAX_SHARES) {
    snprintf(err, errlen, "shares=%lld is outside the allowed range %d..%d (cpu.shares)",
             (long long)shares, FAIR_MIN_SHARES, FAIR_MAX_SHARES);
    return -1;
  }
  return 0;
}

static int check_group(const psModel *m, const psData *d, int64_t g, int root_ok, char *err,
                       int errlen) {
  if (g < !root_ok || g >= ngroups(m, d)) {
    snprintf(err, errlen, "group %lld does not exist (groups are %d..%d)", (long long)g, !root_ok,
             ngroups(m, d) - 1);
    return -1;
  }
  return 0;
}

static psTask *task_of_pid(const psModel *m, psData *d, int64_t pid, char *err, int errlen) {
  psTask *t = pid > 0 && pid <= INT32_MAX ? ps_task_by_pid(m, d, (int)pid) : NULL;
  if (!t || t->exit_ns >= 0) {
    snprintf(err, errlen, "no live task with pid %lld", (long long)pid);
    return NULL;
  }
  return t;
}

/* sched_move_task: out of its queues (and off the CPU's curr chain),
 * into the new group's cfs_rq (task_change_group_fair: a sleeping CFS
 * task's vruntime made relative to the old cfs_rq and renormalised to the
 * new one, detach/attach_task_cfs_rq), back in, and a reschedule if it
 * runs */
static void move_task(const psModel *m, psData *d, psTask *p, int g) {
  const fair_class *c = fair_class_of(m);
  fair_se *se = SE(p);
  if (se->node.group == g) return;
  int cpu = p->cpu, fair = !fair_rt(p);
  int queued = fair && (p->on_rq || se->sched_delayed);
  int running = ps_curr(d, cpu) == p;
  int32_t i = ps_index(d, p);
  if (queued) fair_dequeue_task(m, d, p, DEQUEUE_SAVE | DEQUEUE_MOVE);
  if (running && fair && CFSQ(m, d, fair_cfs_rq_of(m, d, i))->curr == i) fair_put_prev_task(m, d, cpu);
  if (fair && !queued && c->detach) c->detach(m, d, p);
  se->node.group = (int16_t)g;
  if (fair && !queued && c->attach) c->attach(m, d, p);
  if (queued) fair_enqueue_task(m, d, p, ENQUEUE_RESTORE | ENQUEUE_MOVE);
  if (running && fair) {
    fair_set_next_task(m, d, p);
    ps_resched_cpu(d, cpu);
  }
  update_h_adj(m, d, cpu);
}

/* __sched_group_set_shares: the new shares, and each CPU's group entity
 * (with its ancestors) reweighed */
static void set_shares(const psModel *m, psData *d, int g, int shares) {
  TG(m, d, g)->shares = shares;
  for (int c = 0; c < m->ncpu; c++)
    for (int32_t e = fair_group_entity(FAIR_Q(c, g)); e >= 0; e = fair_parent_entity(m, d, e))
      fair_update_cfs_group(m, d, e);
}

/* the CPU time group g's entities were charged, what update_curr would
 * add now to one running included */
static int64_t group_cpu_ns(const psModel *m, const psData *d, int g) {
  int64_t ns = 0;
  for (int c = 0; c < m->ncpu; c++) {
    int q = FAIR_Q(c, g);
    int32_t e = fair_group_entity(q);
    const fair_se *se = fair_ent(m, d, e);
    ns += (int64_t)se->sum_exec_runtime;
    if (CFSQ(m, d, fair_cfs_rq_of(m, d, e))->curr == e && d->now_ns > (int64_t)se->exec_start)
      ns += d->now_ns - (int64_t)se->exec_start;
  }
  return ns;
}

int fair_control(const psModel *m, psData *d, int op, const int64_t *a, int nargs, int64_t *out,
                 char *err, int errlen) {
  static const int want[] = {2, 2, 2, 1, 1, 1, 2, 0};
  if (op < 0 || op > FAIR_CTL_NGROUPS || nargs != want[op]) {
    snprintf(err, errlen, "policy call %d with %d arguments: no such call", op, nargs);
    return -1;
  }
  fair_cpu *c0 = FCPU(m, d, 0);
  if (!c0->ngroups) c0->ngroups = 1;
  switch (op) {
    case FAIR_CTL_GROUP_NEW: {
      if (check_group(m, d, a[0], 1, err, errlen) || check_shares(a[1], err, errlen)) return -1;
      if (c0->ngroups >= FAIR_MAX_GROUPS) {
        snprintf(err, errlen, "at most %d task groups besides the root", FAIR_MAX_GROUPS - 1);
        return -1;
      }
      int g = c0->ngroups++;
      init_group(m, d, g, (int)a[0]);
      TG(m, d, g)->shares = (int32_t)a[1];
      out[0] = g;
      return 0;
    }
    case FAIR_CTL_SET_SHARES:
      if (check_group(m, d, a[0], 0, err, errlen) || check_shares(a[1], err, errlen)) return -1;
      set_shares(m, d, (int)a[0], (int)a[1]);
      return 0;
    case FAIR_CTL_MOVE: {
      psTask *p = task_of_pid(m, d, a[0], err, errlen);
      if (!p || check_group(m, d, a[1], 1, err, errlen)) return -1;
      move_task(m, d, p, (int)a[1]);
      return 0;
    }
    case FAIR_CTL_GROUP_INFO: {
      if (check_group(m, d, a[0], 0, err, errlen)) return -1;
      const fair_tg *tg = TG(m, d, (int)a[0]);
      out[0] = group_cpu_ns(m, d, (int)a[0]);
      out[1] = tg->shares;
      out[2] = tg->parent;
      out[3] = tg->depth;
      return 0;
    }
    case FAIR_CTL_TASK_GROUP: {
      psTask *p = task_of_pid(m, d, a[0], err, errlen);
      if (!p) return -1;
      out[0] = SE(p)->node.group;
      return 0;
    }
    case FAIR_CTL_SPAWN_GROUP:
      if (check_group(m, d, a[0], 1, err, errlen)) return -1;
      c0->spawn_group = (int32_t)a[0];
      return 0;
    case FAIR_CTL_GROUP_CPU: {
      if (check_group(m, d, a[0], 0, err, errlen)) return -1;
      if (a[1] < 0 || a[1] >= m->ncpu) {
        snprintf(err, errlen, "cpu=%lld is outside the allowed range 0..%d", (long long)a[1], m->ncpu - 1);
        return -1;
      }
      const fair_grq *gr = GRQ(m, d, FAIR_Q((int)a[1], (int)a[0]));
      out[0] = gr->se.weight;
      out[1] = gr->on_rq;
      out[2] = (int64_t)gr->cfs.load;
      out[3] = gr->cfs.nr_running;
      return 0;
    }
    default:
      out[0] = c0->ngroups;
      return 0;
  }
}
