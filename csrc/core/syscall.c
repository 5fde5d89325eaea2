/* The syscalls: the one path by which a task acts on the machine, whether
 * its program asks (the interpreter returns a request, program.h) or
 * Python does between steps (renice, setscheduler, set_cpus_allowed). */
#include <stdio.h>

#include "engine_private.h"

/* An hrtimer sleep (2.6.16 on: nanosleep, clock_nanosleep, and poll and
 * select timeouts).  6.x kernel/time/hrtimer.c, hrtimer_nanosleep: "slack =
 * current->timer_slack_ns; if (rt_task(current)) slack = 0;" (6.12:
 * rt_or_dl_task), then hrtimer_set_expires_range_ns(&t.timer, rqtp, slack):
 * soft expiry rqtp, hard expiry rqtp + slack; init/init_task.c gives every
 * task ".timer_slack_ns = 50000" (50 us, "default slack") and fork copies
 * it.  The clock event device is programmed for the earliest hard
 * expiry (__hrtimer_next_event_base reads hrtimer_get_expires, the hard
 * one), and __hrtimer_run_queues runs, at whatever interrupt, every timer
 * whose soft expiry has passed.  The simulator wakes the sleeper at the
 * hard expiry, rqtp + slack: when nothing else interrupts its CPU within
 * the slack -- an idle CPU, whose tick NO_HZ has stopped, as a lone sleeper's
 * is -- that is when it wakes; an earlier interrupt inside the 50 us (a busy
 * CPU's tick, another timer) would wake it at that interrupt instead, which
 * the simulator does not model.  The wakeup comes from interrupt context
 * (hrtimer_wakeup), as a jiffy timer's does.  Ties at one instant: the
 * per-CPU rbtree orders by hard expiry and puts a timer after those of the
 * same expiry already queued (lib/timerqueue.c, timerqueue_add: only a
 * strictly earlier expiry goes left), so they fire in arming order: the
 * rank is the arming sequence number alone. */
static int64_t hrtimer_sleep(const psModel *m, psData *d, psTask *p, int64_t expires) {
  int64_t slack = p->policy == PS_SCHED_NORMAL ? m->param[m->slack_param] : 0;
  int64_t t = expires + slack;
  /* an expiry already past is programmed for the clock event's minimum
   * delta (clockevents_program_event): the next nanosecond here */
  if (t <= d->now_ns) t = d->now_ns + 1;
  p->state = PS_TASK_INTERRUPTIBLE;
  psEvt e = {.time_ns = t, .rank = ps_timer_seq(d), .cls = PS_EV_TIMER, .key = ps_index(d, p)};
  if (psu_evq_push(&d->evq, e)) ps_fail(d, "out of memory queueing an event");
  return t;
}

static inline int hrtimer_sleeps(const psModel *m) {
  return m->hrtimer_param >= 0 && m->param[m->hrtimer_param];
}

/* A timer to an absolute time t > now.  A jiffy timer (2.4, 2.5;
 * sys_nanosleep's schedule_timeout) expires at the first tick at or after
 * t, and never at the current tick, whose timers have already run; an
 * hrtimer (hrtimer_sleep on) at t plus the task's slack.  Returns the
 * expiry.  A sleep of ns is one to now + ns. */
static int64_t do_sleep_until(const psModel *m, psData *d, psTask *p, int64_t t) {
  if (hrtimer_sleeps(m)) return hrtimer_sleep(m, d, p, t);
  uint64_t j = (uint64_t)((t + m->tick_ns - 1) / m->tick_ns);
  if (j <= d->jiffies) j = d->jiffies + 1;
  p->state = PS_TASK_INTERRUPTIBLE;
  ps_push_timer(m, d, j, p);
  return ps_jiffy_time(m, j);
}

/* Periods lost: interbench's "intervals = (current_time - deadline) /
 * interval + 1" for a deadline already passed. */
static int64_t periods_lost(int64_t now, int64_t deadline, int64_t interval) {
  return (now - deadline) / interval + 1;
}

/* One step of a periodic op, interbench 0.31's periodic_schedule() (read
 * from ckolivas/interbench, interbench.c) on the engine's clock, in ns:
 * phase 0 as the call begins (the task runs after its wakeup), phase 1
 * when its work is done.  The timekeeping thread that measures the
 * oversleep is the timer's own expiry: the wakeup latency is the start
 * minus that expiry (plus the advance the caller added to the deadline, X's
 * quirk).  Returns 1 when the task blocks or computes, 0 when it goes on. */
