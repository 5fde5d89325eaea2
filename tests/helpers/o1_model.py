"""A slow, obviously literal Python model of the 2.5 O(1) formulas (fact
sheet §3), used as the oracle of the property tests."""

MAX_RT_PRIO, MAX_PRIO, MAX_USER_PRIO = 100, 140, 40


def cdiv(a, b):
    """C integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def effective_prio(static_prio, sleep_avg, max_sleep_avg, prio_bonus_ratio=25):
    # bonus = 40*25*sleep_avg/MAX_SLEEP_AVG/100 - 40*25/100/2, in unsigned long
    up = (MAX_USER_PRIO * prio_bonus_ratio * sleep_avg) % 2**32
    up = up // max_sleep_avg // 100
    bonus = up - MAX_USER_PRIO * prio_bonus_ratio // 100 // 2
    return min(max(static_prio - bonus, MAX_RT_PRIO), MAX_PRIO - 1)


def task_timeslice(static_prio, max_timeslice, min_timeslice=10):
    return min_timeslice + cdiv((max_timeslice - min_timeslice) * (MAX_PRIO - 1 - static_prio),
                                MAX_USER_PRIO - 1)


def task_interactive(prio, static_prio, prio_bonus_ratio=25, interactive_delta=2):
    nice = static_prio - 120
    delta = cdiv(nice * (MAX_USER_PRIO * prio_bonus_ratio // 100), 40) + interactive_delta
    return prio <= static_prio - delta
