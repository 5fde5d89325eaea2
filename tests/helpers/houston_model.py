"""Slow, literal pure-Python model of the integer math of Jim Houston's 2003
"self tuning scheduler" patch (docs/schedulers/houston.md; the patch itself: Jim
Houston, "[PATCH] self tuning scheduler", LKML, 10 Mar 2003, against
linux-2.5.64-bk4), for i386: int and long are 32-bit, unsigned long is
32-bit unsigned, '/' truncates toward zero.

Each function transcribes one function of the patch line by line and mirrors one
C function of csrc/houston_math.c (same name without the ``houston_`` prefix,
same argument order, the constants dict ``c`` first).  Signed intermediates go
through ``i32()``, which asserts that the value fits an int32, so the model
itself detects any overflow the patch's arithmetic would hit; ``u32()`` does the
patch's ``unsigned long`` arithmetic modulo 2**32; ``cdiv()`` is C division.

The constants dict has the field names of ``struct houston_const``
(csrc/houston_math.h): the primary values (``PRIMARY``) and the ones
``derive()`` computes from them (``DERIVED``).
"""

import functools
import math
import struct

INT32_MIN = -(2 ** 31)
INT32_MAX = 2 ** 31 - 1
UINT32_MAX = 2 ** 32 - 1
INT_MAX = INT32_MAX

# --- the patch's priority space (include/linux/sched.h, kernel/sched.c) ------
MAX_RT_PRIO = 100
MAX_PRIO = MAX_RT_PRIO + 80            # the patch widens 40 -> 80
MAX_USER_PRIO = MAX_PRIO - MAX_RT_PRIO  # USER_PRIO(MAX_PRIO) = 80


def NICE_TO_PRIO(nice):
    return (MAX_PRIO - 20) + nice


MIN_STATIC_PRIO = NICE_TO_PRIO(-20)    # 140
MAX_STATIC_PRIO = NICE_TO_PRIO(19)     # 179
SF_PRIO_AVG = 1024
MAX_PRIO_AVG = (MAX_PRIO - MAX_RT_PRIO) * SF_PRIO_AVG   # 81920
SCALE_FACTOR = 0x10000

# --- domain limits (see csrc/houston_math.h) ---------------------------------
MAX_HALF_LIFE = 45426                  # = log_2: a longer half-life makes as == 0
PRIO_DIFF_MIN = INT32_MIN // 0x4000    # -131072: estimate_run_avg does prio_diff *= 0x4000
PRIO_DIFF_MAX = INT32_MAX // 0x4000    # 131071
NICE_CONST_MAX = 681391                # largest nice_const whose exp_nice_const fits an int32

PRIMARY = (
    "hz", "max_sleep_avg", "max_timeslice", "min_timeslice",
    "run_avg_halflife", "prio_avg_halflife", "nice_const", "prio_offset",
    "sleep_avg_nice", "max_run_avg", "min_run_avg",
)
DERIVED = (
    "exp_nice_const", "log_2", "decay_ov", "decay_j_limit",
    "run_avg_as", "prio_avg_as", "run_avg_increment", "prio_avg_increment",
    "prio_c", "prio_log_min", "prio_half", "exp_ratio",
)
FIELDS = PRIMARY + DERIVED


# --- C helpers ---------------------------------------------------------------
def i32(x):
    """The value of a signed int expression; asserts it did not overflow."""
    assert INT32_MIN <= x <= INT32_MAX, "int32 overflow: %d" % x
    return x


def u32(x):
    """The value of an unsigned long (i386) expression: modulo 2**32."""
    return x % 2 ** 32


def s32(x):
    """Conversion of an unsigned long to int, as gcc does on i386 (wraps)."""
    x = u32(x)
    return x - 2 ** 32 if x > INT32_MAX else x