static int do_periodic(const psModel *m, psData *d, psTask *p, const psSyscall *sc) {
  psProgState *s = &p->ps;
  int64_t now = d->now_ns, interval = (int64_t)sc->arg * 1000, advance = (int64_t)sc->arg2 * 1000;
  psPeriodicRec r = {0};
  if (s->phase == 0) {
    if (s->deadline_ns < 0) s->deadline_ns = s->due_begin_ns = s->due_start_ns = now;
    s->call_ns = now;
    s->call_due_ns = s->due_begin_ns;
    s->call_lat_ns = now > s->due_start_ns ? now - s->due_start_ns : 0;
    if (!(interval && now > s->deadline_ns + interval)) {
      s->phase = 1;
      p->burst_left_ns = sc->ns;
      return sc->ns > 0;
    }
    /* "We missed the deadline even before we consumed cpu" */
    s->deadline_ns += interval;
    int64_t n = periods_lost(now, s->deadline_ns, interval);
    r.missed = (int32_t)n;
    r.dropped = (int32_t)n;
    r.missed_latency_ns = n * interval;
    s->deadline_ns += n * interval;
    r.finish_ns = -1;
  } else {
    r.finish_ns = now;
    s->deadline_ns += interval;
    if (s->deadline_ns >= now) {
      r.met = 1;
    } else if (interval) {
      int64_t n = periods_lost(now, s->deadline_ns, interval);
      r.missed = (int32_t)n;
      r.missed_latency_ns = n * interval;
      s->deadline_ns += n * interval;
      if (n > 1) r.dropped = (int32_t)n;
    } else {
      s->deadline_ns = now;  /* out_nosleep */
    }
  }
  r.start_ns = s->call_ns;
  r.due_ns = s->call_due_ns;
  r.latency_ns = s->call_lat_ns;
  r.pid = p->pid;
  ps_record_periodic(m, d, &r);
  s->phase = 0;
  s->pc++;
  int slept = s->deadline_ns > now;
  s->due_begin_ns = slept ? s->deadline_ns : now;
  s->due_start_ns = (slept ? do_sleep_until(m, d, p, s->deadline_ns) : now) + advance;
  s->deadline_ns += advance;
  return slept;
}

/* interbench's Gaming frame: work with a deadline `arg` us after the frame
 * begins; the lateness of its end is the frame's latency. */
static int do_frame(const psModel *m, psData *d, psTask *p, const psSyscall *sc) {
  psProgState *s = &p->ps;
  int64_t now = d->now_ns;
  if (s->phase == 0) {
    s->call_ns = now;
    s->call_due_ns = now + (int64_t)sc->arg * 1000;
    s->phase = 1;
    p->burst_left_ns = sc->ns;
    return sc->ns > 0;
  }
  psPeriodicRec r = {0};
  r.start_ns = s->call_ns;
  r.due_ns = s->call_due_ns;
  r.latency_ns = now > s->call_due_ns ? now - s->call_due_ns : 0;
  r.finish_ns = now;
  r.met = r.latency_ns == 0;
  r.pid = p->pid;
  ps_record_periodic(m, d, &r);
  s->phase = 0;
  s->pc++;
  return 0;
}

/* rt-app's timer (rt-app.c, case rtapp_timer): the next period of the
 * task's reference, which starts when the task does (or, arg2 2, at the
 * run's time 0: a replayed trace's times, whenever its parent forked it); a
 * task already past it goes on at once, and in relative mode (arg2 1)
 * restarts the reference from now. */
static int do_timer(const psModel *m, psData *d, psTask *p, const psSyscall *sc) {
  psProgState *s = &p->ps;
  int64_t now = d->now_ns;
  if (s->timer_ns < 0) s->timer_ns = sc->arg2 == 2 ? 0 : p->start_ns;
  s->timer_ns += (int64_t)sc->arg * 1000;
  s->pc++;
  if (s->timer_ns > now) {
    do_sleep_until(m, d, p, s->timer_ns);
    return 1;
  }
  if (sc->arg2 == 1) s->timer_ns = now;
  return 0;
}

static void do_io(psData *d, psTask *p, int64_t ns) {
  p->state = PS_TASK_UNINTERRUPTIBLE;
  ps_push_io(d, d->now_ns + ns, p);
}

