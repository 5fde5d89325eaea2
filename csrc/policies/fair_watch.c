/* The fair policies' lag, watched (psHooks.watch; watch.h, ps_watch_lag):
 * each queued task's lag_i = w_i * (V - v_i), V the weighted average
 * vruntime of its cfs_rq (avg_vruntime, 6.12 fair.c), in ns of service:
 * (V - v_i) * w_i / NICE_0_LOAD, what it is owed (positive) or got beyond
 * its share (negative) on that cfs_rq -- with task groups, on its group's
 * cfs_rq, in the group's time.
 *
 * When it is looked at.  Between two instants nothing moves the kernel's
 * own figures (vruntime moves at update_curr, V with it and at enqueue,
 * dequeue and reweight), so each queued task's lag is read after every
 * instant at which its CPU's cfs_rq changed (fair_watch, below), and a
 * task's once more where it leaves the queue (at dequeue, as the kernel
 * reads it: update_entity_lag for EEVDF), which the next instant would
 * miss.  A delayed entity (6.12, DELAY_DEQUEUE) is still queued and in V,
 * and its lag is read as any other's.
 *
 * The bound, for EEVDF.  The paper (Stoica and Abdel-Wahab 1995, for a
 * steady system: clients that join and leave with zero lag) bounds every
 * client's lag by -r_max < lag < max(r_max, q), r_max the largest request
 * and q the quantum.  The kernel (6.6 update_entity_lag, 6.12 entity_lag)
 * cites that bound and clamps each task's saved lag to
 * +-calc_delta_fair(max(2 * slice, TICK_NSEC)): its own request doubled,
 * since a request ends only at the tick after it is served (no HRTICK),
 * with the tick as the floor.  That clamp is the bound checked: a lag past
 * it is service the kernel loses (or forgives) the next time the task
 * leaves its queue, so it is the promise 6.6 and 6.12 keep or break; it
 * is decided in the kernel's own arithmetic, vlag against the clamp in
 * virtual time, and reported in ns of service, max(2 * slice, TICK_NSEC).
 * Tasks whose slices differ break it (a long custom slice runs to parity
 * while the others' positive lag grows past their own clamp), which later
 * kernels answer by clamping to the cfs_rq's largest slice plus a tick
 * ("sched/fair: Increase max lag clamping", 2025).  CFS has no lag bound
 * of its own (it places by min_vruntime, not by lag): its lag is reported,
 * with no bound, and never broken.
 *
 * Cost: nothing unless a watch is on; with one, a look at each CPU after
 * each instant (its cfs_rq's signature, below) and at every queued task of
 * a CPU whose cfs_rq changed, V summed from the queued entities for CFS,
 * which does not keep avg_vruntime. */
#include "fair_common.h"
#include "watch.h"

static int eevdf(const psModel *m) { return fair_class_of(m)->key == FAIR_KEY_DEADLINE; }

/* V of every cfs_rq of cpu with a queued entity, by group (bit g of *have) */
typedef struct {
  uint64_t v[FAIR_MAX_GROUPS];
  uint32_t have;
} cpu_v;

/* CFS: V summed from the entities queued on each cfs_rq of cpu -- its
 * tasks (rq->cfs_tasks, the running one included) and its groups'
 * entities -- as avg_vruntime would: (v_i - min_vruntime) * w_i over load,
 * floored */
static void cfs_v(const psModel *m, const psData *d, int cpu, cpu_v *out) {
  __int128 avg[FAIR_MAX_GROUPS] = {0};
  int64_t load[FAIR_MAX_GROUPS] = {0};
  for (int32_t i = FRQ(m, d, cpu)->cfs_head; i >= 0; i = SEc(&d->task[i])->list_next) {
    const fair_se *se = SEc(&d->task[i]);
    int g = se->node.group;
    avg[g] += (__int128)entity_key(CFSQ(m, d, FAIR_Q(cpu, g)), se) * se->weight;
    load[g] += se->weight;
  }
  for (int g = 1; g < fair_ngroups(m, d); g++) {
    int32_t e = FAIR_GSE + FAIR_Q(cpu, g);
    if (!fair_group_on_rq(m, d, e)) continue;
    const fair_se *se = fair_ent(m, d, e);
    int pg = se->node.group;
    avg[pg] += (__int128)entity_key(CFSQ(m, d, FAIR_Q(cpu, pg)), se) * se->weight;
    load[pg] += se->weight;
  }
  out->have = 0;
  for (int g = 0; g < fair_ngroups(m, d); g++) {
    if (!load[g]) continue;
    __int128 a = avg[g];
    if (a < 0) a -= load[g] - 1;
    out->v[g] = CFSQ(m, d, FAIR_Q(cpu, g))->min_vruntime + (uint64_t)(int64_t)(a / load[g]);
    out->have |= 1u << g;
  }
}

