"""A sweep's progress bar: tqdm's when tqdm is installed, else none.

By default the bar shows only where someone watches: in a notebook, or when
stderr is a terminal -- not in a log file, a pipe or a test run, where a bar
is only noise.  progress=True asks for it anywhere, progress=False never.
"""
import sys


class _Silent:
    def update(self, n):
        pass

    def close(self):
        pass


def _in_kernel():
    return "ipykernel.zmqshell" in sys.modules  # a Jupyter kernel runs us


def _widgets():
    """Whether ipywidgets is installed: tqdm's notebook bar is one."""
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def _tqdm():
    try:
        if _in_kernel() and not _widgets():
            # a text bar, which a notebook shows as well: tqdm.auto would
            # warn on import that ipywidgets is missing (not in the test extra)
            from tqdm.std import tqdm
        else:
            # tqdm.auto: a widget in a notebook, text elsewhere
            from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm


def _watched():
    if _in_kernel():
        return True
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def bar(progress, total, done):
    """An object with update(n) and close(): a bar over total points of
    which done are done already, or one that shows nothing; progress is
    None, True or False (checked by the caller)."""
    if progress is False:
        return _Silent()
    tqdm = _tqdm()
    if tqdm is None:
        if progress:
            raise ImportError("progress=True needs tqdm: pip install tqdm (or progress=None: "
                              "a bar when tqdm is installed)")
        return _Silent()
    if progress is None and not _watched():
        return _Silent()
    return tqdm(total=total, initial=done, unit="point", desc="pysched.sweep", smoothing=0.1)