/* Take a post, or block on the channel's FIFO of waiters; 1 if blocked. */
static int do_wait(psData *d, psTask *p, int chan) {
  psChannel *c = &d->chan[chan];
  if (c->count > 0) {
    c->count--;
    return 0;
  }
  int32_t i = ps_index(d, p);
  p->state = PS_TASK_INTERRUPTIBLE;
  p->wait_chan = chan;
  p->wait_next = -1;
  if (c->tail >= 0)
    d->task[c->tail].wait_next = i;
  else
    c->head = i;
  c->tail = i;
  return 1;
}

void ps_post(const psModel *m, psData *d, int chan, psTask *waker, int sync) {
  psChannel *c = &d->chan[chan];
  if (c->head < 0) {
    ps_count_up(&c->count);
    return;
  }
  psTask *w = &d->task[c->head];
  c->head = w->wait_next;
  if (c->head < 0) c->tail = -1;
  w->wait_chan = -1;
  w->wait_next = -1;
  ps_try_to_wake_up(m, d, w, PS_TASK_INTERRUPTIBLE, waker, sync);
}

int ps_post_from_python(const psModel *m, psData *d, int chan, int64_t n, char *err, int errlen) {
  ps_forget_runnable(d);
  if (chan < 0 || chan >= d->nchan) {
    snprintf(err, errlen, "no channel %d (channels are 0..%d)", chan, d->nchan - 1);
    return -1;
  }
  if (n < 1 || n > INT32_MAX) {
    snprintf(err, errlen, "n=%lld posts is outside the allowed range 1..%d", (long long)n, INT32_MAX);
    return -1;
  }
  for (int64_t k = 0; k < n && !d->failed; k++) ps_post(m, d, chan, NULL, 0);
  if (!d->failed) return 0;
  snprintf(err, errlen, "%s", d->errmsg);
  d->failed = 0;
  return -1;
}

/* fork one child of d->task[ti] running prog; 0, or -1 after ps_fail. */
static int do_fork(const psModel *m, psData *d, int32_t ti, int prog) {
  if (prog >= m->nprogs) {
    ps_fail(d, "pid %d forks program %d, which does not exist", d->task[ti].pid, prog);
    return -1;
  }
  if (d->nlive >= m->max_tasks) {
    ps_fail(d, "fork by pid %d failed: task limit reached (max_tasks=%d live tasks)",
            d->task[ti].pid, m->max_tasks);
    return -1;
  }
  psTask *c = ps_new_task(m, d, prog);  /* may move the task array */
  if (!c) return -1;
  psTask *p = &d->task[ti];
  psTask fresh = *c;
  /* copy_process: the child is a struct copy of the parent (the policy's
   * area included) ... */
  *c = *p;
  /* ... with its own identity, program, counters and stream, not queued */
  c->pid = fresh.pid;
  c->ppid = p->pid;
  c->ps = fresh.ps;
  c->burst_left_ns = 0;
  c->wait_chan = c->wait_next = -1;
  c->migrate_to = -1;
  c->on_rq = 0;
  c->rng = fresh.rng;
  c->acct = PS_ACCT_WAIT;
  c->since_ns = d->now_ns;
  c->cpu_ns = c->wait_ns = c->sleep_ns = c->cpu_ticks = 0;
  c->nvcsw = c->nivcsw = c->nr_wakeups = c->nr_migrations = 0;
  c->lat_count = c->lat_sum_ns = c->lat_max_ns = c->wait_max_ns = 0;
  c->starved_ns = -1;
  c->lag_min_ns = c->lag_max_ns = PS_LAG_NONE;
  c->lag_broken_ns = -1;
  /* waiting for a CPU, on the list where ps_new_task put it */
  c->waiting_prev = fresh.waiting_prev;
  c->waiting_next = fresh.waiting_next;
  c->woken_ns = -1;
  c->start_ns = d->now_ns;
  c->exit_ns = -1;
  c->state = PS_TASK_RUNNING;
  ps_count_up(&d->nr_forks);
  ps_ready(m, d, p);  /* the child is on the parent's CPU */
  m->hooks.task_fork(m, d, p, c);
  c->on_rq = 1;
  ps_log(m, d, PS_EVT_FORK, c->cpu, c, p->pid, c->prio, 0);
  return 0;
}

/* The zombie is reaped at once (its parent is taken to wait promptly), so
 * sched_exit runs now, with the child's state as it exits. */
