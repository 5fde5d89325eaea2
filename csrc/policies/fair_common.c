/* The fair schedulers' shared code (fair_common.h), the accounting part:
 * arithmetic (the weight tables, wmult fixed point, the sysctl factor) and
 * the cfs_rq's bookkeeping (the tree with avg_vruntime's sums, load and
 * nr_running, avg_vruntime, min_vruntime).  The hooks every member runs
 * through its fair_class, with the real-time class, are fair_hooks.c; the
 * invariants fair_invariants.c. */
#include "fair_common.h"

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

void fair_tree_enqueue(const psModel *m, psData *d, int q, int32_t i) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = fair_ent(m, d, i);
  /* avg_vruntime_add (EEVDF only keeps V) */
  if (eevdf(m)) {
    rq->avg_vruntime = s64_add(rq->avg_vruntime, s64_mul(entity_key(rq, se), se->weight));
    rq->avg_load += se->weight;
  }
  fair_tree t = fair_tree_of(m, d, q);
  fair_rb_insert(&t, i);
}

void fair_tree_dequeue(const psModel *m, psData *d, int q, int32_t i) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = fair_ent(m, d, i);
  fair_tree t = fair_tree_of(m, d, q);
  fair_rb_erase(&t, i);
  if (eevdf(m)) {
    rq->avg_vruntime = s64_add(rq->avg_vruntime, -s64_mul(entity_key(rq, se), se->weight));
    rq->avg_load -= se->weight;
  }
}

/* rq->cfs_tasks (fair_rq.cfs_head/cfs_tail, fair_se.list_prev/list_next):
 * task i to the head, or out of the list */
static void cfs_tasks_add(psData *d, fair_rq *rq, int32_t i) {
  fair_se *se = SE(&d->task[i]);
  se->list_prev = -1;
  se->list_next = rq->cfs_head;
  if (rq->cfs_head >= 0)
    SE(&d->task[rq->cfs_head])->list_prev = i;
  else
    rq->cfs_tail = i;
  rq->cfs_head = i;
}

static void cfs_tasks_del(psData *d, fair_rq *rq, int32_t i) {
  fair_se *se = SE(&d->task[i]);
  if (se->list_prev >= 0)
    SE(&d->task[se->list_prev])->list_next = se->list_next;
  else
    rq->cfs_head = se->list_next;
  if (se->list_next >= 0)
    SE(&d->task[se->list_next])->list_prev = se->list_prev;
  else
    rq->cfs_tail = se->list_prev;
  se->list_prev = se->list_next = -1;
}

void fair_account_enqueue(const psModel *m, psData *d, int q, int32_t i) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = fair_ent(m, d, i);
  rq->load += se->weight;
  rq->nr_running++;
  if (se->sched_delayed) rq->nr_delayed++;
  fair_overload_sync(m, d, fair_q_cpu(q));
  /* list_add(&se->group_node, &rq->cfs_tasks): a task's, on its CPU's
   * list whatever its group (rq_of(cfs_rq); fair.c account_entity_enqueue,
   * 6.5 and 6.12) */
  if (i < FAIR_GSE) {
    fair_rq *crq = FRQ(m, d, fair_q_cpu(q));
    se->list_stamp = ++crq->list_seq;
    cfs_tasks_add(d, crq, i);
  }
}

void fair_account_dequeue(const psModel *m, psData *d, int q, int32_t i) {
  fair_rq *rq = CFSQ(m, d, q);
  fair_se *se = fair_ent(m, d, i);
  rq->load -= se->weight;
  rq->nr_running--;
  if (se->sched_delayed) rq->nr_delayed--;
  fair_overload_sync(m, d, fair_q_cpu(q));
  /* list_del_init(&se->group_node) (account_entity_dequeue) */
  if (i < FAIR_GSE) cfs_tasks_del(d, FRQ(m, d, fair_q_cpu(q)), i);
}

void fair_cfs_tasks_move(const psModel *m, psData *d, int cpu, int32_t i) {
  fair_rq *rq = FRQ(m, d, cpu);
  SE(&d->task[i])->list_stamp = ++rq->list_seq;
  if (rq->cfs_head == i) return;
  cfs_tasks_del(d, rq, i);
  cfs_tasks_add(d, rq, i);
}

/* avg + curr's part and load + curr's, as avg_vruntime and
 * vruntime_eligible start */
static void avg_with_curr(const psModel *m, const psData *d, const fair_rq *rq, int64_t *avg,
                          int64_t *load) {
  *avg = rq->avg_vruntime;
  *load = rq->avg_load;
  if (rq->curr >= 0 && rq->curr_on_rq) {
    const fair_se *c = fair_ent(m, d, rq->curr);
    *avg = s64_add(*avg, s64_mul(entity_key(rq, c), c->weight));
    *load += c->weight;
  }
}

uint64_t fair_avg_vruntime(const psModel *m, const psData *d, int q) {
  const fair_rq *rq = CFSQ(m, d, q);
  int64_t avg, load;
  avg_with_curr(m, d, rq, &avg, &load);
  if (load) {
    /* sign flips effective floor / ceiling */
    if (avg < 0) avg -= load - 1;
    avg /= load;
  }
  return rq->min_vruntime + (uint64_t)avg;
}

int fair_vruntime_eligible(const psModel *m, const psData *d, int q, uint64_t vruntime) {
  const fair_rq *rq = CFSQ(m, d, q);
  int64_t avg, load;
  avg_with_curr(m, d, rq, &avg, &load);
  return avg >= s64_mul(vdiff(vruntime, rq->min_vruntime), load);
}

int32_t fair_first(const fair_rq *rq) { return rq->leftmost; }

void fair_update_min_vruntime(const psModel *m, psData *d, int q, int with_avg) {
  fair_rq *rq = CFSQ(m, d, q);
  uint64_t vruntime = rq->min_vruntime;
  int curr = rq->curr >= 0 && rq->curr_on_rq;
  if (curr) vruntime = fair_ent(m, d, rq->curr)->vruntime;
  if (rq->root >= 0) {
    /* EEVDF's tree is by deadline: the root's augment holds the smallest
     * vruntime (6.12); CFS's leftmost is its smallest (6.5) */
    uint64_t first = with_avg ? fair_ent(m, d, rq->root)->min_vruntime
                              : fair_ent(m, d, rq->leftmost)->vruntime;
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

int64_t fair_f_weight(const psModel *m, const int64_t *a) { return fair_nice_weight((int)a[0]); }
int64_t fair_f_wmult(const psModel *m, const int64_t *a) { return sched_prio_to_wmult[a[0] + 20]; }
int64_t fair_f_calc_delta_fair(const psModel *m, const int64_t *a) {
  return (int64_t)fair_calc_delta_fair((uint64_t)a[0], fair_nice_weight((int)a[1]));
}
int64_t fair_f_factor(const psModel *m, const int64_t *a) {
  return fair_sysctl_factor((int)a[0], (int)a[1]);
}
