/* Where the fair schedulers put tasks on SMP, and how they move them: a
 * model of select_task_rq_fair, select_task_rq_rt and the load balancer
 * (kernel/sched/fair.c, rt.c) for one machine-wide LLC domain whose groups
 * are single CPUs.  What is kept and what is not:
 *
 * - wakeups: wake_affine's sync case (a sync waker alone on its CPU takes
 *   the wakee) and select_idle_sibling (the target if idle, else the
 *   previous CPU if idle, else the first idle CPU after the target);
 *   forks: the least loaded CPU (find_idlest_cpu, by runnable tasks then
 *   load.weight, the parent's CPU first on ties);
 * - balancing: rebalance_domains at the tick (interval sd_weight ms,
 *   doubling up to twice that while balanced, times busy_factor on a busy
 *   CPU, minus one jiffy, at most HZ/10), newidle_balance when a CPU finds
 *   nothing to run (one task, as on a preemptible kernel);
 *   find_busiest_queue by load (the overloaded CPU, more than one task, with
 *   the largest load.weight); calculate_imbalance: an idle CPU takes half
 *   the difference in tasks, a busy one half-way to the domain's average
 *   load, if the busiest exceeds it by imbalance_pct when it is itself
 *   overloaded; detach_tasks from the least recently run end of
 *   rq->cfs_tasks, skipping the running task, cache-hot tasks (ran within
 *   sched_migration_cost, until cache_nice_tries balances have failed) and
 *   tasks too heavy for the imbalance (load >> nr_balance_failed);
 * - left out: the sched-domain hierarchy (SMT, MC, NUMA levels), PELT
 *   (load.weight instead of load_avg, no util), capacity and misfit,
 *   active balancing of running tasks, NOHZ idle balancing (every CPU
 *   ticks), avg_idle's gate on newidle balancing, RT push/pull (an RT task
 *   only chooses its CPU as it wakes). */
#include <stdio.h>

#include "fair_common.h"

static int allowed(const psTask *p, int cpu) { return ps_cpu_test(&p->cpus_allowed, cpu); }

/* available_idle_cpu: nothing runs and nothing waits */
static int idle_cpu(const psModel *m, const psData *d, int cpu) {
  return ps_curr((psData *)d, cpu)->is_idle && !fair_rq_nr_running(FRQ(m, d, cpu));
}

void fair_set_task_cpu(const psModel *m, psData *d, psTask *p, int dest) {
  if (p->cpu == dest) return;
  ps_log(m, d, PS_EVT_MIGRATE, dest, p, p->cpu, p->prio, 0);
  ps_count_up(&p->nr_migrations);
  p->cpu = dest;
}

int fair_select_task_rq(const psModel *m, psData *d, psTask *p, psTask *waker, int sync, int fork) {
  if (m->ncpu == 1) return p->cpu;
  if (fork) {
    int best = p->cpu;
    for (int c = 0; c < m->ncpu; c++) {
      if (!allowed(p, c)) continue;
      const fair_rq *a = FRQ(m, d, c), *b = FRQ(m, d, best);
      uint32_t na = fair_rq_nr_running(a), nb = fair_rq_nr_running(b);
      if (!allowed(p, best) || na < nb || (na == nb && a->load < b->load)) best = c;
    }
    return best;
  }
  int prev = p->cpu, target = prev;
  /* wake_affine_idle: a sync wakeup from a task alone on its CPU */
  if (sync && waker && allowed(p, waker->cpu) && fair_rq_nr_running(FRQ(m, d, waker->cpu)) == 1)
    target = waker->cpu;
  /* select_idle_sibling */
  if (idle_cpu(m, d, target)) return target;
  if (prev != target && idle_cpu(m, d, prev)) return prev;
  for (int k = 1; k < m->ncpu; k++) {
    int c = (target + k) % m->ncpu;
    if (allowed(p, c) && idle_cpu(m, d, c)) return c;
  }
  return target;
}

