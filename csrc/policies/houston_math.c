/*
 * houston_math.c - the integer math of Jim Houston's 2003 "self tuning
 * scheduler" patch (docs/schedulers/houston.md §3-§9; the patch itself: Jim
 * Houston, "[PATCH] self tuning scheduler", LKML, 10 Mar 2003), as
 * pure functions.  See houston_math.h for the domains; the slow reference
 * model is tests/houston_model.py.
 *
 * Each function keeps the patch's int32 expressions, in the patch's order of
 * operations and with its truncating divisions.  Where the patch computes a
 * constant from a file-scope `static const`, the constant comes from struct
 * houston_const (derived once by houston_derive()).  The only departures are
 * written out where they happen: a loop replaced by its closed form, and a
 * shift count that C leaves undefined.
 */
#include "houston_math.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Conversion of an unsigned long to int as gcc does it on i386 (wraps), without
 * relying on implementation-defined behaviour. */
static int32_t ul_to_int(uint32_t x)
{
    if (x <= (uint32_t)INT32_MAX)
        return (int32_t)x;
    return (int32_t)(x - 0x80000000u) + INT32_MIN;
}

static int32_t sat32(int64_t x)
{
    if (x > INT32_MAX)
        return INT32_MAX;
    if (x < INT32_MIN)
        return INT32_MIN;
    return (int32_t)x;
}

static int reject(char *err, int errlen, const char *name, int32_t value, int64_t lo, int64_t hi,
                  const char *why)
{
    if (err != NULL && errlen > 0)
        snprintf(err, (size_t)errlen, "%s=%ld out of range [%lld, %lld]: %s", name, (long)value,
                 (long long)lo, (long long)hi, why);
    return -1;
}

/* effective_prio's `log` at run_avg == 1, its minimum: the mantissa is sf/2
 * and the exponent 1 - log2(max_run_avg) (max_run_avg a power of two). */
static int32_t log_min_of(int32_t max_run_avg, int32_t log_2)
{
    const int32_t sf = 0x800;
    int32_t k = 0, log;

    while ((INT32_C(1) << k) < max_run_avg)
        k++;
    log = (log_2 * 2 / (HOUSTON_SCALE_FACTOR / sf)) * (sf / 2 - sf) / sf;
    log += log_2 * (1 - k) / (HOUSTON_SCALE_FACTOR / sf);
    return log;
}

/* the patch's file-scope constants, at HZ = hz (HZ-based ones as the patch writes them) */
void houston_default(houston_const *c, int32_t hz)
{
    memset(c, 0, sizeof *c);
    c->hz = hz;
    c->max_sleep_avg = sat32(10 * (int64_t)hz);          /* MAX_SLEEP_AVG (10*HZ), bk4 */
    c->max_timeslice = sat32(200 * (int64_t)hz / 1000);  /* MAX_TIMESLICE (200 * HZ / 1000) */
    c->min_timeslice = sat32(10 * (int64_t)hz / 1000);   /* MIN_TIMESLICE ( 10 * HZ / 1000) */
    c->run_avg_halflife = sat32(5 * (int64_t)hz);        /* run_avg_halflife = 5*HZ */
    c->prio_avg_halflife = sat32(2 * (int64_t)hz);       /* prio_avg_halflife = 2*HZ */
    c->nice_const = (int)((3.912 / 40.0) * (float)HOUSTON_SCALE_FACTOR);   /* 6409 */
    c->prio_offset = 5;
    c->sleep_avg_nice = 10;
    c->max_run_avg = 256 * 1024;                         /* MAX_RUN_AVG */
    c->min_run_avg = 4;                                  /* MIN_RUN_AVG */
    (void)houston_derive(c, NULL, 0);
}

/*
 * Bounds.  Each check below names the intermediate it protects; the worst
 * case is over the whole documented domain of every function (run_avg
 * 0..max_run_avg, sleep_avg 0..max_sleep_avg, static_prio 140..179, prio
 * 0..180, delta_time 0..INT32_MAX, prio_avg 0..MAX_PRIO_AVG).  Bounds that
 * depend on another parameter are checked after it.
 */