/* V of cfs_rq g of cpu: EEVDF keeps it (avg_vruntime), CFS's are summed once */
static uint64_t v_of(const psModel *m, const psData *d, int cpu, int g, cpu_v *c) {
  if (!(c->have & 1u << g)) {
    if (eevdf(m)) {
      c->v[g] = fair_avg_vruntime(m, d, FAIR_Q(cpu, g));
      c->have |= 1u << g;
    } else {
      cfs_v(m, d, cpu, c);
    }
  }
  return c->v[g];
}

/* Task i's lag against V, to ps_watch_lag; under EEVDF against the clamp
 * of entity_lag (policy_eevdf.c), vlag beyond +-calc_delta_fair(max(2 *
 * slice, TICK_NSEC)) in virtual time being past it */
static void lag_of(const psModel *m, psData *d, int32_t i, uint64_t v) {
  psTask *t = &d->task[i];
  const fair_se *se = SEc(t);
  int64_t vlag = vdiff(v, se->vruntime);
  int64_t lag_ns = (int64_t)((__int128)vlag * se->weight / NICE_0_LOAD);
  if (!eevdf(m)) {
    ps_watch_lag(d, t, lag_ns, 0, 0);
    return;
  }
  uint64_t r = 2 * se->slice > (uint64_t)m->tick_ns ? 2 * se->slice : (uint64_t)m->tick_ns;
  int broken = 0;
  /* the clamp in virtual time only near it (its service is r, rounded) */
  if (2 * (lag_ns < 0 ? -lag_ns : lag_ns) >= (int64_t)r) {
    int64_t limit = (int64_t)fair_calc_delta_fair(r, se->weight);
    broken = vlag > limit || vlag < -limit;
  }
  ps_watch_lag(d, t, lag_ns, (int64_t)r, broken);
}

void fair_watch_entity_lag(const psModel *m, psData *d, int q, int32_t i, uint64_t v) {
  if (fair_is_group(i)) return;
  if (!eevdf(m)) {
    cpu_v c;
    c.have = 0;
    v = v_of(m, d, fair_q_cpu(q), fair_q_group(q), &c);
  }
  lag_of(m, d, i, v);
}

/* Whether cpu's cfs_rq is as it was at the last look, so that no queued
 * task's lag has moved: the same entities (list_seq stamps every enqueue
 * and pick, nr_running and load every dequeue), the same curr at the same
 * vruntime -- or, alone on it, at any vruntime: a lone entity is V, its
 * lag 0 (the common tick of a busy CPU).  Without task groups only (a
 * group's cfs_rq moves below the root's). */
static int unchanged(fair_rq *rq, const psData *d) {
  uint64_t curr_v = rq->curr >= 0 ? SEc(&d->task[rq->curr])->vruntime : 0;
  int same = rq->watch_seq == rq->list_seq && rq->watch_nr == rq->nr_running &&
             rq->watch_load == rq->load && rq->watch_curr == rq->curr &&
             (rq->watch_curr_v == curr_v || rq->nr_running == 1);
  rq->watch_seq = rq->list_seq;
  rq->watch_nr = rq->nr_running;
  rq->watch_load = rq->load;
  rq->watch_curr = rq->curr;
  rq->watch_curr_v = curr_v;
  return same;
}

void fair_watch(const psModel *m, psData *d) {
  int groups = fair_ngroups(m, d) > 1;
  for (int cpu = 0; cpu < m->ncpu; cpu++) {
    fair_rq *rq = FRQ(m, d, cpu);
    if (rq->cfs_head < 0 || (!groups && unchanged(rq, d))) continue;
    cpu_v c;
    c.have = 0;  /* the V's are filled as they are needed */
    for (int32_t i = rq->cfs_head; i >= 0; i = SE(&d->task[i])->list_next)
      lag_of(m, d, i, v_of(m, d, cpu, SE(&d->task[i])->node.group, &c));
  }
}