static void do_exit(const psModel *m, psData *d, psTask *p) {
  psTask *parent = ps_task_by_pid(m, d, p->ppid);
  if (parent && parent->exit_ns >= 0) parent = NULL;
  p->state = PS_TASK_ZOMBIE;
  ps_ready(m, d, p);
  ps_ready(m, d, parent);
  m->hooks.task_exit(m, d, p, parent);
  ps_log(m, d, PS_EVT_EXIT, p->cpu, p, parent ? parent->pid : -1, p->prio, 0);
  p->exit_ns = d->now_ns;
  d->nlive--;
  ps_count_up(&d->nr_exits);
  ps_resched_cpu(d, p->cpu);
}

/* set_cpus_allowed (2.5.65 kernel/sched.c; 6.x kernel/sched/core.c
 * __set_cpus_allowed_ptr_locked, affine_move_task).  A task whose CPU stays
 * allowed stays.  One queued or asleep moves at once: 2.5's `if
 * (!p->array && !task_running(rq, p)) set_task_cpu(...)` for a sleeper and
 * its migration thread for a queued one, 6.x's move_queued_task.  The
 * running one is preempted and moved while it is not running, as it
 * leaves its CPU: migrate_to says where (run.c, schedule), and the CPU
 * reschedules now -- from a program (an op on itself) before it runs
 * another op, from Python inside the call (ps_syscall_from_python). */
static void do_affinity(const psModel *m, psData *d, psTask *t, const psCpuMask *mask) {
  t->cpus_allowed = *mask;
  if (ps_cpu_test(&t->cpus_allowed, t->cpu)) {
    t->migrate_to = -1;
    return;
  }
  /* the lowest allowed CPU: 2.5.6x's migration_thread, `cpu_dest =
   * __ffs(p->cpus_allowed & cpu_online_map)` (as of 2.5.64, quoted on LKML
   * 16 Mar 2003, "cpumask strategy"; later first_cpu, the same).  6.x
   * takes cpumask_any_and_distribute(cpu_valid_mask, new_mask), a
   * round-robin from a per-CPU cursor of the calling CPU (lib/cpumask.c,
   * distribute_cpu_mask_prev) that RT and deadline pushes share; neither
   * the calling CPU nor that cursor is modelled, so 6.x presets take the
   * lowest too (docs/guide/workloads.md, "Affinity"). */
  int dest = ps_cpumask_first(&t->cpus_allowed);
  if (d->cpu[t->cpu].curr == ps_index(d, t)) {
    t->migrate_to = dest;
    ps_resched_cpu(d, t->cpu);
  } else {
    ps_ready(m, d, t);
    ps_catch_up(m, d, dest);
    m->hooks.migrate(m, d, t, dest);
    ps_migrated(m, d, t, dest);
  }
}

/* Carry out sc for task ti.  Returns 1 when the task stops running its
 * program for now (it computes, blocks or exits), 0 when it goes on, -1
 * after ps_fail.  Inlined into the interpreter loop, which runs it once per
 * op (measured: 5 % of a wakeup-heavy run as a call). */
