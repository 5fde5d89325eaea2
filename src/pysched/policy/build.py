"""Scheduler policies written in C outside the package, built and loaded at
run time::

    pysched.build_policy("round_robin.c")    # compile (or reuse), load, register
    sim = pysched.Simulator("rr-c")          # its presets are presets like any other

The file includes ``<pysched/policy_lib.h>`` (in ``include_dir()``) and ends
with ``PS_POLICY_LIBRARY(&its_policy, ...)``.  It is compiled with the
compiler and flags that built Python, plus -O2, into a shared library cached
under ``$PYSCHED_CACHE`` (default ``~/.cache/pysched/policies``) and named
by a hash of everything that goes into it: the library's name and source,
the ABI, the commands, the headers and the _core it links against.  An edited source is
therefore rebuilt, and an unchanged one is only loaded.

A library is known by its name (default: the file's stem).  Building under
that name again replaces its presets by the new version's; simulators made
before keep the code they were made with (a library is never unloaded).
A preset name that is built in, that another library declares or that a
Python policy is registered as, is refused.

A Simulator of such a preset carries its library's source when pickled, so
that a fresh process (a sweep worker) rebuilds or reloads it on unpickling.

Under pysched's sanitizer build (PYSCHED_SANITIZE=1, ``SANITIZE``) a
library is built with AddressSanitizer and UBSan too (``sanitize=``), so
that a policy's own memory errors are reported where they happen.
"""
import ctypes
import hashlib
import os
import re
import shlex
import subprocess
import sysconfig
import tempfile
import threading
from dataclasses import dataclass

from .. import _core
from . import registry
from .registry import PolicyLibrary
from . import scx_tunables
from . import base as _python_policy

__all__ = ["ABI_VERSION", "PolicyBuildError", "PolicyLibrary", "build_policy", "include_dir"]

ABI_VERSION = _core.ABI_VERSION
# pysched's _core was built with AddressSanitizer and UBSan (PYSCHED_SANITIZE=1)
SANITIZE = bool(_core.SANITIZE)
# what build_policy(sanitize=True) adds to the compiler's flags: the
# sanitizers of pysched's own sanitizer build (setup.py), with the frames
# and lines their reports name
SANITIZE_CFLAGS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                   "-fno-omit-frame-pointer", "-g")


_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


class PolicyBuildError(_core.Error):
    """A policy's C file did not compile or link.  The message holds the
    compiler's (file:line: error ...); ``command`` and ``output`` too."""

    def __init__(self, message, command=None, output=""):
        super().__init__(message)
        self.command = command
        self.output = output


@dataclass(frozen=True)
class PolicySource:
    """What a policy library is built from.  It travels with a pickled
    Simulator, so that another process can build the same library; one
    built with the sanitizers is built so there only if that process can
    load it (build_policy's sanitize=None: as its pysched was built)."""
    name: str
    path: str
    text: bytes
    extra_cflags: tuple
    sanitize: object = None


@dataclass(frozen=True)
class _Loaded:
    index: int          # in the binding's list of libraries
    source: PolicySource
    path: str           # the shared library
    presets: tuple


_lock = threading.Lock()
_loaded = {}   # cache key -> _Loaded
_current = {}  # library name -> the _Loaded whose presets answer to their names
_headers_digest = None


def include_dir():
    """The directory to put on a C compiler's include path for
    ``#include <pysched/policy_lib.h>``: the headers pysched was built
    from, installed with it."""
    # pysched/include, beside the compiled core (setup.py puts them there)
    d = os.path.join(os.path.dirname(os.path.abspath(_core.__file__)), "include")
    if not os.path.isfile(os.path.join(d, "pysched", "policy_lib.h")):
        raise _core.Error(f"pysched's C headers are missing from {d}: they are installed with "
                          "the package by pip install . (an editable install has none)")
    return d


