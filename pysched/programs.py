"""A small library of workload programs."""
from .program import Program


def cpu_hog():
    """A task that computes forever."""
    return Program().loop().run(s=1).end()


def interactive(run_ms, sleep_ms):
    """A task that computes run_ms, then sleeps sleep_ms, forever."""
    return Program().loop().run(ms=run_ms).sleep(ms=sleep_ms).end()


def x_server(channel="input", reply="client", run_ms=4):
    """An X-like server: for each input event it computes run_ms and posts
    the client it serves."""
    return Program().loop().wait(channel).run(ms=run_ms).post(reply).end()


def x_client(channel="client", run_ms=1):
    """A client that sleeps until the server posts it, then computes a little."""
    return Program().loop().wait(channel).run(ms=run_ms).end()
