"""A small library of workload programs."""
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
