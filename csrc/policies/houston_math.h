/*
 * houston_math.h - the integer math of Jim Houston's 2003 "self tuning
 * scheduler" patch (docs/schedulers/houston.md; the patch itself: Jim Houston,
 * "[PATCH] self tuning scheduler", LKML, 10 Mar 2003, against
 * linux-2.5.64-bk4), bit-exact for i386: int and long are 32-bit,
 * unsigned long is 32-bit unsigned, '/' truncates toward zero.
 *
 * Pure functions of a constants struct: no Python.h, no globals, no static
 * mutable state.  The patch's file-scope constants (nice_const, prio_offset,
 * run_avg_halflife, ...) become the primary fields of struct houston_const so
 * that the simulator can vary them; houston_derive() validates them and
 * computes everything the patch computes from them.
 *
 * Every function has a documented argument domain.  For constants accepted
 * by houston_derive() and arguments inside that domain, no intermediate
 * overflows and no undefined behaviour happens (checked under
 * -fsanitize=undefined); outside it the result is unspecified, so callers
 * that take arguments from users must check them against the limits below.
 *
 * The slow reference model is tests/houston_model.py.
 */
#ifndef PYSCHED_HOUSTON_MATH_H
#define PYSCHED_HOUSTON_MATH_H

#include <stdint.h>

/* the patch's priority space (include/linux/sched.h, kernel/sched.c) */
#define HOUSTON_MAX_RT_PRIO       100
#define HOUSTON_MAX_PRIO          (HOUSTON_MAX_RT_PRIO + 80)
#define HOUSTON_USER_PRIO(p)      ((p) - HOUSTON_MAX_RT_PRIO)
/* USER_PRIO(MAX_PRIO): 80 in this patch, not 40 */
#define HOUSTON_MAX_USER_PRIO     (HOUSTON_USER_PRIO(HOUSTON_MAX_PRIO))
#define HOUSTON_NICE_TO_PRIO(n)   ((HOUSTON_MAX_PRIO - 20) + (n))
#define HOUSTON_PRIO_TO_NICE(p)   ((p) - (HOUSTON_MAX_PRIO - 20))
#define HOUSTON_SF_PRIO_AVG       1024
#define HOUSTON_MAX_PRIO_AVG      ((HOUSTON_MAX_PRIO - HOUSTON_MAX_RT_PRIO) * HOUSTON_SF_PRIO_AVG)
#define HOUSTON_SCALE_FACTOR      0x10000

/* argument domains of the functions below */
#define HOUSTON_MIN_STATIC_PRIO   HOUSTON_NICE_TO_PRIO(-20)   /* 140 */
#define HOUSTON_MAX_STATIC_PRIO   HOUSTON_NICE_TO_PRIO(19)    /* 179 */
/* a half-life longer than log_2 = 45426 ticks makes decay's `as` zero */
#define HOUSTON_MAX_HALF_LIFE     45426
/* estimate_run_avg() starts with prio_diff *= 0x4000 */
#define HOUSTON_MIN_PRIO_DIFF     (-131072)
#define HOUSTON_MAX_PRIO_DIFF     131071
/* largest nice_const whose exp_nice_const = lround(exp(nice_const/SF)*SF) fits an int */
#define HOUSTON_MAX_NICE_CONST    681391

/*
 * The constants.  Fill the primary fields (houston_default() gives the
 * patch's values), then call houston_derive(); never set a derived field by
 * hand, and re-derive after changing a primary one.
 */
typedef struct houston_const {
    /* primary values: the simulator's run-time parameters */
    int32_t hz;                 /* HZ: 1000 */
    int32_t max_sleep_avg;      /* MAX_SLEEP_AVG = 10*HZ (bk4) */
    int32_t max_timeslice;      /* MAX_TIMESLICE = 200*HZ/1000 (bk4): SCHED_RR only */
    int32_t min_timeslice;      /* MIN_TIMESLICE = 10*HZ/1000: SCHED_RR only */
    int32_t run_avg_halflife;   /* 5*HZ */
    int32_t prio_avg_halflife;  /* 2*HZ */
    int32_t nice_const;         /* (int)((3.912/40.0)*(float)SCALE_FACTOR) = 6409 */
    int32_t prio_offset;        /* 5 */
    int32_t sleep_avg_nice;     /* 10 */
    int32_t max_run_avg;        /* MAX_RUN_AVG = 256*1024, a power of two in [2^14, 2^29] */
    int32_t min_run_avg;        /* MIN_RUN_AVG = 4 */
    /* derived by houston_derive(); values at the defaults in brackets */
    int32_t exp_nice_const;     /* lround(exp(nice_const/SF)*SF) [72269, the patch's
                                   (int)(1.10274*(float)SCALE_FACTOR)] */
    int32_t log_2;              /* (int)(0.69314718*(float)SCALE_FACTOR) [45426] */
    int32_t decay_ov;           /* decay_value's ov = MAX_RUN_AVG/(INT_MAX/sf) [8] */
    int32_t decay_j_limit;      /* decay_value's INT_MAX/MAX_RUN_AVG [8191] */
    int32_t run_avg_as;         /* decay's `as` at run_avg_halflife [-9] */
    int32_t prio_avg_as;        /* decay's `as` at prio_avg_halflife [-22] */
    int32_t run_avg_increment;  /* get_increment(run_avg_halflife, MAX_RUN_AVG) [36] */
    int32_t prio_avg_increment; /* get_increment(prio_avg_halflife, MAX_PRIO_AVG) [27] */
    int32_t prio_c;             /* effective_prio's c = 0x800*SCALE_FACTOR/nice_const [20942] */
    int32_t prio_log_min;       /* effective_prio's smallest `log` (run_avg 1) [-25551] */
    int32_t prio_half;          /* estimate_run_avg's 0x4000*log_2/nice_const [116127] */
    int32_t exp_ratio;          /* estimate_run_avg's 0x4000*SCALE_FACTOR/exp_nice_const
                                   [14857] */
} houston_const;