int fair_select_task_rq_rt(const psModel *m, psData *d, psTask *p) {
  int cpu = p->cpu;
  const psTask *curr = ps_curr(d, cpu);
  if (m->ncpu == 1 || curr->is_idle || !fair_rt(curr) || curr->prio > p->prio) return cpu;
  /* find_lowest_rq: an idle CPU, else one running a fair task */
  for (int pass = 0; pass < 2; pass++)
    for (int c = 0; c < m->ncpu; c++) {
      const psTask *t = ps_curr(d, c);
      if (allowed(p, c) && (pass ? !fair_rt(t) : t->is_idle)) return c;
    }
  return cpu;
}

void fair_move_queued(const psModel *m, psData *d, psTask *p, int dest) {
  fair_dequeue_task(m, d, p, 0);
  fair_set_task_cpu(m, d, p, dest);
  fair_enqueue_task(m, d, p, ENQUEUE_MIGRATED);
  if (fair_check_preempt_curr(m, d, p, 0)) ps_resched_cpu(d, dest);
}

enum { CPU_IDLE, CPU_NOT_IDLE, CPU_NEWLY_IDLE };

/* can_migrate_task, the part that is about the task */
static int can_migrate(const psModel *m, const psData *d, const psTask *p, int src, int dst) {
  const fair_se *se = SEc(p);
  if (!p->on_rq || fair_rt(p) || se->sched_delayed || !allowed(p, dst) ||
      ps_curr((psData *)d, src) == p)
    return 0;
  /* task_hot: ran within sysctl_sched_migration_cost */
  int64_t delta = d->now_ns - (int64_t)se->exec_start;
  int hot = delta < FD(m)->migration_cost;
  return !hot || FRQ(m, d, dst)->nr_balance_failed > (uint32_t)FD(m)->cache_nice_tries;
}

/* load_balance(this_cpu, idle): returns the tasks pulled, -1 when balanced */
static int load_balance(const psModel *m, psData *d, int cpu, int idle) {
  fair_rq *this_rq = FRQ(m, d, cpu);
  /* The exact skip: the scan below only takes a runqueue other than this
   * one holding two runnable tasks, and changes nothing else.  With none,
   * or only this one, it finds nothing: return as it would, unscanned. */
  int32_t overloaded = FCPU(m, d, 0)->nr_overloaded;
  if (m->fast_paths & PS_FAST_SKIP && (overloaded == 0 || (overloaded == 1 && this_rq->overloaded))) {
    ps_fast_skipped(d);
    return -1;
  }
  /* find_busiest_group / find_busiest_queue, single-CPU groups */
  int busiest = -1;
  uint64_t total = 0;
  for (int c = 0; c < m->ncpu; c++) {
    const fair_rq *rq = FRQ(m, d, c);
    total += rq->load;
    if (c == cpu || fair_rq_nr_running(rq) < 2) continue;
    if (busiest < 0 || rq->load > FRQ(m, d, busiest)->load) busiest = c;
  }
  if (busiest < 0) return -1;
  fair_rq *src = FRQ(m, d, busiest);
  uint32_t local_nr = fair_rq_nr_running(this_rq);
  int by_load = local_nr > 0;
  int64_t imbalance;
  if (!by_load) {
    /* group_has_spare: even out the number of tasks */
    imbalance = (int64_t)(fair_rq_nr_running(src) - local_nr) >> 1;
  } else {
    int64_t busiest_load = (int64_t)src->load, local_load = (int64_t)this_rq->load;
    int64_t avg = (int64_t)(total / (uint64_t)m->ncpu);
    if (local_load >= busiest_load) return -1;
    if (local_nr > 1 && 100 * busiest_load <= FD(m)->imbalance_pct * local_load) return -1;
    imbalance = busiest_load - avg < avg - local_load ? busiest_load - avg : avg - local_load;
  }
  if (imbalance <= 0) return -1;
  /* detach_tasks: from the tail of rq->cfs_tasks (list_last_entry), the
   * least recently enqueued or picked, toward the head.  The kernel moves
   * a task it passes over to the head (list_move(&p->se.group_node,
   * tasks)) and looks at most loop_max = min(sysctl_sched_nr_migrate,
   * nr_running) times; the model leaves a passed-over task in its place and
   * walks on, so it looks at each task once, at most 32 (6.12 fair.c
   * detach_tasks).  Delayed tasks are on the list but not runnable: passed
   * without a look. */
  int pulled = 0;
  int32_t next = src->cfs_tail;
  for (int loop = 0; loop < 32 && imbalance > 0; loop++) {
    if (idle != CPU_NOT_IDLE && fair_rq_nr_running(src) <= 1) break;
    while (next >= 0 && !d->task[next].on_rq) next = SE(&d->task[next])->list_prev;
    if (next < 0) break;
    psTask *p = &d->task[next];
    /* taken before p may leave the list (detach_task) */
    next = SE(p)->list_prev;
    if (!can_migrate(m, d, p, busiest, cpu)) continue;
    if (by_load) {
      /* shift_right(load, nr_balance_failed): the kernel's load is an
       * unsigned long, and a shift by its width or more gives 0 */
      uint32_t shift = this_rq->nr_balance_failed;
      uint64_t load = shift < 64 ? (uint64_t)SE(p)->weight >> shift : 0;
      if (load > (uint64_t)imbalance) continue;
      imbalance -= SE(p)->weight;
    } else {
      imbalance--;
    }
    fair_move_queued(m, d, p, cpu);
    ps_count_up(&this_rq->nr_balance_pulls);
    pulled++;
    /* newidle balancing stops at the first task on a preemptible kernel */
    if (idle == CPU_NEWLY_IDLE) break;
  }
  return pulled;
}