__attribute__((always_inline)) static inline int dispatch(const psModel *m, psData *d, int32_t ti, const psSyscall *sc) {
  psTask *p = &d->task[ti];
  switch (sc->kind) {
    case PS_SYS_NONE:
      return 0;
    case PS_SYS_RUN:
      p->burst_left_ns = sc->ns;
      return sc->ns > 0;
    case PS_SYS_SLEEP:
      do_sleep_until(m, d, p, d->now_ns + sc->ns);
      ps_resched_cpu(d, p->cpu);
      return 1;
    case PS_SYS_IO:
      do_io(d, p, sc->ns);
      ps_resched_cpu(d, p->cpu);
      return 1;
    case PS_SYS_WAIT:
      if (!do_wait(d, p, sc->arg)) return 0;
      ps_resched_cpu(d, p->cpu);
      return 1;
    case PS_SYS_POST:
      ps_post(m, d, sc->arg, p, sc->arg2);
      return 0;
    case PS_SYS_FORK:
      return do_fork(m, d, ti, sc->arg);
    case PS_SYS_EXIT:
      do_exit(m, d, p);
      return 1;
    case PS_SYS_YIELD:
      /* whether sched_yield reschedules is the policy's (2.4's may not) */
      ps_ready(m, d, p);
      m->hooks.yield(m, d, p);
      return 0;
    case PS_SYS_NICE:
      /* set_user_nice: `if (TASK_NICE(p) == nice ...) return;` */
      if (p->nice == sc->arg) return 0;
      ps_ready(m, d, p);
      m->hooks.set_nice(m, d, p, sc->arg);
      p->nice = sc->arg;
      return 0;
    case PS_SYS_SETSCHED:
      ps_ready(m, d, p);
      m->hooks.set_scheduler(m, d, p, sc->arg, sc->arg2);
      return 0;
    case PS_SYS_PERIODIC: case PS_SYS_FRAME: case PS_SYS_TIMER: {
      int rc = sc->kind == PS_SYS_PERIODIC ? do_periodic(m, d, p, sc)
               : sc->kind == PS_SYS_FRAME  ? do_frame(m, d, p, sc)
                                           : do_timer(m, d, p, sc);
      if (rc && p->state != PS_TASK_RUNNING) ps_resched_cpu(d, p->cpu);
      return rc;
    }
    default: { /* PS_SYS_AFFINITY: an op on itself, or a call from Python */
      /* ps_add_program keeps an op's mask within the machine, and so does
       * ps_syscall_from_python; a snapshot's crafted op is refused here */
      if (!sc->cpus && (sc->arg < 0 || sc->arg >= m->nmasks)) {
        ps_fail(d, "pid %d: set_affinity to CPU set %d; the model has 0..%d", p->pid, sc->arg,
                m->nmasks - 1);
        return -1;
      }
      const psCpuMask *mask = sc->cpus ? sc->cpus : &m->masks[sc->arg];
      if (!ps_cpumask_within(mask, m->ncpu)) {
        ps_fail(d, "pid %d: set_affinity to cpu %d, outside this machine's cpus 0..%d", p->pid,
                ps_cpumask_last(mask), m->ncpu - 1);
        return -1;
      }
      do_affinity(m, d, p, mask);
      return 0;
    }
  }
}

/* The general interpreter loop: every op, through psu_program_next and
 * dispatch.  Never inline: ps_run_program's fast loop would carry its
 * register saves. */
__attribute__((noinline)) static void run_program_general(const psModel *m, psData *d, int32_t ti) {
  int cpu = d->task[ti].cpu;
  const psProgram *prog = &m->progs[d->task[ti].ps.prog];
  while (!d->failed) {
    ps_count_action(d);
    if (d->failed) return;
    psTask *p = &d->task[ti];
    psSyscall sc = psu_program_next(m->ops, prog, &p->ps, &p->rng);
    int rc = dispatch(m, d, ti, &sc);
    if (rc < 0) {
      /* a failed fork is retried when the run resumes */
      if (sc.kind == PS_SYS_FORK) psu_program_unfork(&d->task[ti].ps);
      return;
    }
    if (rc) return;
    /* a syscall that asked for a reschedule returns through schedule() */
    if (d->cpu[cpu].need_resched) return;
  }
}

void ps_run_program(const psModel *m, psData *d, int32_t ti) {
  /* The ops of most programs' loops -- run, sleep, end -- carried out here
   * as psu_program_next and dispatch would, without the request between
   * them, in a loop that makes no call but the sleep's last one (a third
   * of the interpreter's instructions in a wakeup-heavy run were the
   * requests, a sixth the general loop's register saves); any other op
   * goes to the general loop. */
  int cpu = d->task[ti].cpu;
  /* a task's program never changes (a fork gives the child its own) */
  const psProgram *prog = &m->progs[d->task[ti].ps.prog];
  int32_t prog_end = prog->first + prog->n;
  while (!d->failed) {
    psTask *p = &d->task[ti];
    if (p->ps.pc >= prog_end) break;
    const psOp *o = &m->ops[p->ps.pc];
    if (o->kind != PS_OP_RUN && o->kind != PS_OP_SLEEP && o->kind != PS_OP_END) break;
    ps_count_action(d);
    if (d->failed) return;
    if (o->kind == PS_OP_RUN) {
      p->ps.pc++;
      p->burst_left_ns = psu_dist_sample(&o->d, &p->rng);
      if (p->burst_left_ns > 0) return;
      if (d->cpu[cpu].need_resched) return;
    } else if (o->kind == PS_OP_SLEEP) {
      p->ps.pc++;
      ps_resched_cpu(d, p->cpu);
      do_sleep_until(m, d, p, d->now_ns + psu_dist_sample(&o->d, &p->rng));
      return;
    } else {
      psu_loop_end(&p->ps, o);
      if (d->cpu[cpu].need_resched) return;
    }
  }
  run_program_general(m, d, ti);
}

