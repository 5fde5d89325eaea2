/* The O(1) family's shared code (o1_family.h). */
#include "o1_family.h"

#include <stdio.h>
#include <string.h>

#include "balance_o1.h"

/* ---- shared pieces ---- */

uint32_t o1_credit_overflow(const psModel *m, psData *d, psTask *p, psTask *waker,
                            int32_t sleep_avg, uint32_t max, int *requeue_waker) {
  o1_sched *ps = o1_sched_of(p);
  o1_sched *ws = o1_sched_of(waker);
  sleep_avg += (int32_t)ws->sleep_avg - (int32_t)max;
  if (sleep_avg > (int32_t)max) sleep_avg = (int32_t)max;
  if (ws->sleep_avg != (uint32_t)sleep_avg) {
    int64_t amount = (int64_t)sleep_avg - ws->sleep_avg;
    ws->sleep_avg = (uint32_t)sleep_avg;
    ps_count_add(&ws->bonus_received, amount);
    ps_count_add(&ps->bonus_given, amount);
    ps_log(m, d, PS_EVT_BACKBOOST, waker->cpu, waker, p->pid, waker->prio, amount);
    *requeue_waker = 1;
  }
  return max;
}

int o1_fork_split(psData *d, psTask *parent, psTask *child) {
  o1_sched *cs = o1_sched_of(child);
  /* do_fork: let the child run first (set_need_resched on the parent) */
  ps_resched_cpu(d, parent->cpu);
  psu_links_clear(child);
  cs->bonus_given = cs->bonus_received = 0;
  child->time_slice = (parent->time_slice + 1) >> 1;
  cs->first_time_slice = 1;
  parent->time_slice >>= 1;
  cs->last_run = o1_jiffies(d);
  if (parent->time_slice) return 0;
  /* the parent had one tick left: it expires now, tick and all */
  parent->time_slice = 1;
  return 1;
}

void o1_wake_child_smart(const psModel *m, psData *d, psTask *parent, psTask *p) {
  if (!parent->on_rq) {
    o1_activate_plain(m, d, p);
    return;
  }
  o1_runqueue *rq = o1_rq(m, d, parent->cpu);
  int array = o1_array(parent);
  p->prio = parent->prio;
  psu_insert_before(d->task, ps_index(d, p), ps_index(d, parent), &rq->arrays[array], array);
  /* list_add_tail(&p->run_list_lru, ...): the lru list lives in active */
  if (o1_lru_of(m, p)) psu_lru_add_tail(d->task, ps_index(d, p), &rq->arrays[rq->active]);
  rq->nr_running++;
  o1_nr_running_changed(m, d, parent->cpu);
}

void o1_tick_rt(const psModel *m, psData *d, int cpu, psTask *p, int slice) {
  if (p->policy != PS_SCHED_RR || --p->time_slice) return;
  o1_runqueue *rq = o1_rq(m, d, cpu);
  p->time_slice = slice;
  o1_sched_of(p)->first_time_slice = 0;
  ps_resched_cpu(d, cpu);
  o1_dequeue_task(m, d, p);
  o1_enqueue_task(m, d, p, rq->active);
}

/* ---- shared hooks ---- */

void o1_init_rq(const psModel *m, psData *d, int cpu) {
  o1_runqueue *rq = o1_rq(m, d, cpu);
  psu_array_init(&rq->arrays[0], o1_family_of(m)->max_prio);
  psu_array_init(&rq->arrays[1], o1_family_of(m)->max_prio);
}

/* schedule(), step 1: prev->last_run = jiffies on every entry. */
void o1_put_prev(const psModel *m, psData *d, psTask *prev) {
  if (!prev->is_idle) o1_sched_of(prev)->last_run = o1_jiffies(d);
}

void o1_deactivate(const psModel *m, psData *d, psTask *prev) { o1_deactivate_task(m, d, prev); }

/* schedule(), steps 3-5 (§5.2).  Houston's tick never fills the expired
 * array, so there the swap never happens. */
psTask *o1_pick_next(const psModel *m, psData *d, int cpu) {
  o1_runqueue *rq = o1_rq(m, d, cpu);
  if (!rq->nr_running && m->ncpu > 1) o1_load_balance(m, d, cpu, 1);
  if (!rq->nr_running) {
    rq->expired_timestamp = 0;
    return &d->task[d->cpu[cpu].idle];
  }
  psPrioArray *array = &rq->arrays[rq->active];
  if (!array->nr_active) {
    rq->active = !rq->active;
    array = &rq->arrays[rq->active];
    rq->expired_timestamp = 0;
    ps_count_up(&rq->nr_array_switches);
    ps_log(m, d, PS_EVT_ARRAY_SWITCH, cpu, NULL, -1, 0, rq->nr_array_switches);
  }
  return &d->task[array->head[psu_find_first_bit(array)]];
}