def cache_dir():
    """Where built policy libraries are kept: $PYSCHED_CACHE, or
    ~/.cache/pysched/policies."""
    return os.environ.get("PYSCHED_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "pysched", "policies")


def _asan_loaded():
    """Whether AddressSanitizer's runtime is in this process (pysched's
    sanitizer build needs it preloaded): a library built with it can only
    be loaded then -- otherwise the runtime aborts the process."""
    try:
        ctypes.CDLL(None).__asan_init
        return True
    except AttributeError:
        return False


def _sanitizer_flags(flags):
    """The -fsanitize= flags among a compile command's, which its link
    command needs too (the sanitizers' runtimes): without them -z defs
    finds the instrumentation's calls undefined."""
    return [f for f in flags if f.startswith("-fsanitize=")]


def _commands(extra_cflags, sanitize=False):
    """The compile command (without its input and output), and the link
    command's parts before and after the object, from the flags that built
    Python; with sanitize, SANITIZE_CFLAGS added."""
    cv = sysconfig.get_config_vars()
    extra = (*(SANITIZE_CFLAGS if sanitize else ()), *extra_cflags)
    compile_ = (shlex.split(cv.get("CC") or "cc") + shlex.split(cv.get("CFLAGS") or "")
                + shlex.split(cv.get("CCSHARED") or "")
                + ["-O2", "-fvisibility=hidden", "-I", include_dir(), *extra])
    # The engine functions a policy calls (ps_log_event, ps_fail ...) are
    # those of the _core extension already in the process.  The library is
    # linked against that very file: -z defs then reports a call to a
    # function the engine lacks when it is built, with the compiler's
    # file:line, and at dlopen the loader binds the calls to the loaded _core
    # (the same file is never loaded twice).  The alternatives are worse:
    # RTLD_GLOBAL on _core would let its symbols interpose on every library
    # loaded after it, and a table of function pointers would have to be
    # kept in step with engine_internal.h by hand.  The path of _core is part
    # of the cache key, as the library names it.
    link = (shlex.split(cv.get("LDSHARED") or "cc -shared"),
            [os.path.realpath(_core.__file__), "-lm", "-Wl,-z,defs", *_sanitizer_flags(extra)])
    return compile_, link


def _key(source, commands):
    """The cache key: a hash of everything the shared library depends on."""
    global _headers_digest
    if _headers_digest is None:
        h = hashlib.sha256()
        hdir = os.path.join(include_dir(), "pysched")
        for f in sorted(os.listdir(hdir)):
            with open(os.path.join(hdir, f), "rb") as fh:
                h.update(f.encode() + b"\0" + fh.read() + b"\0")
        _headers_digest = h.hexdigest()
    h = hashlib.sha256()
    # the name too: the same file under two names is two libraries
    for part in (f"pysched policy library, ABI {ABI_VERSION}", scx_tunables.VERSION,
                 source.name, repr(commands),
                 _headers_digest, source.text):
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _run(command, what, source):
    r = subprocess.run(command, capture_output=True, text=True, errors="replace")
    if r.returncode:
        output = (r.stdout + r.stderr).strip()
        raise PolicyBuildError(f"{what} {source.path} failed (exit status {r.returncode}):\n"
                               f"{output}", command, output)


def _build(source, key, commands):
    """The shared library of source, compiled unless the cache has it."""
    cache = cache_dir()
    os.makedirs(cache, exist_ok=True)
    so = os.path.join(cache, f"{source.name}-{key[:20]}.so")
    if os.path.exists(so):
        return so
    compile_, link = commands
    with tempfile.TemporaryDirectory(dir=cache, prefix=".build-") as tmp:
        src = source.path
        if not _same_file(src, source.text):
            # built from a pickle's copy: the original is elsewhere or changed
            src = os.path.join(tmp, os.path.basename(source.path) or "policy.c")
            with open(src, "wb") as f:
                f.write(source.text)
        if scx_tunables.is_dialect(source.text):
            # a sched_ext scheduler in the C dialect: compiled through a copy
            # whose const volatile tunables are parameters, its messages on
            # the file's own lines, its own "includes" found beside it
            src = os.path.join(tmp, "scx_" + (os.path.basename(source.path) or "policy.c"))
            with open(src, "wb") as f:
                f.write(scx_tunables.transform(source.text, source.path))
            # (its globals are slots of u64 read as their own types)
            compile_ = compile_ + ["-iquote", os.path.dirname(os.path.abspath(source.path)),
                                   "-fno-strict-aliasing"]
        obj, out = os.path.join(tmp, "policy.o"), os.path.join(tmp, "policy.so")
        try:
            _run(compile_ + ["-c", src, "-o", obj], "compiling", source)
            _run(link[0] + [obj] + link[1] + ["-o", out], "linking", source)
        except FileNotFoundError as e:
            raise PolicyBuildError(f"no C compiler to build {source.path}: {e.filename} is "
                                   "not installed (pysched uses the one that built Python)") from e
        # atomic: a process that finds the file finds it whole
        os.replace(out, so)
    return so


def _same_file(path, text):
    try:
        with open(path, "rb") as f:
            return f.read() == text
    except OSError:
        return False


def _sanitize(source):
    """Whether source's library is built with SANITIZE_CFLAGS: as asked,
    or as pysched was built."""
    return SANITIZE if source.sanitize is None else source.sanitize


def _check_loadable(source):
    """A library with AddressSanitizer is refused before it is built where
    its runtime is not loaded: loading it would abort the process."""
    flags = [*(SANITIZE_CFLAGS if _sanitize(source) else ()), *source.extra_cflags]
    if any("address" in f for f in _sanitizer_flags(flags)) and not _asan_loaded():
        raise _core.ConfigError(
            f"{source.path}: a policy built with AddressSanitizer "
            f"({'sanitize=True' if _sanitize(source) else ' '.join(_sanitizer_flags(flags))}) "
            "can only be loaded where its runtime is: install pysched's sanitizer build "
            "(PYSCHED_SANITIZE=1) and preload libasan (docs/internals/sanitizer.md)")


def _load(source):
    """The library of source, built if need be and loaded (inactive if new)."""
    _check_loadable(source)
    commands = _commands(source.extra_cflags, _sanitize(source))
    key = _key(source, commands)
    lib = _loaded.get(key)
    if lib is None:
        so = _build(source, key, commands)
        index, presets = _core.load_policy_library(so, source.path)
        lib = _loaded[key] = _Loaded(index, source, so, tuple(p[0] for p in presets))
    return lib


def _activate(lib):
    """lib's presets answer to their names, in place of its earlier version's."""
    old = _current.get(lib.source.name)
    if old is lib:
        return
    # the core knows the built-in presets and the libraries' (it checks
    # those), not the Python policies
    for name in lib.presets:
        cls = _python_policy.registered().get(name)
        if cls is not None:
            raise _core.ConfigError(
                f"{lib.source.path} declares preset '{name}', which is the name of the Python "
                f"policy {cls.__module__}.{cls.__qualname__}: choose another name")
    _core.activate_policy_library(lib.index, old.index if old else -1)
    _current[lib.source.name] = lib
    registry._param_table.cache_clear()


def build_policy(path, name=None, extra_cflags=(), sanitize=None):
    """Compile the C policy file `path` (or find it built), load it and
    register its presets; returns a PolicyLibrary.  `name` names the
    library (default: the file's stem); building under a name again
    replaces that library's presets.  `extra_cflags` are added to the
    compiler's flags (e.g. ["-DDEBUG"]); -fsanitize= flags among them to
    the linker's too.  `sanitize`: build with AddressSanitizer and UBSan
    (SANITIZE_CFLAGS), as pysched's sanitizer build is; None (default):
    so if pysched was built so (SANITIZE).

    Raises PolicyBuildError with the compiler's message when the file does
    not compile or link, and ConfigError when the library is refused: built
    for another ABI, malformed tables, a preset name taken by a built-in
    preset or another library, or AddressSanitizer asked for where its
    runtime is not loaded (pysched's release build without libasan
    preloaded)."""
    path = os.fspath(path)
    if not isinstance(path, str):
        path = os.fsdecode(path)
    if name is None:
        name = os.path.splitext(os.path.basename(path))[0]
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"name={name!r}: a library name is 1..64 letters, digits, '_', '.' or "
                         "'-' (it names its file in the cache); pass name=")
    if isinstance(extra_cflags, (str, bytes)) or not all(
            isinstance(f, str) for f in extra_cflags):
        raise TypeError(f"extra_cflags must be a list of str, not {extra_cflags!r}")
    if sanitize not in (None, True, False):
        raise TypeError(f"sanitize must be True, False or None, not {sanitize!r}")
    with open(path, "rb") as f:
        text = f.read()
    source = PolicySource(name, os.path.abspath(path), text, tuple(extra_cflags), sanitize)
    with _lock:
        lib = _load(source)
        _activate(lib)
    return PolicyLibrary(name, source.path, lib.path, lib.presets)


def _source_of(preset):
    """The source of the library whose preset this is now, or None (built in)."""
    for lib in list(_current.values()):
        if preset in lib.presets:
            return lib.source
    return None


def _library_index(source):
    """The binding's index of source's library, loading it if this process
    has not (unpickling).  It takes its presets' names only if no version
    of it has them yet: unpickling does not change what a name means."""
    with _lock:
        lib = _load(source)
        if source.name not in _current:
            try:
                _activate(lib)
            except _core.ConfigError:
                pass  # another library has the names; the snapshot names its own
        return lib.index


def _current_sources():
    """The sources of the libraries whose presets are known now."""
    return [lib.source for lib in _current.values()]


def _preload(sources):
    """A process pool's initializer: the parent's libraries, known by name."""
    for source in sources:
        _library_index(source)