int houston_derive(houston_const *c, char *err, int errlen)
{
    const int32_t log_2 = (int)(0.69314718 * (float)HOUSTON_SCALE_FACTOR);  /* 45426 */
    int64_t lo, hi, a, b;
    int32_t log_min, prio_c, lterm_min, exp_nice;
    double e;

    /* hz: a tick rate; task_timeslice returns HZ/2 ?: 1 and friends */
    if (c->hz < 1)
        return reject(err, errlen, "hz", c->hz, 1, INT32_MAX, "HZ is a tick rate");

    /* effective_prio divides by MAX_SLEEP_AVG */
    if (c->max_sleep_avg < 1)
        return reject(err, errlen, "max_sleep_avg", c->max_sleep_avg, 1, INT32_MAX,
                      "effective_prio divides by it");

    /* task_timeslice(SCHED_RR) = MIN + (MAX-MIN)*(MAX_PRIO-1-static_prio)/(MAX_USER_PRIO-1):
     * a 0-tick slice never expires (scheduler_tick tests !--p->time_slice), MAX < MIN
     * inverts the nice ordering, and (MAX-MIN)*39 (static_prio 140) must fit an int. */
    if (c->min_timeslice < 1)
        return reject(err, errlen, "min_timeslice", c->min_timeslice, 1, INT32_MAX,
                      "a SCHED_RR time slice must be at least one tick");
    lo = c->min_timeslice;
    hi = c->min_timeslice + (int64_t)INT32_MAX / 39;
    if (hi > INT32_MAX)
        hi = INT32_MAX;
    if (c->max_timeslice < lo || c->max_timeslice > hi)
        return reject(err, errlen, "max_timeslice", c->max_timeslice, lo, hi,
                      "needs min_timeslice <= max_timeslice and (max-min)*39 within int32");

    /* MAX_RUN_AVG: effective_prio finds the exponent by shifting run_avg until the bit
     * MAX_RUN_AVG & run_avg is set (only a power of two makes that a log2), divides by
     * 2*MAX_RUN_AVG/0x800 (zero below 1024), and 2*MAX_RUN_AVG must fit an int (<= 2^29);
     * wake_up_forked_process's estimate_run_avg(i, MAX_RUN_AVG) multiplies by
     * MAX_RUN_AVG/0x4000, which is zero below 16384: every child would get run_avg 0. */
    if (c->max_run_avg < 16384 || c->max_run_avg > (INT32_C(1) << 29) ||
        (c->max_run_avg & (c->max_run_avg - 1)) != 0)
        return reject(err, errlen, "max_run_avg", c->max_run_avg, 16384, INT32_C(1) << 29,
                      "must be a power of two");
    /* decay_value's third branch: value*((sf+j)/ov) with value <= MAX_RUN_AVG and
     * j <= -(INT_MAX/MAX_RUN_AVG).  It holds for every power of two in range (at the
     * default 262144*7168 = 1879048192); kept as a check because it is the reason
     * the patch has that branch.  With ov == 0 (MAX_RUN_AVG < 32767) the branch needs
     * value >= INT_MAX/sf > MAX_RUN_AVG and is unreachable. */
    a = c->max_run_avg / (INT32_MAX / 0x10000);
    b = INT32_MAX / c->max_run_avg;
    if (a > 0 && (int64_t)c->max_run_avg * ((0x10000 - b) / a) > INT32_MAX)
        return reject(err, errlen, "max_run_avg", c->max_run_avg, 16384, INT32_C(1) << 29,
                      "decay_value's value*((sf+j)/ov) overflows");

    /* MIN_RUN_AVG is what decay_value returns for small values: above MAX_RUN_AVG it
     * would leave decay_value's domain; below 0 it is not a run average. */
    if (c->min_run_avg < 0 || c->min_run_avg > c->max_run_avg)
        return reject(err, errlen, "min_run_avg", c->min_run_avg, 0, c->max_run_avg,
                      "must lie in [0, max_run_avg]");

    /* run_avg_halflife, with as = -log_2/half_life:
     * lower: get_increment's max*-as = MAX_RUN_AVG*(45426/hl) must fit an int;
     * upper: the increment MAX_RUN_AVG*(45426/hl)/65536 must be >= 1, or a running
     *        task's run_avg never grows (this also keeps as != 0: hl <= 45426).
     * (decay_value itself is safe for any half-life in [1, 45426]: delta_time <= hl
     * after the shift cascade, so |i| = |delta_time*as| <= 45426.) */
    a = INT32_MAX / c->max_run_avg;                          /* largest allowed -as */
    lo = log_2 / (a + 1) + 1;
    b = (0x10000 + c->max_run_avg - 1) / c->max_run_avg;    /* smallest allowed -as */
    hi = log_2 / b;
    if (c->run_avg_halflife < lo || c->run_avg_halflife > hi)
        return reject(err, errlen, "run_avg_halflife", c->run_avg_halflife, lo, hi,
                      "get_increment(half_life, max_run_avg) must fit an int and be >= 1");

    /* prio_avg_halflife: get_increment's MAX_PRIO_AVG*-as = 81920*(45426/hl) must fit
     * an int (hl >= 2); as != 0 (hl <= 45426), which makes the increment i >= 1. */
    a = INT32_MAX / HOUSTON_MAX_PRIO_AVG;
    lo = log_2 / (a + 1) + 1;
    hi = log_2;
    if (c->prio_avg_halflife < lo || c->prio_avg_halflife > hi)
        return reject(err, errlen, "prio_avg_halflife", c->prio_avg_halflife, lo, hi,
                      "get_increment(half_life, MAX_PRIO_AVG) must fit an int and be >= 1");
    /* update_prio_avg's unsigned rq->prio_avg * i must not wrap (implied by the above:
     * i <= 81920*26214/65536 = 32767) */
    a = (int64_t)HOUSTON_MAX_PRIO_AVG * (log_2 / c->prio_avg_halflife) / 0x10000;
    if ((int64_t)HOUSTON_MAX_PRIO_AVG * a > UINT32_MAX)
        return reject(err, errlen, "prio_avg_halflife", c->prio_avg_halflife, lo, hi,
                      "update_prio_avg's rq->prio_avg * i wraps");

    /* nice_const:
     * lower: effective_prio's c*log, c = 0x800*SCALE_FACTOR/nice_const, must fit an int
     *        at the smallest log (run_avg 1), which depends on MAX_RUN_AVG
     *        (at the default 262144: log >= -25551, so c <= 84047, nice_const >= 1597);
     * upper: exp_nice_const = exp(nice_const/SF)*SF, an int in the patch, must fit one
     *        (nice_const <= 681391).  estimate_run_avg's ratio = 0x4000*SF/exp_nice_const
     *        is 0 above 635965, but it is only used when prio_half = 0x4000*log_2/nice_const
     *        >= 0x4000, i.e. nice_const <= 45426; prio_half stays >= 1092, so the
     *        halving loop ends, and c >= 196. */
    log_min = log_min_of(c->max_run_avg, log_2);
    a = (int64_t)2147483648 / -log_min;                      /* largest allowed c */
    lo = (INT32_C(1) << 27) / (a + 1) + 1;
    hi = HOUSTON_MAX_NICE_CONST;
    if (c->nice_const < lo || c->nice_const > hi)
        return reject(err, errlen, "nice_const", c->nice_const, lo, hi,
                      "effective_prio's c*log and exp_nice_const must fit an int");
    /* the patch's inverse pair: exp_nice_const = exp(nice_const/SF) in SF units */
    e = exp(c->nice_const / 65536.0) * 65536.0;
    if (!(e < 2147483647.5))
        return reject(err, errlen, "nice_const", c->nice_const, lo, hi,
                      "exp_nice_const does not fit an int");
    exp_nice = (int32_t)lround(e);
    prio_c = (0x800 * HOUSTON_SCALE_FACTOR) / c->nice_const;

    /* prio_offset: wake_up_forked_process hands estimate_run_avg
     * prio_diff = rq->prio_avg/SF_PRIO_AVG - (MAX_PRIO - static_prio - prio_offset),
     * in [prio_offset - 40, prio_offset + 79], and estimate_run_avg multiplies it by
     * 0x4000.  (effective_prio's static_prio + prio_offset + c*log/(sf*sf) is then
     * far from overflowing.) */
    lo = HOUSTON_MIN_PRIO_DIFF + 40;
    hi = HOUSTON_MAX_PRIO_DIFF - 79;
    if (c->prio_offset < lo || c->prio_offset > hi)
        return reject(err, errlen, "prio_offset", c->prio_offset, lo, hi,
                      "the fork-time prio_diff must stay within estimate_run_avg's domain");

    /* sleep_avg_nice: effective_prio computes (sleep_avg_nice * p->sleep_avg)/MAX_SLEEP_AVG
     * in unsigned long: negative values or a product above 2^32-1 wrap (a huge or
     * non-monotonic bonus); the bonus (<= sleep_avg_nice) is then subtracted from
     * prio >= 140 + prio_offset + c*log_min/(sf*sf), which must not wrap below INT_MIN. */
    lterm_min = (int32_t)(((int64_t)prio_c * log_min) / (0x800 * 0x800));
    hi = UINT32_MAX / (uint32_t)c->max_sleep_avg;
    a = (int64_t)HOUSTON_MIN_STATIC_PRIO + c->prio_offset + lterm_min - INT32_MIN;
    if (a < hi)
        hi = a;
    if (hi > INT32_MAX)
        hi = INT32_MAX;
    if (c->sleep_avg_nice < 0 || c->sleep_avg_nice > hi)
        return reject(err, errlen, "sleep_avg_nice", c->sleep_avg_nice, 0, hi,
                      "the unsigned sleep bonus must not wrap");

    /* the derived values, as the patch's functions compute them */
    c->log_2 = log_2;
    c->exp_nice_const = exp_nice;
    c->decay_ov = c->max_run_avg / (INT32_MAX / 0x10000);
    c->decay_j_limit = INT32_MAX / c->max_run_avg;
    c->run_avg_as = (-log_2 / (HOUSTON_SCALE_FACTOR / 0x10000)) / c->run_avg_halflife;
    c->prio_avg_as = (-log_2 / (HOUSTON_SCALE_FACTOR / 0x10000)) / c->prio_avg_halflife;
    c->run_avg_increment = houston_get_increment(c, c->run_avg_halflife, c->max_run_avg);
    c->prio_avg_increment = houston_get_increment(c, c->prio_avg_halflife, HOUSTON_MAX_PRIO_AVG);
    c->prio_c = prio_c;
    c->prio_log_min = log_min;
    c->prio_half = 0x4000 * log_2 / c->nice_const;
    c->exp_ratio = 0x4000 * HOUSTON_SCALE_FACTOR / exp_nice;
    return 0;
}