def cdiv(a, b):
    """C '/' on integers: truncates toward zero."""
    if b == 0:
        raise ZeroDivisionError("C division by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def f32(x):
    """A C (float) cast: round to the nearest IEEE single."""
    return struct.unpack("f", struct.pack("f", x))[0]


def c_int(x):
    """A C (int) cast of a floating value: truncates toward zero."""
    return i32(int(x))


# --- the constants -----------------------------------------------------------
def default_const(hz=1000):
    """The patch's constants for this HZ, computed as the patch does, with its
    float initialisers for nice_const, exp_nice_const and log_2.

    C evaluates ``(3.912/40.0)*(float)SCALE_FACTOR`` as a double times a
    float: the float operand (65536.0f, exact) is promoted and the product is a
    double.  Evaluating everything in float32 instead gives the same integers
    (checked in the tests), so the distinction does not matter here.
    """
    c = _patch_defaults(hz)
    log_2 = c_int(0.69314718 * f32(SCALE_FACTOR))
    exp_nice_const = c_int(1.10274 * f32(SCALE_FACTOR))
    assert (c["nice_const"], exp_nice_const, log_2) == (6409, 72269, 45426)
    return _derive_from(c, log_2, exp_nice_const)


def default(hz):
    """houston_default(): the patch defaults for this HZ, then derive()."""
    return derive(_patch_defaults(hz))


def _patch_defaults(hz):
    return {
        "hz": hz,
        "max_sleep_avg": 10 * hz,                    # MAX_SLEEP_AVG (10*HZ), bk4
        "max_timeslice": cdiv(200 * hz, 1000),       # MAX_TIMESLICE (200 * HZ / 1000), bk4
        "min_timeslice": cdiv(10 * hz, 1000),        # MIN_TIMESLICE ( 10 * HZ / 1000)
        "run_avg_halflife": 5 * hz,
        "prio_avg_halflife": 2 * hz,
        "nice_const": c_int((3.912 / 40.0) * f32(SCALE_FACTOR)),
        "prio_offset": 5,
        "sleep_avg_nice": 10,
        "max_run_avg": 256 * 1024,                   # MAX_RUN_AVG
        "min_run_avg": 4,                            # MIN_RUN_AVG
    }


def lround(x):
    """C lround() for x >= 0: nearest integer, halves away from zero."""
    f = math.floor(x)
    return int(f) + (1 if x - f >= 0.5 else 0)


def exp_nice_const_of(nice_const):
    """lround(exp(nice_const/SF)*SF): the exponential that inverts nice_const."""
    return lround(math.exp(nice_const / 65536.0) * 65536)


@functools.lru_cache(maxsize=None)
def effective_prio_log_min(max_run_avg):
    """The most negative 'log' effective_prio computes: at run_avg == 1
    (mantissa sf/2, exponent 1 - log2(max_run_avg))."""
    sf = 0x800
    k = max_run_avg.bit_length() - 1
    log = cdiv(cdiv(45426 * 2, SCALE_FACTOR // sf) * (sf // 2 - sf), sf)
    log += cdiv(45426 * (1 - k), SCALE_FACTOR // sf)
    return log


@functools.lru_cache(maxsize=None)
def nice_const_min(max_run_avg):
    """Smallest nice_const for which c*log in effective_prio fits an int32."""
    cmax = 2 ** 31 // -effective_prio_log_min(max_run_avg)
    return (2 ** 27) // (cmax + 1) + 1


@functools.lru_cache(maxsize=None)
def run_avg_halflife_min(max_run_avg):
    """Smallest half-life for which get_increment's max*-as fits an int32."""
    hl = 1
    while max_run_avg * (45426 // hl) > INT32_MAX:
        hl += 1
    return hl


@functools.lru_cache(maxsize=None)
def run_avg_halflife_max(max_run_avg):
    """Largest half-life whose run_avg increment is still >= 1."""
    hl = MAX_HALF_LIFE
    while (max_run_avg * (45426 // hl)) // 65536 < 1:
        hl -= 1
    return hl


def _check(name, value, lo, hi, why):
    """Raise ValueError (in houston_derive()'s wording) unless lo <= value <= hi."""
    if not lo <= value <= hi:
        raise ValueError("%s=%d out of range [%d, %d]: %s" % (name, value, lo, hi, why))


def validate(c):
    """The checks of houston_derive(), in its order; raises ValueError naming the
    parameter, its value and its allowed range (the bounds are derived in
    csrc/houston_math.c; here the half-life bounds are found by search instead
    of by formula, as a cross-check)."""
    for k in PRIMARY:
        if not isinstance(c[k], int) or not INT32_MIN <= c[k] <= INT32_MAX:
            raise ValueError("%s=%r is not an int32" % (k, c[k]))
    _check("hz", c["hz"], 1, INT32_MAX, "HZ is a tick rate")
    _check("max_sleep_avg", c["max_sleep_avg"], 1, INT32_MAX, "effective_prio divides by it")
    _check("min_timeslice", c["min_timeslice"], 1, INT32_MAX,
           "a SCHED_RR time slice must be at least one tick")
    _check("max_timeslice", c["max_timeslice"], c["min_timeslice"],
           min(INT32_MAX, c["min_timeslice"] + INT32_MAX // 39),
           "needs min_timeslice <= max_timeslice and (max-min)*39 within int32")
    m = c["max_run_avg"]
    if not (2 ** 14 <= m <= 2 ** 29 and m & (m - 1) == 0):
        raise ValueError("max_run_avg=%d out of range [%d, %d]: must be a power of two"
                         % (m, 2 ** 14, 2 ** 29))
    _check("min_run_avg", c["min_run_avg"], 0, m, "must lie in [0, max_run_avg]")
    _check("run_avg_halflife", c["run_avg_halflife"],
           run_avg_halflife_min(m), run_avg_halflife_max(m),
           "get_increment(half_life, max_run_avg) must fit an int and be >= 1")
    _check("prio_avg_halflife", c["prio_avg_halflife"], 2, MAX_HALF_LIFE,
           "get_increment(half_life, MAX_PRIO_AVG) must fit an int and be >= 1")
    _check("nice_const", c["nice_const"], nice_const_min(m), NICE_CONST_MAX,
           "effective_prio's c*log and exp_nice_const must fit an int")
    _check("prio_offset", c["prio_offset"], PRIO_DIFF_MIN + 40, PRIO_DIFF_MAX - 79,
           "the fork-time prio_diff must stay within estimate_run_avg's domain")
    _check("sleep_avg_nice", c["sleep_avg_nice"], 0, sleep_avg_nice_max(c),
           "the unsigned sleep bonus must not wrap")


def sleep_avg_nice_max(c):
    """Largest sleep_avg_nice: the unsigned product sleep_avg_nice * sleep_avg must
    not wrap, and prio - bonus (bonus <= sleep_avg_nice) must not fall below
    INT32_MIN at the lowest prio, 140 + prio_offset + c*log_min/(sf*sf)."""
    cc = (0x800 * SCALE_FACTOR) // c["nice_const"]
    lterm_min = cdiv(cc * effective_prio_log_min(c["max_run_avg"]), 0x800 * 0x800)
    return min(UINT32_MAX // c["max_sleep_avg"],
               MIN_STATIC_PRIO + c["prio_offset"] + lterm_min - INT32_MIN, INT32_MAX)


def derive(c, check=True):
    """houston_derive(): validate (raises ValueError) and fill the derived values.
    exp_nice_const is derived from nice_const so that the patch's logarithm
    (effective_prio) and exponential (estimate_run_avg) stay inverse; log_2
    is the patch's constant.

    With check=False the derived values are computed without validation, so
    that tests can show what goes wrong just outside the accepted ranges."""
    if check:
        validate(c)
    return _derive_from(c, 45426, exp_nice_const_of(c["nice_const"]))


def _derive_from(c, log_2, exp_nice_const):
    c["log_2"] = log_2
    c["exp_nice_const"] = exp_nice_const
    # decay_value: ov = MAX_RUN_AVG/(INT_MAX/sf), the branch limit INT_MAX/MAX_RUN_AVG
    c["decay_ov"] = cdiv(c["max_run_avg"], cdiv(INT_MAX, 0x10000))
    c["decay_j_limit"] = cdiv(INT_MAX, c["max_run_avg"])
    # decay_value / get_increment: as = (-log_2/(SCALE_FACTOR/sf))/half_life
    c["run_avg_as"] = cdiv(cdiv(-log_2, SCALE_FACTOR // 0x10000), c["run_avg_halflife"])
    c["prio_avg_as"] = cdiv(cdiv(-log_2, SCALE_FACTOR // 0x10000), c["prio_avg_halflife"])
    c["run_avg_increment"] = cdiv(c["max_run_avg"] * -c["run_avg_as"], 64 * 1024)
    c["prio_avg_increment"] = cdiv(MAX_PRIO_AVG * -c["prio_avg_as"], 64 * 1024)
    # effective_prio: c = sf*SCALE_FACTOR/nice_const, sf = 0x800
    c["prio_c"] = cdiv(0x800 * SCALE_FACTOR, c["nice_const"])
    c["prio_log_min"] = effective_prio_log_min(c["max_run_avg"])
    # estimate_run_avg: sf = 0x4000
    c["prio_half"] = cdiv(0x4000 * log_2, c["nice_const"])
    c["exp_ratio"] = cdiv(0x4000 * SCALE_FACTOR, exp_nice_const)
    return c


def const_with(**params):
    """default(1000) with primary overrides, validated and derived."""
    c = default(1000)
    c.update(params)
    return derive(c)


# --- the patch's functions, line by line -------------------------------------
def decay_value(c, value, delta_time, half_life):
    """static inline int decay_value(int value, int delta_time, const int half_life)"""
    sf = 0x10000
    as_ = i32(cdiv(i32(cdiv(-c["log_2"], cdiv(SCALE_FACTOR, sf))), half_life))
    ov = cdiv(c["max_run_avg"], cdiv(INT_MAX, sf))

    if delta_time > i32(half_life):
        if delta_time >= i32(16 * half_life):
            return c["min_run_avg"]
        if delta_time > i32(8 * half_life):
            value >>= 8
            delta_time = i32(delta_time - 8 * half_life)
        if delta_time > i32(4 * half_life):
            value >>= 4
            delta_time = i32(delta_time - 4 * half_life)
        if delta_time > i32(2 * half_life):
            value >>= 2
            delta_time = i32(delta_time - 2 * half_life)
        if delta_time > half_life:
            value >>= 1
            delta_time = i32(delta_time - half_life)
    if value < c["min_run_avg"]:
        return c["min_run_avg"]
    i = i32(delta_time * as_)
    if i > cdiv(-sf, 8):
        j = i32(i - cdiv(i, 8))
    else:
        j = i32(i + cdiv(i32(i32(cdiv(i, 4) * cdiv(i, 4)) * 3), cdiv(sf, 2)))
    if j > -cdiv(INT_MAX, c["max_run_avg"]):
        value = i32(value + cdiv(i32(value * j), sf))
    elif value < cdiv(INT_MAX, sf):
        value = cdiv(i32(value * i32(sf + j)), sf)
    else:
        value = cdiv(i32(value * cdiv(i32(sf + j), ov)), cdiv(sf, ov))
    return value


def get_increment(c, half_life, max):
    """static inline int get_increment(const int half_life, const int max)"""
    sf = 64 * 1024
    as_ = cdiv(cdiv(-c["log_2"], cdiv(SCALE_FACTOR, sf)), half_life)
    return cdiv(i32(max * i32(-as_)), sf)


def effective_prio(c, p_run_avg, static_prio, p_sleep_avg, trace=None):
    """int effective_prio(task_t *p): p->run_avg and p->sleep_avg are unsigned long.

    If ``trace`` is a dict, the intermediates (exponent, mantissa, log, c,
    logterm = c*log/(sf*sf)) are stored in it."""
    MAX_RUN_AVG = c["max_run_avg"]
    sf = 0x800
    cc = i32(cdiv(i32(sf * SCALE_FACTOR), c["nice_const"]))

    assert 0 <= p_run_avg <= INT32_MAX, "run_avg >= 2**31 is outside the model"
    run_avg = s32(p_run_avg)
    if p_run_avg:
        run_avg = s32(p_run_avg)
        if run_avg > MAX_RUN_AVG:
            run_avg = MAX_RUN_AVG
        exponent = 0
        while not (MAX_RUN_AVG & run_avg):
            run_avg = i32(run_avg << 1)
            exponent -= 1
        exponent += 1
        mantissa = cdiv(run_avg, cdiv(i32(2 * MAX_RUN_AVG), sf))
        log = cdiv(i32(cdiv(i32(c["log_2"] * 2), cdiv(SCALE_FACTOR, sf)) * (mantissa - sf)), sf)
        log = i32(log + cdiv(i32(c["log_2"] * exponent), cdiv(SCALE_FACTOR, sf)))
        logterm = cdiv(i32(cc * log), sf * sf)
        prio = i32(i32(static_prio + c["prio_offset"]) + logterm)
        if trace is not None:
            trace.update(exponent=exponent, mantissa=mantissa, log=log, c=cc, logterm=logterm)
        # prio -= (sleep_avg_nice * p->sleep_avg)/MAX_SLEEP_AVG, in unsigned long
        bonus = u32(u32(c["sleep_avg_nice"]) * u32(p_sleep_avg)) // u32(c["max_sleep_avg"])
        prio = s32(u32(prio) - bonus)
    else:
        prio = static_prio
    if prio < MAX_RT_PRIO:
        prio = MAX_RT_PRIO
    if prio > MAX_PRIO - 1:
        prio = MAX_PRIO - 1
    return prio


def estimate_run_avg(c, prio_diff, max):
    """int estimate_run_avg(int prio_diff, const int max)"""
    sf = 0x4000
    prio_half = i32(cdiv(i32(sf * c["log_2"]), c["nice_const"]))
    ratio = i32(cdiv(i32(sf * SCALE_FACTOR), c["exp_nice_const"]))

    prio_diff = i32(prio_diff * sf)

    shift = 0
    while prio_diff > prio_half:
        prio_diff = i32(prio_diff - prio_half)
        shift += 1
    prio_diff = cdiv(prio_diff, sf)
    val = sf
    while prio_diff > 0:
        val = cdiv(i32(val * ratio), sf)
        prio_diff -= 1
    val = i32(val * cdiv(max, sf))
    val >>= shift        # C: undefined for shift >= 32; taken as val / 2**shift
    return val


def task_timeslice(c, prio, static_prio, is_rr):
    """unsigned int task_timeslice(task_t *p)"""
    HZ = c["hz"]
    if is_rr:
        return i32(c["min_timeslice"] + cdiv(
            i32(i32(c["max_timeslice"] - c["min_timeslice"]) * (MAX_PRIO - 1 - static_prio)),
            MAX_USER_PRIO - 1))
    if prio >= static_prio:
        return cdiv(HZ, 2) or 1
    if prio > static_prio - 8:
        return cdiv(HZ, 8) or 1
    if prio > static_prio - 16:
        return cdiv(HZ, 50) or 1
    if prio > static_prio - 24:
        return cdiv(HZ, 100) or 1
    if prio > static_prio - 32:
        return cdiv(HZ, 200) or 1
    if prio > static_prio - 40:
        return cdiv(HZ, 500) or 1
    return 1


def update_prio_avg(c, rq_prio_avg, p_prio):
    """void update_prio_avg(runqueue_t *rq, task_t *p): returns the new
    rq->prio_avg (unsigned long)."""
    i = get_increment(c, c["prio_avg_halflife"], MAX_PRIO_AVG)
    prio = MAX_PRIO - p_prio
    if prio > MAX_USER_PRIO:
        prio = MAX_USER_PRIO
    rq_prio_avg = u32(rq_prio_avg - u32(rq_prio_avg * u32(i)) // u32(MAX_PRIO_AVG))
    rq_prio_avg = u32(rq_prio_avg + u32(cdiv(i32(i * prio), MAX_USER_PRIO)))
    return rq_prio_avg


# --- callers of the functions above, as the patch writes them ----------------
def update_run_avg_running(c, run_avg, delta_time):
    """update_run_avg_running(): one tick of a running task's run_avg."""
    run_avg = decay_value(c, run_avg, delta_time, c["run_avg_halflife"])
    run_avg = i32(run_avg + get_increment(c, c["run_avg_halflife"], c["max_run_avg"]))
    if run_avg > c["max_run_avg"]:
        run_avg = c["max_run_avg"]
    return run_avg


def fork_prio_diff(c, rq_prio_avg, static_prio):
    """The prio_diff wake_up_forked_process() hands to estimate_run_avg()."""
    i = s32(u32(rq_prio_avg) // SF_PRIO_AVG)
    i = i32(i - i32(MAX_PRIO - static_prio - c["prio_offset"]))
    return i
