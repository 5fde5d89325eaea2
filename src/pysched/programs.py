"""A small library of workload programs: hogs, interactive tasks, an X
server and its clients, a compile, media players, I/O-bound tasks, a pipe
ring, and interbench's benchmarked tasks and loads.

A function whose workload is one task returns a Program; one whose
workload is several tasks (interbench's loads, the ring) returns a list of
Programs, one per task."""
from ._checks import check_int, check_number
from .dist import exponential, uniform
from .program import Program


def cpu_hog():
    """A task that computes forever."""
    return Program().loop().run(s=1).end()


def interactive(run_ms, sleep_ms):
    """A task that computes run_ms, then sleeps sleep_ms, forever."""
    return Program().loop().run(ms=run_ms).sleep(ms=sleep_ms).end()


def x_server(request="xreq", reply="xreply", work_ms=uniform(2, 6)):
    """An X-like server: for each request it computes work_ms, then wakes
    the client waiting longest on `reply` (a process-context wakeup)."""
    return Program().loop().wait(request).run(ms=work_ms).post(reply).end()


def x_client(request="xreq", reply="xreply", think_ms=exponential(200), work_ms=1):
    """A client of x_server that mostly sleeps: it thinks (sleeps) think_ms,
    asks the server, waits for the reply and computes work_ms."""
    return (Program().loop().sleep(ms=think_ms).post(request).wait(reply).run(ms=work_ms)
            .end())


def kernel_compile(jobs=4, done="ccdone", cc_ms=uniform(100, 600), io_ms=exponential(3)):
    """A `make -j jobs`-like load: make forks `jobs` compiler processes and
    forks a new one whenever one exits.  Each cc reads its source (io),
    computes cc_ms with two short reads in between, reports and exits."""
    cc = (Program().io(ms=io_ms).run(ms=cc_ms).io(ms=io_ms).run(ms=cc_ms).io(ms=io_ms)
          .post(done).exit())
    return Program().fork(cc, n=jobs).loop().wait(done).fork(cc).end()


# ---------------------------------------------------------------- media and I/O

def _ms(name, v, lo=0.0):
    return check_number(name, v, lo, 1e9)


def media_player(period_ms, work_ms):
    """A player that decodes work_ms of CPU every period_ms, on an absolute
    schedule (Program.periodic: its calls record lateness, deadlines met
    and frames dropped in sim.periodic()).  work_ms <= period_ms: a duty
    cycle above 100 % is refused."""
    period_ms = _ms("period_ms", period_ms)
    work_ms = _ms("work_ms", work_ms)
    if period_ms <= 0:
        raise ValueError(f"period_ms={period_ms:g} must be > 0")
    if work_ms > period_ms:
        raise ValueError(f"work_ms={work_ms:g} exceeds period_ms={period_ms:g}: a duty cycle of "
                         f"{100 * work_ms / period_ms:.0f} % (allowed 0..100 %)")
    return Program().loop().periodic(round(period_ms * 1000), round(work_ms * 1000)).end()


def io_bound(read_ms, cpu_ms):
    """A task that reads (an uninterruptible wait for the device of read_ms)
    then computes cpu_ms, forever."""
    read_ms = _ms("read_ms", read_ms)
    cpu_ms = _ms("cpu_ms", cpu_ms)
    if read_ms + cpu_ms <= 0:
        raise ValueError("read_ms + cpu_ms must be > 0, or the task would spin without time passing")
    return Program().loop().io(ms=read_ms).run(ms=cpu_ms).end()


def pipe_ring(n=4, work_us=10, channel="ring"):
    """n tasks passing one token round a ring of semaphores (channels
    `channel`0 .. n-1): each waits for it, computes work_us (the semaphore
    operations themselves; 0 would be a ring of wakeups with no time
    passing) and posts it on.  Returns the n programs; the first holds
    the token."""
    n = check_int("n", n, 2, 100_000)
    work_us = check_number("work_us", work_us, 0, 1e9)
    if work_us <= 0:
        raise ValueError("work_us=0: a ring that passes its token in no time never lets time pass")
    progs = []
    for i in range(n):
        p = Program()
        if i == 0:
            p.run(us=work_us).post(f"{channel}1")
        progs.append(p.loop().wait(f"{channel}{i}").run(us=work_us).post(f"{channel}{(i + 1) % n}")
                     .end())
    return progs


# ---------------------------------------------------------------- interbench 0.31's tasks
# (ckolivas/interbench, interbench.c: emulate_audio, _video, _x, _game and
# the loads); the benchmarked ones leave their calls in sim.periodic()

def audio():
    """interbench's Audio: 2.5 ms of CPU every 50 ms (5 %)."""
    return Program().loop().periodic(50_000, 2_500).end()


def video():
    """interbench's Video: 60 frames a second, 40 % of each (16,666 us
    periods of 6,666 us: its integer arithmetic)."""
    return Program().loop().periodic(1_000_000 // 60, 1_000_000 // 60 * 40 // 100).end()


def x():
    """interbench's X: frame i of each 101-frame ramp burns i ms with an
    interval of 100 - i ms, and the deadline it returns is moved on by i
    ms (so wakeups later than the last frame's burn only count)."""
    p = Program().loop()
    for i in range(101):
        p.periodic((100 - i) * 1000, i * 1000, advance_us=i * 1000)
    return p.end()


def gaming():
    """interbench's Gaming: 100 ms frames of CPU forever, each due 100 ms
    after it begins (Program.frame: how late it finishes is its latency)."""
    return Program().loop().frame(100_000, 100_000).end()


def burn(threads=4):
    """interbench's Burn load: `threads` CPU hogs (its -L, 4 by default)."""
    threads = check_int("threads", threads, 1, 100_000)
    return [cpu_hog() for _ in range(threads)]


def write():
    """interbench's Write load, as an I/O-bound task (a CPU-only simulator
    has no page cache): streaming a RAM-sized file, it dirties pages for
    1 ms of CPU, then waits 4 ms for writeback, forever."""
    return [Program().loop().run(ms=1).io(ms=4).end()]


def read():
    """interbench's Read load, as an I/O-bound task: re-reading a RAM-sized
    file misses the cache, so each 1 ms read from the disk is followed by
    0.1 ms of CPU to copy it, forever."""
    return [io_bound(1, 0.1)]


def compile(threads=4):
    """interbench's Compile load: Burn, Write and Read together."""
    return burn(threads) + write() + read()


def ring(n=4):
    """interbench's Ring load: 4 threads passing a token round a semaphore
    ring (pipe_ring: 10 us of CPU a hop)."""
    return pipe_ring(n)
