"""The timer wheel of 2.4's kernel/timer.c, literally, in plain Python: an
independent model of the order in which timers due at one jiffy fire.

internal_add_timer appends a timer idx = expires - timer_jiffies ahead to
tv1 (idx < 2^8, bucket expires & 255) or tv2..tv5 (idx < 2^14, 2^20, 2^26,
else; bucket (expires >> 8 + 6k) & 63): "Timers are FIFO!".  run_timer_list,
for each jiffy up to jiffies: when tv1's index is 0, cascade_timers re-adds
tv2's current bucket through internal_add_timer and moves tv2's index on,
then tv3's when tv2's index came back to 1, and so on; then it runs tv1's
bucket from its head and moves timer_jiffies and tv1's index on.  (2.5's
per-CPU tvec_base_t cascades and appends the same way.)
"""


class Wheel24:
    def __init__(self):
        self.timer_jiffies = 0
        self.tv = [[[] for _ in range(256)]] + [[[] for _ in range(64)] for _ in range(4)]
        self.index = [0] * 5

    def add(self, expires, name):
        idx = expires - self.timer_jiffies
        if idx < 0:
            vec = self.tv[0][self.index[0]]
        elif idx < 1 << 8:
            vec = self.tv[0][expires & 255]
        else:
            level = 1
            while level < 4 and idx >= 1 << (8 + 6 * level):
                level += 1
            vec = self.tv[level][(expires >> (8 + 6 * (level - 1))) & 63]
        vec.append((expires, name))

    def _cascade(self, level):
        bucket = self.tv[level][self.index[level]]
        self.tv[level][self.index[level]] = []
        for expires, name in bucket:
            self.add(expires, name)
        self.index[level] = (self.index[level] + 1) & 63

    def run(self, jiffies):
        """run_timer_list at the tick of `jiffies`: the names fired, in order."""
        fired = []
        while jiffies - self.timer_jiffies >= 0:
            if not self.index[0]:
                n = 1
                while True:
                    self._cascade(n)
                    if not (self.index[n] == 1 and n + 1 < 5):
                        break
                    n += 1
            bucket = self.tv[0][self.index[0]]
            self.tv[0][self.index[0]] = []
            fired += [name for _, name in bucket]
            self.timer_jiffies += 1
            self.index[0] = (self.index[0] + 1) & 255
        return fired


def firing_order(armings, until):
    """armings: (jiffy armed at, expires, name), in arming order, each armed
    in process context after jiffy's tick (none at jiffy 0 here); the names
    in the order the wheel fires them up to jiffy `until`."""
    wheel = Wheel24()
    by_jiffy = {}
    for n, expires, name in armings:
        by_jiffy.setdefault(n, []).append((expires, name))
    fired = []
    for j in range(until + 1):
        if j:
            fired += wheel.run(j)
        for expires, name in by_jiffy.get(j, []):
            wheel.add(expires, name)
    return fired
