/* The 2.5 load balancer (fact sheet §5.10 and §7): rebalance_tick,
 * find_busiest_queue with the prev_cpu_load one-sample filter and the 25 %
 * threshold, load_balance's scan (expired array first, best prio first,
 * from the tail of each list), can_migrate_task and pull_task. */
#include "balance_o1.h"


/* The balancer's parameters, read from the member's table. */
static uint32_t cache_decay_ticks(const psModel *m) {
  return (uint32_t)m->param[o1_family_of(m)->p_cache_decay_ticks];
}

static void move_task(const psModel *m, psData *d, psTask *p, int dest) {
  int src = p->cpu;
  o1_dequeue_task(m, d, p);
  o1_rq(m, d, src)->nr_running--;
  o1_nr_running_changed(m, d, src);
  p->cpu = dest;
  o1_rq(m, d, dest)->nr_running++;
  o1_nr_running_changed(m, d, dest);
  o1_enqueue_task(m, d, p, o1_rq(m, d, dest)->active);
  ps_count_up(&p->nr_migrations);
  ps_log(m, d, PS_EVT_MIGRATE, dest, p, src, p->prio, 0);
}

/* The migration thread (set_cpus_allowed) for a task that is not running:
 * a queued one moves to dest's active array, rescheduling dest if it beats
 * dest's task; a sleeping one will wake on dest. */
void o1_migrate(const psModel *m, psData *d, psTask *p, int dest) {
  if (!p->on_rq) {
    p->cpu = dest;  /* asleep: it wakes there */
    return;
  }
  move_task(m, d, p, dest);
  if (p->prio < ps_curr(d, dest)->prio) ps_resched_cpu(d, dest);
}

/* pull_task: into this CPU's active array, even from busiest's expired. */
static void pull_task(const psModel *m, psData *d, psTask *p, int cpu) {
  move_task(m, d, p, cpu);
  ps_count_up(&o1_rq(m, d, cpu)->nr_balance_pulls);
  psTask *curr = ps_curr(d, cpu);
  int equal_prio_preempt = (int)o1_param(m, o1_family_of(m)->p_pull_equal_prio_preempt, 1);
  if (p->prio < curr->prio ||
      (equal_prio_preempt && p->prio == curr->prio && p->time_slice > curr->time_slice))
    ps_resched_cpu(d, cpu);
}

/* find_busiest_queue by runqueue length; *imbalance is in tasks.  The
 * kernel's loop keeps the first CPU whose filtered load beats max_load
 * (from 1); here the loads come first, then their greatest, then the
 * first CPU that has it: the same CPU, without the kernel's two branches
 * per CPU, which went one way or the other at random (bench_ticks (h) on
 * 64 CPUs: 1-1.6 % of the run). */
static int find_busiest_queue(const psModel *m, psData *d, int cpu, int idle, int *imbalance) {
  o1_runqueue *this_rq = o1_rq(m, d, cpu);
  uint32_t *prev = this_rq->prev_cpu_load;
  int nr_running;
  if (idle || this_rq->nr_running > prev[cpu])
    nr_running = (int)this_rq->nr_running;
  else
    nr_running = (int)prev[cpu];
  uint32_t load[PS_MAX_CPUS], max_load = 0, max_len = 0;
  for (int i = 0; i < m->ncpu; i++) {
    uint32_t len = o1_rq(m, d, i)->nr_running;
    load[i] = idle || len < prev[i] ? len : prev[i];
    prev[i] = len;
    max_len = len > max_len ? len : max_len;
  }
  this_rq->prev_le1 = max_len <= 1;
  load[cpu] = 0;  /* not a candidate */
  for (int i = 0; i < m->ncpu; i++) max_load = load[i] > max_load ? load[i] : max_load;
  if (max_load <= 1) return -1;
  int busiest = 0;
  while (load[busiest] != max_load) busiest++;
  /* int arithmetic, as in the kernel (`int nr_running, load, max_load` and
   * `int *imbalance`): when this CPU remembers more load than the busiest
   * CPU's filtered load the result is <= 0 and no task moves */
  *imbalance = ((int)max_load - nr_running) / 2;
  /* it needs an at least ~25% imbalance to trigger balancing */
  if (!idle && *imbalance < ((int)max_load + 3) / 4) return -1;
  if ((int)o1_rq(m, d, busiest)->nr_running <= nr_running + 1) return -1;
  return busiest;
}

/* The extension: the busiest CPU is the one whose prio_avg (how well its
 * tasks have been running) exceeds this CPU's by prio_avg_imbalance, and
 * one task moves per balance. */
static int find_busiest_by_prio_avg(const psModel *m, psData *d, int cpu, int *imbalance) {
  uint32_t mine = o1_rq(m, d, cpu)->prio_avg;
  int busiest = -1;
  /* prio_avg_imbalance follows balance_prio_avg in the table */
  uint32_t best = mine + (uint32_t)m->param[o1_family_of(m)->p_balance_prio_avg + 1];
  for (int i = 0; i < m->ncpu; i++) {
    o1_runqueue *src = o1_rq(m, d, i);
    if (i != cpu && src->nr_running >= 2 && src->prio_avg > best) {
      best = src->prio_avg;
      busiest = i;
    }
  }
  *imbalance = 1;
  return busiest;
}

/* Whether some runqueue holds two tasks or more (o1_nr_running_changed
 * keeps the count). */
static int any_two(const psModel *m, const psData *d) { return o1_rq(m, d, 0)->nr_ge2 > 0; }

