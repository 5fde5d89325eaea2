/* The fair schedulers' invariants (fair_common.h, psHooks.check): each
 * CPU's tree, sums, cfs_rq->curr, buddies, RT list and rq->cfs_tasks, and
 * every task's accounting within range.  A state may come from a damaged
 * snapshot, so indices are checked before they are followed. */
#include "fair_common.h"

#include <stdio.h>

/* ---- invariants ---- */

static int link_ok(int32_t i, int32_t n) { return i >= -1 && i < n; }
/* -1 or an entity id (a task slot or a group entity) */
static int ent_ok(const psModel *m, const psData *d, int32_t i) { return i == -1 || fair_ent_ok(m, d, i); }

static int check_links(const psModel *m, const psData *d, char *err, int errlen) {
  for (int32_t i = 0; i < d->ntask; i++) {
    const fair_se *se = SEc(&d->task[i]);
    const fair_node *n = &se->node;
    int rt_list = n->color == FAIR_NODE_RT;
    if (!(rt_list ? link_ok(n->left, d->ntask) : ent_ok(m, d, n->left)) ||
        !(rt_list ? link_ok(n->right, d->ntask) : ent_ok(m, d, n->right)) ||
        !ent_ok(m, d, n->parent) || n->color < FAIR_NODE_OFF || n->color > FAIR_NODE_RT ||
        n->group < 0 || n->group >= fair_ngroups(m, d) ||
        !link_ok(se->list_prev, d->ntask) || !link_ok(se->list_next, d->ntask) ||
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
    if (!ent_ok(m, d, rq->root) || !ent_ok(m, d, rq->leftmost) ||
        !ent_ok(m, d, rq->curr) || !ent_ok(m, d, rq->next) ||
        !ent_ok(m, d, rq->last) || !ent_ok(m, d, rq->skip) ||
        !link_ok(rq->rt_head, d->ntask) || !link_ok(rq->rt_tail, d->ntask) ||
        !link_ok(rq->cfs_head, d->ntask) || !link_ok(rq->cfs_tail, d->ntask) ||
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
  fair_tree t = {(psTask *)d->task, d->rq, m->rq_stride, (int32_t *)&rq->root, (int32_t *)&rq->leftmost,
                 fair_class_of(m)->key};
  int32_t count;
  char why[PS_ERRLEN];
  if (fair_rb_check(m, d, &t, &count, why, sizeof why)) {
    snprintf(err, errlen, "cpu %d: %.200s", cpu, why);
    return -1;
  }
  *intree = count;
  uint64_t load = 0;
  int64_t avg = 0, avg_load = 0;
  uint32_t delayed = 0;
  for (int32_t i = rq->leftmost; i >= 0; i = fair_rb_next(m, d, i)) {
    const fair_se *se = fair_ent(m, d, i);
    if (fair_is_group(i)) {
      /* a group entity: of this CPU's root, queued (fair_check_groups checks the rest) */
      if (fair_q_cpu(i - FAIR_GSE) != cpu || se->node.group != 0 || !fair_group_on_rq(m, d, i)) {
        snprintf(err, errlen, "cpu %d: group entity %d is in its root tree but not queued there",
                 cpu, fair_q_group(i - FAIR_GSE));
        return -1;
      }
      --*intree;  /* the caller counts the tasks in trees */
    } else {
      const psTask *p = &d->task[i];
      if (p->cpu != cpu || fair_rt(p) || i < m->ncpu || i == rq->curr || se->node.group != 0 ||
          (se->sched_delayed ? p->on_rq || p->state == PS_TASK_RUNNING : !p->on_rq)) {
        snprintf(err, errlen, "cpu %d: pid %d is in its tree but not a task queued there", cpu, p->pid);
        return -1;
      }
    }
    load += se->weight;
    avg = s64_add(avg, s64_mul(entity_key(rq, se), se->weight));
    avg_load += se->weight;
    delayed += (uint32_t)se->sched_delayed;
  }
  const psTask *run = &d->task[d->cpu[cpu].curr];
  int32_t want_curr = run->is_idle || fair_rt(run) ? -1 : d->cpu[cpu].curr;
  /* the running task's top-level entity: its group's at the root */
  if (want_curr >= 0 && SEc(run)->node.group)
    for (int32_t e = want_curr; e >= 0 && fair_ent_ok(m, d, e); e = fair_parent_entity(m, d, e))
      want_curr = e;
  if (rq->curr != want_curr) {
    snprintf(err, errlen, "cpu %d: cfs_rq->curr is slot %d, but pid %d runs", cpu, rq->curr, run->pid);
    return -1;
  }
  if (rq->curr >= 0) {
    const fair_se *se = fair_ent(m, d, rq->curr);
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
    if (b >= 0 && (b != rq->curr && fair_ent(m, d, b)->node.color != FAIR_NODE_BLACK &&
                   fair_ent(m, d, b)->node.color != FAIR_NODE_RED)) {
      snprintf(err, errlen, "cpu %d: a buddy (slot %d) is not queued there", cpu, b);
      return -1;
    }
    if (b >= 0 && fair_cfs_rq_of(m, d, b) != cpu) {
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

/* rq->cfs_tasks of every CPU: each list holds exactly the CPU's fair
 * tasks that are queued, running or delayed (what account_entity_enqueue
 * listed and account_entity_dequeue has not removed), its links agree both
 * ways, and from head to tail the stamps fall strictly, so that the list
 * is the order of list_stamp, the balancer's walk from the tail the order
 * of the least recently enqueued or picked.  Links are range-checked by
 * check_links before; a cycle is found by the links back or the count. */
static int check_cfs_tasks(const psModel *m, const psData *d, char *err, int errlen) {
  int64_t listed = 0, want = 0;
  for (int c = 0; c < m->ncpu; c++) {
    const fair_rq *rq = FRQ(m, d, c);
    int32_t prev = -1;
    uint64_t stamp = rq->list_seq;
    for (int32_t i = rq->cfs_head; i >= 0; i = SEc(&d->task[i])->list_next) {
      const psTask *p = &d->task[i];
      const fair_se *se = SEc(p);
      if (++listed > d->ntask || i < m->ncpu || se->list_prev != prev) {
        snprintf(err, errlen, "cpu %d: rq->cfs_tasks is broken at slot %d (a cycle, an idle "
                 "task or a link back that is not %d)", c, i, prev);
        return -1;
      }
      if (!p->pid || p->cpu != c || fair_rt(p) || !(p->on_rq || se->sched_delayed)) {
        snprintf(err, errlen, "cpu %d: slot %d (pid %d) is on rq->cfs_tasks but not a fair task "
                 "queued there", c, i, p->pid);
        return -1;
      }
      if (se->list_stamp > stamp || (prev >= 0 && se->list_stamp == stamp)) {
        snprintf(err, errlen, "cpu %d: rq->cfs_tasks is out of its stamps' order at pid %d "
                 "(stamp %llu after %llu)", c, p->pid, (unsigned long long)se->list_stamp,
                 (unsigned long long)stamp);
        return -1;
      }
      stamp = se->list_stamp;
      prev = i;
    }
    if (prev != rq->cfs_tail) {
      snprintf(err, errlen, "cpu %d: rq->cfs_tasks' tail is slot %d, its last entry %d", c,
               rq->cfs_tail, prev);
      return -1;
    }
  }
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    const psTask *p = &d->task[i];
    want += p->pid && !fair_rt(p) && (p->on_rq || SEc(p)->sched_delayed);
  }
  if (listed != want) {
    snprintf(err, errlen, "rq->cfs_tasks lists %lld tasks, but %lld fair tasks are queued",
             (long long)listed, (long long)want);
    return -1;
  }
  return 0;
}

int fair_check(const psModel *m, const psData *d, char *err, int errlen) {
  const fair_cpu *c0 = FCPU(m, d, 0);
  if (c0->ngroups < 0 || c0->ngroups > FAIR_MAX_GROUPS || c0->spawn_group < 0 ||
      c0->spawn_group >= fair_ngroups(m, d)) {
    snprintf(err, errlen, "%d task groups (at most %d), spawn group %d", c0->ngroups,
             FAIR_MAX_GROUPS, c0->spawn_group);
    return -1;
  }
  if (check_links(m, d, err, errlen)) return -1;
  int64_t intree = 0, rt = 0;
  int32_t overloaded = 0;
  for (int c = 0; c < m->ncpu; c++) {
    int32_t n;
    if (check_cpu(m, d, c, &n, err, errlen)) return -1;
    intree += n;
    rt += FRQ(m, d, c)->rt_nr_running;
    const fair_rq *rq = FRQ(m, d, c);
    if (rq->overloaded != (fair_rq_nr_running(rq) >= 2)) {
      snprintf(err, errlen, "cpu %d: overloaded %d with %u runnable tasks", c, rq->overloaded,
               fair_rq_nr_running(rq));
      return -1;
    }
    overloaded += rq->overloaded;
  }
  if (overloaded != c0->nr_overloaded) {
    snprintf(err, errlen, "nr_overloaded %d but %d runqueues hold two runnable tasks or more",
             c0->nr_overloaded, overloaded);
    return -1;
  }
  if (check_cfs_tasks(m, d, err, errlen)) return -1;
  int64_t gse_in_trees = 0;
  if (fair_check_groups(m, d, &intree, &gse_in_trees, err, errlen)) return -1;
  intree -= gse_in_trees;
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
        ((se->exec_start || CFSQ(m, d, fair_cfs_rq_of(m, d, i))->curr == i) &&
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
      want_tree += (p->on_rq && CFSQ(m, d, fair_cfs_rq_of(m, d, i))->curr != i) || se->sched_delayed;
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

/* ---- the task groups ---- */

/* One group cfs_rq q: its tree and sums, its entities all of it, its curr
 * the running task's chain, its entity queued exactly while it has load. */
static int check_group_rq(const psModel *m, const psData *d, int q, int64_t *intree,
                          int64_t *gse_in_trees, char *err, int errlen) {
  int cpu = fair_q_cpu(q), g = fair_q_group(q);
  const fair_rq *rq = CFSQ(m, d, q);
  if (!ent_ok(m, d, rq->root) || !ent_ok(m, d, rq->leftmost) || !ent_ok(m, d, rq->curr) ||
      !ent_ok(m, d, rq->next) || !ent_ok(m, d, rq->last) || !ent_ok(m, d, rq->skip) ||
      (rq->curr_on_rq & ~1) || (rq->protect & ~1)) {
    snprintf(err, errlen, "cpu %d group %d: a runqueue index out of range", cpu, g);
    return -1;
  }
  fair_tree t = {(psTask *)d->task, d->rq, m->rq_stride, (int32_t *)&rq->root, (int32_t *)&rq->leftmost, fair_class_of(m)->key};
  int32_t count;
  char why[PS_ERRLEN];
  if (fair_rb_check(m, d, &t, &count, why, sizeof why)) {
    snprintf(err, errlen, "cpu %d group %d: %.200s", cpu, g, why);
    return -1;
  }
  *intree += count;
  uint64_t load = 0;
  int64_t avg = 0, avg_load = 0;
  uint32_t delayed = 0;
  for (int32_t i = rq->leftmost; i >= 0; i = fair_rb_next(m, d, i)) {
    const fair_se *se = fair_ent(m, d, i);
    int ok = fair_cfs_rq_of(m, d, i) == q && i != rq->curr;
    if (fair_is_group(i)) {
      ok = ok && fair_group_on_rq(m, d, i);
      ++*gse_in_trees;
    } else {
      const psTask *p = &d->task[i];
      ok = ok && !fair_rt(p) && i >= m->ncpu &&
           (se->sched_delayed ? !p->on_rq && p->state != PS_TASK_RUNNING : p->on_rq);
    }
    if (!ok) {
      snprintf(err, errlen, "cpu %d group %d: entity %d is in its tree but not queued there", cpu, g, i);
      return -1;
    }
    load += se->weight;
    avg = s64_add(avg, s64_mul(entity_key(rq, se), se->weight));
    avg_load += se->weight;
    delayed += (uint32_t)se->sched_delayed;
  }
  if (rq->curr >= 0) {
    const fair_se *se = fair_ent(m, d, rq->curr);
    if (fair_cfs_rq_of(m, d, rq->curr) != q || se->node.color != FAIR_NODE_OFF || !rq->curr_on_rq ||
        se->sched_delayed) {
      snprintf(err, errlen, "cpu %d group %d: the running entity is not its own, in its tree, "
               "off its queue or delayed", cpu, g);
      return -1;
    }
    load += se->weight;
  } else if (rq->curr_on_rq || rq->protect) {
    snprintf(err, errlen, "cpu %d group %d: no cfs_rq->curr but curr_on_rq or protect set", cpu, g);
    return -1;
  }
  uint32_t nr = (uint32_t)count + (rq->curr >= 0);
  if (nr != rq->nr_running || delayed != rq->nr_delayed || load != rq->load ||
      (fair_class_of(m)->key == FAIR_KEY_DEADLINE && (avg != rq->avg_vruntime || avg_load != rq->avg_load))) {
    snprintf(err, errlen, "cpu %d group %d: nr_running %u, nr_delayed %u, load %llu (or the "
             "avg_vruntime sums) but %u queued, %u delayed, load %llu", cpu, g, rq->nr_running,
             rq->nr_delayed, (unsigned long long)rq->load, nr, delayed, (unsigned long long)load);
    return -1;
  }
  int32_t buddies[3] = {rq->next, rq->last, rq->skip};
  for (int k = 0; k < 3; k++)
    if (buddies[k] >= 0 && fair_cfs_rq_of(m, d, buddies[k]) != q) {
      snprintf(err, errlen, "cpu %d group %d: a buddy is another cfs_rq's", cpu, g);
      return -1;
    }
  /* its entity, on the parent's cfs_rq */
  int32_t e = fair_group_entity(q);
  const fair_se *gse = fair_ent(m, d, e);
  const fair_rq *prq = CFSQ(m, d, fair_cfs_rq_of(m, d, e));
  const fair_tg *tg = &FCPU(m, d, 0)->tg[g];
  int on_rq = FCPU(m, d, cpu)->grp[g].on_rq;
  int placed = gse->node.color == FAIR_NODE_RED || gse->node.color == FAIR_NODE_BLACK ||
               (prq->curr == e && prq->curr_on_rq);
  if ((on_rq & ~1) || (gse->sched_delayed & ~1) || (gse->custom_slice & ~1) ||
      (gse->rel_deadline & ~1) || on_rq != placed || (!on_rq && gse->sched_delayed) ||
      (on_rq && !gse->sched_delayed && !rq->load) || (!on_rq && rq->nr_running) ||
      (gse->sched_delayed && rq->nr_running)) {
    snprintf(err, errlen, "cpu %d group %d: its entity's on_rq %d, delayed %d, in a queue %d, but "
             "its cfs_rq has %u entities", cpu, g, on_rq, gse->sched_delayed, placed, rq->nr_running);
    return -1;
  }
  if (on_rq && (gse->weight < FAIR_MIN_SHARES || gse->weight > (uint32_t)tg->shares)) {
    snprintf(err, errlen, "cpu %d group %d: its entity weighs %u, outside %d..%d (MIN_SHARES..shares)",
             cpu, g, gse->weight, FAIR_MIN_SHARES, tg->shares);
    return -1;
  }
  if (gse->exec_start > (uint64_t)d->now_ns || gse->sum_exec_runtime > (uint64_t)d->now_ns) {
    snprintf(err, errlen, "cpu %d group %d: exec_start or sum_exec_runtime past now", cpu, g);
    return -1;
  }
  return 0;
}

int fair_check_groups(const psModel *m, const psData *d, int64_t *intree, int64_t *gse_in_trees,
                      char *err, int errlen) {
  int n = fair_ngroups(m, d);
  const fair_tg *tgs = FCPU(m, d, 0)->tg;
  for (int g = 1; g < n; g++) {
    const fair_tg *tg = &tgs[g];
    if (tg->used != 1 || tg->parent < 0 || tg->parent >= g || tg->shares < FAIR_MIN_SHARES ||
        tg->shares > FAIR_MAX_SHARES || tg->depth != (tg->parent ? tgs[tg->parent].depth + 1 : 0)) {
      snprintf(err, errlen, "group %d: parent %d, shares %d or depth %d out of range", g, tg->parent,
               tg->shares, tg->depth);
      return -1;
    }
    for (int c = 0; c < m->ncpu; c++)
      if (FCPU(m, d, c)->grp[g].se.node.group != tg->parent) {
        snprintf(err, errlen, "group %d: its entity on cpu %d is not on its parent's cfs_rq", g, c);
        return -1;
      }
  }
  for (int c = 0; c < m->ncpu; c++) {
    for (int g = 1; g < n; g++)
      if (check_group_rq(m, d, FAIR_Q(c, g), intree, gse_in_trees, err, errlen)) return -1;
    /* each level's curr is the running task's chain, and no other */
    const psTask *run = &d->task[d->cpu[c].curr];
    int32_t want[FAIR_MAX_GROUPS];
    for (int g = 0; g < n; g++) want[g] = -1;
    if (!run->is_idle && !fair_rt(run))
      for (int32_t e = d->cpu[c].curr; e >= 0; e = fair_parent_entity(m, d, e))
        want[fair_q_group(fair_cfs_rq_of(m, d, e))] = e;
    for (int g = 1; g < n; g++)
      if (CFSQ(m, d, FAIR_Q(c, g))->curr != want[g]) {
        snprintf(err, errlen, "cpu %d group %d: cfs_rq->curr is %d, not the running task's chain (%d)",
                 c, g, CFSQ(m, d, FAIR_Q(c, g))->curr, want[g]);
        return -1;
      }
    /* h_adj, the runnable tasks below group entities less those entities */
    int32_t adj = 0;
    for (int g = 1; g < n; g++) {
      const fair_grq *gr = &FCPU(m, d, c)->grp[g];
      adj += (int32_t)(gr->cfs.nr_running - gr->cfs.nr_delayed);
      if (gr->on_rq && !gr->se.sched_delayed) adj--;
    }
    if (adj != FRQ(m, d, c)->h_adj) {
      snprintf(err, errlen, "cpu %d: h_adj %d but the groups hold %d", c, FRQ(m, d, c)->h_adj, adj);
      return -1;
    }
  }
  return 0;
}