/*
 * decay_value() of the patch.  sf = 0x10000, so SCALE_FACTOR/sf = 1 and
 * as = -log_2/half_life: -9 at the default 5*HZ (the true -45426/5000 is
 * -9.085); ov = MAX_RUN_AVG/(INT_MAX/sf) = 8 at the default.
 */
int32_t houston_decay_value(const houston_const *c, int32_t value, int32_t delta_time,
                            int32_t half_life)
{
    const int32_t sf = 0x10000;
    const int32_t as = (-c->log_2 / (HOUSTON_SCALE_FACTOR / sf)) / half_life;
    const int32_t ov = c->decay_ov;
    int32_t i, j;

    if (delta_time > half_life) {
        /* value >>= delta_time/half_life */
        if (delta_time >= 16 * half_life)
            return c->min_run_avg;
        if (delta_time > 8 * half_life) {
            value >>= 8;
            delta_time -= 8 * half_life;
        }
        if (delta_time > 4 * half_life) {
            value >>= 4;
            delta_time -= 4 * half_life;
        }
        if (delta_time > 2 * half_life) {
            value >>= 2;
            delta_time -= 2 * half_life;
        }
        if (delta_time > half_life) {
            value >>= 1;
            delta_time -= half_life;
        }
    }
    if (value < c->min_run_avg)
        return c->min_run_avg;
    i = delta_time * as;
    /* value * exp(i/sf), exp(x) ~ 1 + (x > -1/8 ? 7x/8 : x + 3x^2/8) */
    if (i > -sf / 8)
        j = i - i / 8;
    else
        j = i + (i / 4) * (i / 4) * 3 / (sf / 2);
    /* multiply by (1 + j/sf) without overflow; c->decay_j_limit is INT_MAX/MAX_RUN_AVG */
    if (j > -c->decay_j_limit)
        value += (value * j) / sf;
    else if (value < INT32_MAX / sf)
        value = (value * (sf + j)) / sf;
    else
        value = (value * ((sf + j) / ov)) / (sf / ov);
    return value;
}