int ps_syscall_from_python(const psModel *m, psData *d, int pid, const psSyscall *sc, char *err,
                           int errlen) {
  ps_forget_runnable(d);
  psTask *t = ps_task_by_pid(m, d, pid);
  if (!t && (pid < 1 || pid >= d->next_pid)) {
    snprintf(err, errlen, "no task with pid %d (pids are 1..%d)", pid, d->next_pid - 1);
    return -1;
  }
  if (!t || t->exit_ns >= 0) {
    snprintf(err, errlen, "task %d has exited", pid);
    return -1;
  }
  psCpuMask all, allowed;
  ps_cpumask_fill(&all, m->ncpu);
  psSyscall req = *sc;
  switch (sc->kind) {
    case PS_SYS_NICE:
      if (sc->arg < -20 || sc->arg > 19) {
        snprintf(err, errlen, "nice=%d is outside the allowed range -20..19", sc->arg);
        return -1;
      }
      break;
    case PS_SYS_SETSCHED:
      if (sc->arg < PS_SCHED_NORMAL || sc->arg > PS_SCHED_RR) {
        snprintf(err, errlen, "policy=%d is not 0 (normal), 1 (fifo) or 2 (rr)", sc->arg);
        return -1;
      }
      if (sc->arg == PS_SCHED_NORMAL ? sc->arg2 != 0 : (sc->arg2 < 1 || sc->arg2 > 99)) {
        snprintf(err, errlen, "rt_priority=%d must be 1..99 for fifo/rr and 0 for normal",
                 sc->arg2);
        return -1;
      }
      break;
    case PS_SYS_AFFINITY:
      if (!sc->cpus) {
        snprintf(err, errlen, "set_affinity from Python names no CPU set");
        return -1;
      }
      ps_cpumask_and(&allowed, sc->cpus, &all);
      if (!ps_cpumask_any(&allowed)) {
        snprintf(err, errlen, "cpus_allowed names no CPU of this machine (CPUs 0..%d)",
                 m->ncpu - 1);
        return -1;
      }
      req.cpus = &allowed;
      break;
    default:
      snprintf(err, errlen, "syscall %d cannot be made from Python", sc->kind);
      return -1;
  }
  if (dispatch(m, d, ps_index(d, t), &req) < 0) return -1;
  if (req.kind == PS_SYS_AFFINITY && t->migrate_to >= 0 && !m->policy->no_migration_thread) {
    /* set_cpus_allowed returns once the task has moved.  2.5.65: it
     * queues a migration_req_t, wake_up_process(rq->migration_thread),
     * wait_for_completion(&req.done); the migration thread, SCHED_FIFO at
     * the top priority, preempts the task and, in migration_thread
     * itself, set_task_cpu()s it and deactivate_task / activate_task it
     * onto the destination's runqueue, resched_task() there if it beats
     * that CPU's current (2.6's move_task_away, then __migrate_task, do
     * the same).  6.x: affine_move_task's
     * stop_one_cpu_nowait(cpu_of(rq), migration_cpu_stop, ...) and
     * wait_for_completion(&pending->done); the stopper preempts it and
     * __migrate_task -> move_queued_task moves it, with wakeup_preempt on
     * the destination.  Here the task's CPU reschedules within the call:
     * the task is charged its time up to now, counted an involuntary
     * switch and a migration, and is queued on its destination, whose
     * preemption check (the migrate hook) has asked it to reschedule if
     * it should; that CPU switches as the run resumes, at this instant. */
    ps_migrate_now(m, d, t->cpu);
  }
  return 0;
}

int ps_policy_control(const psModel *m, psData *d, int op, const int64_t *args, int nargs,
                      int64_t *out, char *err, int errlen) {
  if (nargs < 0 || nargs > 4) {
    snprintf(err, errlen, "a policy call takes 0..4 arguments, not %d", nargs);
    return -1;
  }
  /* the request may act on any CPU: each one's deferred ticks first */
  for (int c = 0; c < m->ncpu; c++) ps_catch_up(m, d, c);
  return m->hooks.control(m, d, op, args, nargs, out, err, errlen);
}