static int can_migrate_task(const psModel *m, const psData *d, const psTask *p, int busiest,
                            int cpu) {
  return o1_jiffies(d) - o1_sched_of_const(p)->last_run > cache_decay_ticks(m) &&
         ps_curr(d, busiest) != p && ps_cpu_test(&p->cpus_allowed, cpu);
}

int o1_load_balance(const psModel *m, psData *d, int cpu, int idle) {
  int imbalance = 0;
  /* schedule()'s scan of an empty runqueue takes the second skip of
   * o1_rebalance, for the same reason: it reads only the lengths, which are
   * all at most 1 (it finds nothing), and writes them over prev_cpu_load[],
   * whose values then differ from the kernel's only between 0 and 1, which
   * no later scan can tell apart. */
  if (idle && m->fast_paths & PS_FAST_SKIP && o1_rq(m, d, cpu)->prev_le1 && !any_two(m, d)) {
    ps_fast_skipped(d);
    return -1;
  }
  /* schedule() on an empty runqueue (idle=1) always pulls by length */
  int by_prio_avg = (int)o1_param(m, o1_family_of(m)->p_balance_prio_avg, 0);
  int busiest = by_prio_avg && !idle ? find_busiest_by_prio_avg(m, d, cpu, &imbalance)
                                     : find_busiest_queue(m, d, cpu, idle, &imbalance);
  if (busiest < 0) return -1;
  o1_runqueue *src = o1_rq(m, d, busiest);
  int expired = !src->active;
  int a = src->arrays[expired].nr_active ? expired : src->active;
  int pulled = 0;
  for (;;) {
    psPrioArray *array = &src->arrays[a];
    for (int idx = psu_find_first_bit(array); idx < array->max_prio; idx++) {
      int32_t i = array->tail[idx];
      while (i >= 0) {
        psTask *p = &d->task[i];
        int32_t prev = psu_links(d->task, i)->run_prev;  /* pull_task unlinks p */
        if (can_migrate_task(m, d, p, busiest, cpu)) {
          pull_task(m, d, p, cpu);
          pulled++;
          if (idle || !--imbalance) return pulled;
        }
        i = prev;
      }
    }
    if (a != expired) return pulled;
    a = src->active;
  }
}

uint64_t o1_busy_rebalance_after(const psModel *m, psData *d, int cpu) {
  uint64_t busy = (uint64_t)m->param[o1_family_of(m)->p_cache_decay_ticks + 2];
  uint64_t j = d->jiffies;
  o1_runqueue *rq = o1_rq(m, d, cpu);
  if (!o1_rebalance_cached(m, d, cpu, j)) {
    rq->rebalance_at = j - j % busy + busy;
    rq->rebalance_every = busy;
  }
  return rq->rebalance_at;
}

void o1_rebalance(const psModel *m, psData *d, int cpu, int idle) {
  uint64_t j = d->jiffies;
  /* IDLE_REBALANCE_TICK and BUSY_REBALANCE_TICK follow cache_decay_ticks */
  const int64_t *ticks = &m->param[o1_family_of(m)->p_cache_decay_ticks + 1];
  /* an idle CPU balances every IDLE_REBALANCE_TICK, but with idle=0; a
   * busy one when BUSY_REBALANCE_TICK divides j */
  if (idle ? j % (uint64_t)ticks[0] != 0 : o1_busy_rebalance_after(m, d, cpu) - (uint64_t)ticks[1] != j)
    return;
  /* The exact skip.  find_busiest_queue reads nothing but runqueue lengths
   * and this CPU's prev_cpu_load[], which it sets to those lengths.  So
   * once a scan found no busiest queue with prev_cpu_load[] already equal
   * to the lengths (the scan before saw the same ones), every later scan
   * finds none and writes the same values, until some length changes.
   * (Balancing by prio_avg reads prio_avg, which moves every tick: no skip.) */
  o1_runqueue *rq = o1_rq(m, d, cpu);
  uint64_t gen = o1_rq(m, d, 0)->nr_running_gen;
  int by_prio_avg = (int)o1_param(m, o1_family_of(m)->p_balance_prio_avg, 0);
  int skip = m->fast_paths & PS_FAST_SKIP && !by_prio_avg;
  if (skip && rq->balance_steady && rq->balance_gen == gen) {
    ps_fast_skipped(d);
    return;
  }
  /* The second exact skip, for mostly idle machines whose lengths change
   * at every tick: a scan's loads are min(length, prev_cpu_load[]), so
   * once every prev_cpu_load[] it wrote is at most 1 it finds no busiest
   * queue (max_load <= 1) however the lengths move; and while no runqueue
   * holds two tasks, what it writes is at most 1 again.  Its prev_cpu_load[]
   * then differ from the kernel's by values that no later scan can tell
   * apart (at most 1 each: the next scan finds nothing either way and
   * writes the lengths over them). */
  if (skip && rq->prev_le1 && !any_two(m, d)) {
    ps_fast_skipped(d);
    return;
  }
  int rc = o1_load_balance(m, d, cpu, 0);
  rq->balance_steady = rc < 0 && rq->balance_gen == gen;
  rq->balance_gen = o1_rq(m, d, 0)->nr_running_gen;
}

void o1_sync_fast_migrate(const psModel *m, psData *d, psTask *p, const psTask *waker) {
  if (!waker || p->cpu == waker->cpu || !ps_cpu_test(&p->cpus_allowed, waker->cpu)) return;
  ps_log(m, d, PS_EVT_MIGRATE, waker->cpu, p, p->cpu, p->prio, 1);
  p->cpu = waker->cpu;
  ps_count_up(&p->nr_migrations);
}