/* get_increment() of the patch: (max * -as)/sf, sf = 64*1024 */
int32_t houston_get_increment(const houston_const *c, int32_t half_life, int32_t max)
{
    const int32_t sf = 64 * 1024;
    const int32_t as = (-c->log_2 / (HOUSTON_SCALE_FACTOR / sf)) / half_life;

    return (max * -as) / sf;
}

/*
 * effective_prio() of the patch:
 *   prio = static_prio + prio_offset + c*log(run_avg/MAX_RUN_AVG)/(sf*sf)
 *          - (sleep_avg_nice*sleep_avg)/MAX_SLEEP_AVG,
 * with log(m * 2^e) ~ 2*log(2)*(m-1) + log(2)*e for m in [1/2, 1).
 * A task that has never run (run_avg 0) gets static_prio, with neither
 * prio_offset nor the sleep bonus.
 */
int32_t houston_effective_prio(const houston_const *c, uint32_t p_run_avg, int32_t static_prio,
                               uint32_t p_sleep_avg)
{
    const int32_t sf = 0x800;
    const int32_t cc = c->prio_c;              /* (const int)(sf*SCALE_FACTOR/nice_const) */
    const int32_t max_run_avg = c->max_run_avg;
    int32_t exponent, mantissa, log, run_avg, prio;
    uint32_t bonus;

    if (p_run_avg) {
        /* the patch compares the int copy with MAX_RUN_AVG; for p->run_avg < 2^31
         * this unsigned compare is the same (above, the int copy is negative and the
         * patch's shift loop misbehaves: outside the domain) */
        if (p_run_avg > (uint32_t)max_run_avg)
            run_avg = max_run_avg;
        else
            run_avg = (int32_t)p_run_avg;
        for (exponent = 0; !(max_run_avg & run_avg); exponent--)
            run_avg <<= 1;
        exponent++;
        mantissa = run_avg / (2 * max_run_avg / sf);
        log = (c->log_2 * 2 / (HOUSTON_SCALE_FACTOR / sf)) * (mantissa - sf) / sf;
        log += c->log_2 * exponent / (HOUSTON_SCALE_FACTOR / sf);
        prio = static_prio + c->prio_offset + cc * log / (sf * sf);
        /* prio -= (sleep_avg_nice * p->sleep_avg)/MAX_SLEEP_AVG: unsigned long */
        bonus = ((uint32_t)c->sleep_avg_nice * p_sleep_avg) / (uint32_t)c->max_sleep_avg;
        prio = ul_to_int((uint32_t)prio - bonus);
    } else {
        prio = static_prio;
    }
    if (prio < HOUSTON_MAX_RT_PRIO)
        prio = HOUSTON_MAX_RT_PRIO;
    if (prio > HOUSTON_MAX_PRIO - 1)
        prio = HOUSTON_MAX_PRIO - 1;
    return prio;
}