/* o1_wakeup_end's back-boost: the waker drops to the tail of its (new)
 * prio list in the same array. */
void o1_requeue_waker(const psModel *m, psData *d, psTask *waker) {
  int array = o1_array(waker);
  o1_dequeue_task(m, d, waker);
  o1_set_prio(m, d, waker, o1_family_of(m)->effective_prio(m, waker));
  o1_enqueue_task(m, d, waker, array);
}

/* sched_exit (§5.7), when the zombie p is reaped. */
void o1_task_exit(const psModel *m, psData *d, psTask *p, psTask *parent) {
  if (!parent) return;
  const o1_family *f = o1_family_of(m);
  o1_sched *cs = o1_sched_of(p), *ps = o1_sched_of(parent);
  if (cs->first_time_slice) {
    parent->time_slice += p->time_slice;
    if (parent->time_slice > m->param[f->p_max_timeslice])
      parent->time_slice = (int32_t)m->param[f->p_max_timeslice];
  }
  /* a (relative) CPU-hog child takes some of the parent's sleep_avg */
  uint32_t w = (uint32_t)m->param[f->p_exit_weight];
  if (cs->sleep_avg < ps->sleep_avg) ps->sleep_avg = (ps->sleep_avg * w + cs->sleep_avg) / (w + 1);
}

/* set_user_nice (§5.9); NICE_TO_PRIO(n) is MAX_PRIO - 20 + n in both. */
void o1_set_nice(const psModel *m, psData *d, psTask *p, int nice) {
  int static_prio = o1_family_of(m)->max_prio - 20 + nice;
  if (o1_rt_task(p)) {
    p->static_prio = static_prio;
    return;
  }
  int array = o1_array(p);
  if (array >= 0) o1_dequeue_task(m, d, p);
  p->static_prio = static_prio;
  o1_set_prio(m, d, p, static_prio);
  if (array >= 0) {
    o1_enqueue_task(m, d, p, array);
    /* "raised priority" compares with the updated static_prio: never true */
    if (ps_curr(d, p->cpu) == p) ps_resched_cpu(d, p->cpu);
  }
}

/* setscheduler (§5.9): no preemption check. */
void o1_set_scheduler(const psModel *m, psData *d, psTask *p, int policy, int rt_priority) {
  const o1_family *f = o1_family_of(m);
  int queued = p->on_rq;
  if (queued) o1_deactivate_task(m, d, p);
  p->policy = policy;
  p->rt_priority = rt_priority;
  o1_set_prio(m, d, p,
              policy != PS_SCHED_NORMAL ? O1_MAX_RT_PRIO - 1 - rt_priority : p->static_prio);
  if (!queued) return;
  if (o1_param(m, f->p_setscheduler_activate, 0))
    f->activate_task(m, d, p, NULL);
  else
    o1_activate_plain(m, d, p);
}

const psColumn o1_queue_columns[3] = {{"array", "active,expired"}, {"prio", NULL}, {"pid", NULL}};

/* The queue of `cpu` as (array, prio, pid) rows, array 0 for the active one
 * and 1 for the expired one. */
int o1_dump(const psModel *m, const psData *d, int cpu, int32_t *out, int max) {
  const o1_runqueue *rq = o1_rq(m, d, cpu);
  int n = 0;
  for (int a = 0; a < 2; a++) {
    const psPrioArray *arr = &rq->arrays[a ? !rq->active : rq->active];
    for (int k = 0; k < arr->max_prio; k++)
      for (int32_t i = arr->head[k]; i >= 0 && n < max; i = psu_links_const(&d->task[i])->run_next) {
        out[3 * n] = a;
        out[3 * n + 1] = k;
        out[3 * n + 2] = d->task[i].pid;
        n++;
      }
  }
  return n;
}

static int index_ok(int32_t i, int32_t n) { return i >= -1 && i < n; }

/* Every stored index and prio in range, so that walking the lists is safe
 * on a state loaded from a damaged snapshot. */
