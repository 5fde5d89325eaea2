/* The fair schedulers' invariants (fair_common.h, psHooks.check): each
 * CPU's tree, sums, cfs_rq->curr, buddies and RT list, and every task's
 * accounting within range.  A state may come from a damaged snapshot, so
 * indices are checked before they are followed. */
#include "fair_common.h"

#include <stdio.h>

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
