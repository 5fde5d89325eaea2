/* What the engine offers to policies and to the program interpreter. */
#ifndef PS_ENGINE_INTERNAL_H
#define PS_ENGINE_INTERNAL_H
#include "pysched.h"

static inline int32_t ps_index(const psData *d, const psTask *t) { return (int32_t)(t - d->task); }
static inline psTask *ps_curr(const psData *d, int cpu) { return &d->task[d->cpu[cpu].curr]; }
static inline void ps_resched_cpu(psData *d, int cpu) {
  d->cpu[cpu].need_resched = 1;
  ps_cpu_set(&d->cpus_due, cpu);
}

/* Count one more switch, wakeup, migration, post ... (trace.h,
 * PS_COUNT_MAX); a policy's own counts too, so that none that a snapshot
 * crafted near the top of int64 overflows. */
static inline void ps_count_up(int64_t *c) {
  if (__builtin_expect(*c < PS_COUNT_MAX, 1)) ++*c;
}
/* Add n >= 0 to a count the same way (sleep_avg moved by the back-boost). */
static inline void ps_count_add(int64_t *c, int64_t n) {
  *c = *c < PS_COUNT_MAX - n ? *c + n : (*c > PS_COUNT_MAX ? *c : PS_COUNT_MAX);
}

/* Log one event when the event log is on. */
void ps_log_event(const psModel *m, psData *d, int kind, int cpu, const psTask *p, int other,
                  int prio, int64_t value);
static inline void ps_log(const psModel *m, psData *d, int kind, int cpu, const psTask *p,
                          int other, int prio, int64_t value) {
  if (m->rec_events) ps_log_event(m, d, kind, cpu, p, other, prio, value);
}

/* A policy took one of its exact skips (PS_FAST_SKIP), for ps_fast_counts. */
void ps_fast_skipped(psData *d);

/* try_to_wake_up(p, mask, sync): wake p if its state is in mask.  waker is
 * the waking task (process context) or NULL (interrupt context). */
int ps_try_to_wake_up(const psModel *m, psData *d, psTask *p, int mask, psTask *waker, int sync);

/* Make a step fail with a message; it stops at once. */
void ps_fail(psData *d, const char *fmt, ...);

/* Zero-time work allowed at one instant before the run is a livelock: a
 * million actions, and PS_ACTIONS_PER_SLOT more for each task slot, so
 * that a million tasks may each take their first ops (a sleep, a post) at
 * one instant.  Slots, not live tasks: their number never falls, so no
 * exit makes a count already reached a livelock. */
#define PS_MAX_ACTIONS_PER_INSTANT 1000000
#define PS_ACTIONS_PER_SLOT 16
static inline int64_t ps_max_actions(const psData *d) {
  return PS_MAX_ACTIONS_PER_INSTANT + PS_ACTIONS_PER_SLOT * (int64_t)d->ntask;
}
/* Fail the step as a livelock (ps_count_action found too many actions). */
void ps_livelock(psData *d);
/* Count one op or reschedule at the current instant; fails on a livelock.
 * Inline: the interpreter counts every op (the slots are read only past
 * the first million). */
static inline void ps_count_action(psData *d) {
  if (d->now_ns != d->instant_ns) {
    d->instant_ns = d->now_ns;
    d->instant_actions = 0;
  }
  if (++d->instant_actions > PS_MAX_ACTIONS_PER_INSTANT && d->instant_actions > ps_max_actions(d))
    ps_livelock(d);
}

/* Queue task p's I/O completion at t. */
static inline void ps_push_io(psData *d, int64_t t, const psTask *p) {
  psEvt e = {.time_ns = t, .rank = p->pid, .cls = PS_EV_IO, .key = ps_index(d, p)};
  if (psu_evq_push(&d->evq, e)) ps_fail(d, "out of memory queueing an event");
}
/* The next timer's arming sequence number; the step fails when they have
 * run out (2^46: ten thousand tasks sleeping every jiffy at HZ=1000 for
 * 220 simulated years). */
static inline int64_t ps_timer_seq(psData *d) {
  if (__builtin_expect(d->timer_seq >= PS_TIMER_SEQ_MAX, 0)) {
    ps_fail(d, "timer_seq=%lld: the timers' sequence numbers have run out (at most %lld)",
            (long long)d->timer_seq, (long long)PS_TIMER_SEQ_MAX);
    return PS_TIMER_SEQ_MAX;
  }
  return ++d->timer_seq;
}
/* Queue task p's jiffy timer at jiffy j, armed now from process context
 * (inline: every sleep queues one), ranked as the timer wheel runs it
 * (events.h, psu_timer_rank): the wheel's timer_jiffies is jiffies + 1
 * once jiffy `jiffies`'s timers have run at its tick, 0 before the first
 * tick (2.4's timer_jiffies starts at 0 with jiffies).  The queue's buckets
 * are one tick wide: the timer's slot is j. */
static inline void ps_push_timer(const psModel *m, psData *d, uint64_t j, const psTask *p) {
  uint64_t tj = d->jiffies ? d->jiffies + 1 : 0;
  psEvt e = {.time_ns = ps_jiffy_time(m, j),
             .rank = psu_timer_rank(j, tj, ps_timer_seq(d)),
             .cls = PS_EV_TIMER,
             .key = ps_index(d, p)};
  if (psu_evq_push_slot(&d->evq, e, (int64_t)j)) ps_fail(d, "out of memory queueing an event");
}
/* Keep one timed-op call's record (trace.h). */
void ps_record_periodic(const psModel *m, psData *d, const psPeriodicRec *r);

/* A new task (pid next in line, in a reaped task's slot or a new one)
 * running prog, state and accounting blank; NULL after ps_fail when memory
 * or pids ran out.  May move the task array. */
psTask *ps_new_task(const psModel *m, psData *d, int prog);

/* Process context (syscall.c): run task ti's program until it needs CPU
 * time, blocks, exits or must give way to a reschedule. */
void ps_run_program(const psModel *m, psData *d, int32_t ti);

/* post(chan): wake its first waiter, or count the post.  waker is the
 * posting task, NULL from interrupt context (a source). */
void ps_post(const psModel *m, psData *d, int chan, psTask *waker, int sync);

#endif