static int indices_ok(const psModel *m, const psData *d, char *err, int errlen) {
  int max_prio = o1_family_of(m)->max_prio;
  for (int32_t i = 0; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    const psPrioLinks *l = psu_links_const(t);
    if (!index_ok(l->run_next, d->ntask) || !index_ok(l->run_prev, d->ntask) ||
        !index_ok(l->lru_next, d->ntask) || !index_ok(l->lru_prev, d->ntask) ||
        l->array < -1 || l->array > 1 || t->prio < 0 || t->prio > max_prio) {
      snprintf(err, errlen, "pid %d: links or prio out of range", t->pid);
      return 0;
    }
  }
  for (int c = 0; c < m->ncpu; c++) {
    const o1_runqueue *rq = o1_rq(m, d, c);
    if (rq->active < 0 || rq->active > 1) {
      snprintf(err, errlen, "cpu %d: active array %d", c, rq->active);
      return 0;
    }
    for (int a = 0; a < 2; a++) {
      const psPrioArray *arr = &rq->arrays[a];
      int ok = arr->max_prio == max_prio && index_ok(arr->lru_head, d->ntask) &&
               index_ok(arr->lru_tail, d->ntask);
      for (int k = 0; ok && k < PS_PRIO_LEVELS; k++)
        ok = index_ok(arr->head[k], d->ntask) && index_ok(arr->tail[k], d->ntask);
      if (!ok) {
        snprintf(err, errlen, "cpu %d array %d: an index out of range", c, a);
        return 0;
      }
    }
  }
  return 1;
}

/* Bitmap and lists agree, links are consistent, nr_active and nr_running
 * count what is queued, queued-ness agrees with on_rq, with lru the lru
 * list holds exactly the queued non-RT tasks, and without expired_used the
 * expired array stays empty. */