/*
 * estimate_run_avg() of the patch: max * exp(-nice_const/SF * prio_diff),
 * as a power of two (one halving per prio_half/sf = log(2)/(nice_const/SF)
 * priority steps) times whole steps of ratio/sf = 1/exp_nice_const.
 * prio_diff <= 0 gives sf*(max/sf).
 */
int32_t houston_estimate_run_avg(const houston_const *c, int32_t prio_diff, int32_t max)
{
    const int32_t sf = 0x4000;
    const int32_t prio_half = c->prio_half;    /* sf * log_2 / nice_const */
    const int32_t ratio = c->exp_ratio;        /* sf * SCALE_FACTOR / exp_nice_const */
    int32_t shift, val;

    prio_diff *= sf;

    /*
     * The patch's
     *     while (prio_diff > prio_half) { prio_diff -= prio_half; shift++; }
     * in closed form (the loop can run 2^31/prio_half times): for P > h it stops
     * after n = (P-1)/h steps, the first n with P - n*h <= h, leaving P - n*h in
     * [1, h].
     */
    shift = 0;
    if (prio_diff > prio_half) {
        shift = (prio_diff - 1) / prio_half;
        prio_diff -= shift * prio_half;
    }
    prio_diff /= sf;
    val = sf;
    for (; prio_diff > 0; prio_diff--)
        val = val * ratio / sf;
    val *= max / sf;
    /*
     * val >>= shift.  For shift >= 32 C leaves this undefined (i386 would shift by
     * shift & 31); the patch means val / 2^shift, which is 0 for 0 <= val < 2^31.
     * Only reachable for prio_diff far beyond the fork-time range (prio_offset + 79
     * gives shift <= 11 at the defaults).
     */
    if (shift >= 32)
        val = 0;
    else
        val >>= shift;
    return val;
}