/* load_balance's bookkeeping of sd->nr_balance_failed and
 * sd->balance_interval around one call */
static int balance(const psModel *m, psData *d, int cpu, int idle) {
  fair_rq *rq = FRQ(m, d, cpu);
  int pulled = load_balance(m, d, cpu, idle);
  if (pulled < 0) {
    rq->nr_balance_failed = 0;
    if (idle != CPU_NEWLY_IDLE && rq->balance_interval < 2 * FD(m)->balance_min_interval)
      rq->balance_interval *= 2;
    return 0;
  }
  if (!pulled) {
    if (idle != CPU_NEWLY_IDLE) rq->nr_balance_failed++;
  } else {
    rq->nr_balance_failed = 0;
  }
  rq->balance_interval = (uint32_t)FD(m)->balance_min_interval;
  return pulled;
}

void fair_trigger_load_balance(const psModel *m, psData *d, int cpu) {
  fair_rq *rq = FRQ(m, d, cpu);
  if (d->jiffies < rq->next_balance) return;
  balance(m, d, cpu, idle_cpu(m, d, cpu) ? CPU_IDLE : CPU_NOT_IDLE);
  /* get_sd_balance_interval, with the state after balancing */
  int busy = !idle_cpu(m, d, cpu);
  int64_t ms = (int64_t)rq->balance_interval * (busy ? FD(m)->busy_factor : 1);
  int64_t interval = (ms * m->hz + 999) / 1000;  /* msecs_to_jiffies */
  if (busy) interval -= 1;
  /* max_load_balance_interval: HZ/10 at boot, then HZ * online CPUs / 10
   * from update_max_interval() once the CPUs are up (kernel/sched/fair.c) */
  int64_t max = (int64_t)m->hz * m->ncpu / 10 > 0 ? (int64_t)m->hz * m->ncpu / 10 : 1;
  if (interval < 1) interval = 1;
  if (interval > max) interval = max;
  rq->next_balance = d->jiffies + (uint64_t)interval;
}

int fair_newidle_balance(const psModel *m, psData *d, int cpu) {
  return balance(m, d, cpu, CPU_NEWLY_IDLE) > 0;
}