int o1_check(const psModel *m, const psData *d, char *err, int errlen) {
  const o1_family *f = o1_family_of(m);
  int max_prio = f->max_prio;
  if (!indices_ok(m, d, err, errlen)) return -1;
  for (int32_t i = m->ncpu; i < d->ntask; i++) {
    const psTask *t = &d->task[i];
    if (t->on_rq != (o1_array(t) >= 0)) {
      snprintf(err, errlen, "pid %d: on_rq %d but array %d", t->pid, t->on_rq, o1_array(t));
      return -1;
    }
    /* last_run is a 32-bit jiffy, as on i386: before jiffies first wraps
     * it cannot lie ahead of them.  (From then on any value is some sleep
     * modulo 2^32, and activate_task's int arithmetic overflows for sleeps
     * of 2^31 jiffies and more, as the kernel's did.) */
    /* dequeuing unlinks a task from its prio list and the lru list
     * (prio_array.h): one in no array is in no list */
    const psPrioLinks *l = psu_links_const(t);
    if (t->pid && l->array < 0 &&
        (l->run_next != -1 || l->run_prev != -1 || l->lru_next != -1 || l->lru_prev != -1)) {
      snprintf(err, errlen, "pid %d: in no array but linked in a list", t->pid);
      return -1;
    }
    /* static_prio follows nice (set_user_nice, NICE_TO_PRIO), whatever the
     * policy; prio indexes the arrays.  A crafted static_prio overflowed
     * the SCHED_RR timeslice's arithmetic */
    if (t->pid && (t->static_prio != max_prio - 20 + t->nice || t->prio < 0 || t->prio >= max_prio)) {
      snprintf(err, errlen, "pid %d: static_prio %d, prio %d: nice %d gives static_prio %d, and "
               "prio lies in 0..%d", t->pid, t->static_prio, t->prio, t->nice,
               max_prio - 20 + t->nice, max_prio - 1);
      return -1;
    }
    /* without Houston's lru list nothing links it */
    if (!f->lru && (l->lru_next != -1 || l->lru_prev != -1)) {
      snprintf(err, errlen, "pid %d: linked in an lru list this policy does not keep", t->pid);
      return -1;
    }
    /* a slice that runs out is refilled at that tick (expire), so a live
     * task always has one left: scheduler_tick's `if (!--p->time_slice)`
     * would count a 0 down past it */
    if (t->pid && t->exit_ns < 0 && t->time_slice < 1) {
      snprintf(err, errlen, "pid %d: time_slice %d, but a live task has at least 1", t->pid,
               t->time_slice);
      return -1;
    }
    if (t->pid && d->jiffies <= UINT32_MAX && o1_sched_of_const(t)->last_run > d->jiffies) {
      snprintf(err, errlen, "pid %d: last_run %u is after jiffies %llu", t->pid,
               o1_sched_of_const(t)->last_run, (unsigned long long)d->jiffies);
      return -1;
    }
  }
  int32_t ge2 = 0;
  for (int c = 0; c < m->ncpu; c++) {
    const o1_runqueue *rq = o1_rq(m, d, c);
    uint32_t queued = 0;
    for (int a = 0; a < 2; a++) {
      const psPrioArray *arr = &rq->arrays[a];
      int n = 0, normal = 0, nlru = 0;
      for (int k = 0; k <= max_prio; k++) {
        int bit = (int)(arr->bitmap[k / 64] >> (k % 64) & 1);
        if (k == max_prio ? !bit : bit != (arr->head[k] >= 0)) {
          snprintf(err, errlen, "cpu %d array %d: bit %d disagrees with its list", c, a, k);
          return -1;
        }
        if (k == max_prio) break;
        int32_t prev = -1;
        for (int32_t i = arr->head[k]; i >= 0; i = psu_links_const(&d->task[i])->run_next) {
          const psTask *t = &d->task[i];
          const psPrioLinks *l = psu_links_const(t);
          if (t->prio != k || l->array != a || t->cpu != c || l->run_prev != prev) {
            snprintf(err, errlen, "cpu %d array %d: pid %d misqueued at prio %d", c, a, t->pid, k);
            return -1;
          }
          prev = i;
          normal += k >= O1_MAX_RT_PRIO;
          if (++n > d->ntask) {
            snprintf(err, errlen, "cpu %d array %d: cycle in list %d", c, a, k);
            return -1;
          }
        }
        if (arr->tail[k] != prev) {
          snprintf(err, errlen, "cpu %d array %d: tail of list %d is wrong", c, a, k);
          return -1;
        }
      }
      /* the lru list both ways, as psu_lru_del follows it */
      int32_t lru_last = -1;
      for (int32_t i = arr->lru_head; i >= 0 && nlru <= d->ntask;
           i = psu_links_const(&d->task[i])->lru_next) {
        if (psu_links_const(&d->task[i])->lru_prev != lru_last) {
          snprintf(err, errlen, "cpu %d array %d: the lru list's back link at slot %d is wrong", c,
                   a, i);
          return -1;
        }
        lru_last = i;
        nlru++;
      }
      if (arr->lru_tail != lru_last) {
        snprintf(err, errlen, "cpu %d array %d: the lru list's tail is wrong", c, a);
        return -1;
      }
      if (n != arr->nr_active || (f->lru ? nlru != normal : nlru != 0)) {
        snprintf(err, errlen, "cpu %d array %d: nr_active %d, %d queued, %d normal, lru %d", c, a,
                 arr->nr_active, n, normal, nlru);
        return -1;
      }
      queued += (uint32_t)n;
    }
    if (queued != rq->nr_running) {
      snprintf(err, errlen, "cpu %d: nr_running %u but %u queued", c, rq->nr_running, queued);
      return -1;
    }
    if (rq->ge2 != (rq->nr_running >= 2)) {
      snprintf(err, errlen, "cpu %d: ge2 %d with nr_running %u", c, rq->ge2, rq->nr_running);
      return -1;
    }
    ge2 += rq->ge2;
    if (rq->rebalance_every ? rq->rebalance_at % rq->rebalance_every != 0 : rq->rebalance_at) {
      snprintf(err, errlen, "cpu %d: rebalance_at %llu is not a multiple of %llu", c,
               (unsigned long long)rq->rebalance_at, (unsigned long long)rq->rebalance_every);
      return -1;
    }
    if (!f->expired_used && rq->arrays[!rq->active].nr_active) {
      snprintf(err, errlen, "cpu %d: the expired array is not empty", c);
      return -1;
    }
  }
  if (ge2 != o1_rq(m, d, 0)->nr_ge2) {
    snprintf(err, errlen, "nr_ge2 %d but %d runqueues hold two tasks or more",
             o1_rq(m, d, 0)->nr_ge2, ge2);
    return -1;
  }
  return 0;
}

void o1_retune(const psModel *m, psData *d) {
  uint32_t max = (uint32_t)m->param[o1_family_of(m)->p_max_sleep_avg];
  for (int32_t i = 0; i < d->ntask; i++) {
    o1_sched *s = o1_sched_of(&d->task[i]);
    if (s->sleep_avg > max) s->sleep_avg = max;
  }
}

int o1_check_init(const psModel *m, const psTask *t, char *err, int errlen) {
  const o1_sched *s = o1_sched_of_const(t);
  int64_t max = m->param[o1_family_of(m)->p_max_sleep_avg];
  if (s->sleep_avg > max) {
    snprintf(err, errlen, "sleep_avg=%u is outside the allowed range 0..%lld (max_sleep_avg)",
             s->sleep_avg, (long long)max);
    return -1;
  }
  if (s->first_time_slice != 0 && s->first_time_slice != 1) {
    snprintf(err, errlen, "first_time_slice=%d is outside the allowed range 0..1",
             s->first_time_slice);
    return -1;
  }
  return 0;
}
