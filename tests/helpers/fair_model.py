"""The fair schedulers' arithmetic in plain Python, written from the kernel
(kernel/sched/core.c's tables, fair.c's __calc_delta, __sched_period,
sched_slice, get_update_sysctl_factor) and docs/schedulers/cfs.md §2, for the tests
of CFS and EEVDF to compute what they expect independently of the C."""

# sched_prio_to_weight, nice -20..19 (docs/schedulers/cfs.md §2)
WEIGHT = [88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
          9548, 7620, 6100, 4904, 3906, 3121, 2501, 1991, 1586, 1277,
          1024, 820, 655, 526, 423, 335, 272, 215, 172, 137,
          110, 87, 70, 56, 45, 36, 29, 23, 18, 15]

# sched_prio_to_wmult: 2^32 / weight as core.c lists it (rounded, except
# nice 13, 14, 16 and 17, which the kernel's table truncates)
WMULT = [48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437,
         449829, 563644, 704093, 875809, 1099582, 1376151, 1717300, 2157191, 2708050, 3363326,
         4194304, 5237765, 6557202, 8165337, 10153587, 12820798, 15790321, 19976592, 24970740,
         31350126, 39045157, 49367440, 61356676, 76695844, 95443717, 119304647, 148102320,
         186737708, 238609294, 286331153]

WMULT_CONST = 2**32 - 1


def weight(nice):
    return WEIGHT[nice + 20]


def inv_weight(w):
    """__update_inv_weight of a runqueue's summed weight."""
    return WMULT_CONST // w


def calc_delta(delta, w, inv):
    """__calc_delta: delta * w * inv >> 32, fact kept within 32 bits."""
    fact, shift = w, 32
    if fact >> 32:
        fs = (fact >> 32).bit_length()
        shift, fact = shift - fs, fact >> fs
    fact *= inv
    if fact >> 32:
        fs = (fact >> 32).bit_length()
        shift, fact = shift - fs, fact >> fs
    return (delta * fact) >> shift


def calc_delta_fair(delta, nice):
    """delta * 1024 / w(nice); a nice-0 task skips the arithmetic."""
    if weight(nice) == 1024:
        return delta
    return calc_delta(delta, 1024, WMULT[nice + 20])


def sysctl_factor(ncpus):
    """SCHED_TUNABLESCALING_LOG: 1 + ilog2(min(ncpus, 8))."""
    return 1 + (min(ncpus, 8).bit_length() - 1)


def sched_slice(nice, others, factor=1, latency=6_000_000, min_gran=750_000):
    """CFS sched_slice of a task of this nice among tasks of nices `others`."""
    lat, gran = latency * factor, min_gran * factor
    nr = 1 + len(others)
    nr_latency = -(-lat // gran)
    period = nr * gran if nr > nr_latency else lat
    load = weight(nice) + sum(weight(n) for n in others)
    return max(calc_delta(period, weight(nice), inv_weight(load)), gran)