/* X-macros listing the fields once, e.g. for a binding's dict conversion */
#define HOUSTON_PRIMARY_FIELDS(X) \
    X(hz) X(max_sleep_avg) X(max_timeslice) X(min_timeslice) \
    X(run_avg_halflife) X(prio_avg_halflife) X(nice_const) X(prio_offset) \
    X(sleep_avg_nice) X(max_run_avg) X(min_run_avg)
#define HOUSTON_DERIVED_FIELDS(X) \
    X(exp_nice_const) X(log_2) X(decay_ov) X(decay_j_limit) \
    X(run_avg_as) X(prio_avg_as) X(run_avg_increment) X(prio_avg_increment) \
    X(prio_c) X(prio_log_min) X(prio_half) X(exp_ratio)

/*
 * The patch's defaults for this HZ, then houston_derive().  For HZ outside
 * [100, 9085] some default is invalid (MIN_TIMESLICE = 10*HZ/1000 is 0 below
 * 100, 5*HZ exceeds HOUSTON_MAX_HALF_LIFE above 9085): houston_derive() then
 * fails and the caller must override that value and derive again.
 */
void houston_default(houston_const *c, int32_t hz);

/*
 * Validate the primary values and compute the derived ones.  Returns 0, or
 * -1 with a message in err (if err != NULL and errlen > 0) naming the
 * parameter, its value and its allowed range given the parameters checked
 * before it (hz, max_sleep_avg, min_timeslice, max_timeslice, max_run_avg,
 * min_run_avg, run_avg_halflife, prio_avg_halflife, nice_const, prio_offset,
 * sleep_avg_nice, in that order); the derived fields are then left as they
 * were.
 */
int houston_derive(houston_const *c, char *err, int errlen);

/*
 * decay_value(): value * 0.5^(delta_time/half_life), approximately.
 * Domain: 0 <= value <= max_run_avg, 0 <= delta_time <= INT32_MAX,
 * 1 <= half_life <= HOUSTON_MAX_HALF_LIFE.
 */
int32_t houston_decay_value(const houston_const *c, int32_t value, int32_t delta_time,
                            int32_t half_life);

/*
 * get_increment(): what a running task adds per tick.
 * Domain: 1 <= half_life <= HOUSTON_MAX_HALF_LIFE,
 * 0 <= max <= INT32_MAX / (HOUSTON_MAX_HALF_LIFE / half_life).
 */
int32_t houston_get_increment(const houston_const *c, int32_t half_life, int32_t max);

/*
 * effective_prio(): the dynamic priority.  run_avg and sleep_avg are the
 * task's unsigned long fields.  Domain: 0 <= run_avg <= INT32_MAX (values
 * above max_run_avg are clamped to it, as in the patch),
 * HOUSTON_MIN_STATIC_PRIO <= static_prio <= HOUSTON_MAX_STATIC_PRIO,
 * 0 <= sleep_avg <= max_sleep_avg.
 */
int32_t houston_effective_prio(const houston_const *c, uint32_t run_avg, int32_t static_prio,
                               uint32_t sleep_avg);

/*
 * estimate_run_avg(): the run_avg at which effective_prio() gives
 * static_prio + prio_offset - prio_diff (fork-time initial run_avg).
 * Domain: HOUSTON_MIN_PRIO_DIFF <= prio_diff <= HOUSTON_MAX_PRIO_DIFF,
 * 0 <= max <= INT32_MAX.
 */
int32_t houston_estimate_run_avg(const houston_const *c, int32_t prio_diff, int32_t max);

/*
 * task_timeslice(): is_rr != 0 for SCHED_RR; SCHED_NORMAL and SCHED_FIFO take
 * the priority-based branch.  Domain: 0 <= prio <= HOUSTON_MAX_PRIO,
 * HOUSTON_MIN_STATIC_PRIO <= static_prio <= HOUSTON_MAX_STATIC_PRIO.
 */
int32_t houston_task_timeslice(const houston_const *c, int32_t prio, int32_t static_prio,
                               int is_rr);

/*
 * update_prio_avg(): one tick of rq->prio_avg with p the running task
 * (the idle task has prio MAX_PRIO); returns the new rq->prio_avg.
 * Domain: 0 <= prio_avg <= HOUSTON_MAX_PRIO_AVG (an invariant of the update),
 * 0 <= prio <= HOUSTON_MAX_PRIO.
 */
uint32_t houston_update_prio_avg(const houston_const *c, uint32_t prio_avg, int32_t prio);

#endif /* PYSCHED_HOUSTON_MATH_H */