/*
 * task_timeslice() of the patch.  The SCHED_RR branch keeps the old formula
 * with the new MAX_USER_PRIO = 80, so nice -20..19 spans only
 * MIN_TIMESLICE..MIN + (MAX-MIN)*39/79 (10..103 ticks at the defaults).
 */
int32_t houston_task_timeslice(const houston_const *c, int32_t prio, int32_t static_prio,
                               int is_rr)
{
    const int32_t hz = c->hz;

    if (is_rr) {
        return c->min_timeslice + ((c->max_timeslice - c->min_timeslice) *
               (HOUSTON_MAX_PRIO - 1 - static_prio) / (HOUSTON_MAX_USER_PRIO - 1));
    }
    if (prio >= static_prio)
        return hz / 2 ? hz / 2 : 1;
    if (prio > static_prio - 8)
        return hz / 8 ? hz / 8 : 1;
    if (prio > static_prio - 16)
        return hz / 50 ? hz / 50 : 1;
    if (prio > static_prio - 24)
        return hz / 100 ? hz / 100 : 1;
    if (prio > static_prio - 32)
        return hz / 200 ? hz / 200 : 1;
    if (prio > static_prio - 40)
        return hz / 500 ? hz / 500 : 1;
    return 1;
}

/*
 * update_prio_avg() of the patch: rq->prio_avg is unsigned long, so the decay
 * term is unsigned arithmetic; the increment i*prio/MAX_USER_PRIO is int.
 */
uint32_t houston_update_prio_avg(const houston_const *c, uint32_t prio_avg, int32_t p_prio)
{
    int32_t prio;
    int32_t i;

    i = houston_get_increment(c, c->prio_avg_halflife, HOUSTON_MAX_PRIO_AVG);
    prio = HOUSTON_MAX_PRIO - p_prio;
    if (prio > HOUSTON_MAX_USER_PRIO)
        prio = HOUSTON_MAX_USER_PRIO;
    prio_avg -= (prio_avg * (uint32_t)i) / (uint32_t)HOUSTON_MAX_PRIO_AVG;
    prio_avg += (uint32_t)(i * prio / HOUSTON_MAX_USER_PRIO);
    return prio_avg;
}
