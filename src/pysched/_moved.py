"""The modules that moved into the package's folders in 0.2.0, under their
old names for one release.

``import pysched.stability``, ``from pysched.examples import RoundRobin``
and ``ps.houston`` still work: each old name is the very module at its new
place (one module object, so that a class is the same class under either
name and a pickle that names the old path loads), with a FutureWarning
naming the new place -- a FutureWarning rather than a DeprecationWarning
because the ones who see it are users of notebooks and scripts, where
Python hides DeprecationWarnings raised inside the import machinery.

``ps.metrics``, ``ps.plot`` (pysched.results), ``ps.trace``,
``ps.workloads`` and ``ps.analysis`` are public names that stay, without a
warning."""
import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

# old name -> new name, package-relative; public: no warning
MOVED = {
    "houston": "analysis.houston",
    "o1": "analysis.o1",
    "o1_steady": "analysis.o1",
    "stability": "analysis.stability",
    "measure": "analysis.measure",
    "interbench": "workloads.interbench",
    "examples": "policy.examples",
    "testing": "policy.testing",
    "registry": "policy.registry",
    "build": "policy.build",
    "frames": "results.frames",
    "_sweep_grid": "sweeps.grid",
    "_sweep_local": "sweeps.local",
    "_sweep_progress": "sweeps.progress",
    "_sweep_run": "sweeps.batches",
    "_sweep_table": "sweeps.table",
    "_by_value": "sweeps.by_value",
    "_replay": "trace.replay",
    "_ftrace": "results.ftrace",
    "_perfetto": "results.perfetto",
    "_plot_data": "results.plot_data",
    "_kernel_info": "realkernel.kernel_info",
    "_perf_sched": "realkernel.perf_sched",
}
PUBLIC = {"metrics": "results.metrics", "plot": "results.plot"}
# pysched.sweep was the module of the function ps.sweep: the import system
# sets the package's attribute to the module an import of the old name
# gives, so that is a stand-in that is still the function when called
CALLABLE = {"sweep": "sweeps"}


def new_name(package, fullname):
    """The module's new full name and whether to warn, for an old full name
    (a moved package's submodules move with it), or None."""
    rest = fullname[len(package) + 1:] if fullname.startswith(package + ".") else None
    if rest is None:
        return None
    head, _, tail = rest.partition(".")
    for table, warn in ((PUBLIC, False), (MOVED, True), (CALLABLE, True)):
        if head in table:
            return f"{package}.{table[head]}" + (f".{tail}" if tail else ""), warn
    return None


def _warn(old, new):
    """Warn at the user's line: the first frame outside this file and the
    import machinery (whose frames warnings.warn skips by itself)."""
    level, frame = 2, sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith("<frozen importlib") or name == importlib.__file__):
            if name != __file__:
                break
            level += 1
        frame = frame.f_back
    warnings.warn(f"{old} moved to {new}; the old name goes in the next release",
                  FutureWarning, stacklevel=level)


class _CallableModule(types.ModuleType):
    """The old pysched.sweep: the names of pysched.sweeps, and, called, its
    sweep()."""

    def __init__(self, name, target):
        super().__init__(name, target.__doc__)
        self.__dict__.update({k: v for k, v in vars(target).items() if not k.startswith("__")})
        self._target = target

    def __call__(self, *args, **kwargs):
        return self._target.sweep(*args, **kwargs)


class _StandIn(importlib.abc.Loader):
    """Loads an old name that was both a module and a function."""

    def __init__(self, new):
        self.new = new

    def create_module(self, spec):
        _warn(spec.name, self.new)
        return _CallableModule(spec.name, importlib.import_module(self.new))

    def exec_module(self, module):
        pass


class _Alias(importlib.abc.Loader):
    """Loads an old name as the module at its new place."""

    def __init__(self, new, warn):
        self.new, self.warn = new, warn

    def create_module(self, spec):
        if self.warn:
            _warn(spec.name, self.new)
        self.module = importlib.import_module(self.new)
        self.spec = self.module.__spec__
        return self.module

    def exec_module(self, module):
        # the import system gave the module the old name's spec: it keeps
        # its own
        module.__spec__ = self.spec


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, package):
        self.package = package

    def find_spec(self, fullname, path, target=None):
        found = new_name(self.package, fullname)
        if found is None:
            return None
        new, warn = found
        if fullname.removeprefix(self.package + ".") in CALLABLE:
            return importlib.util.spec_from_loader(fullname, _StandIn(new))
        return importlib.util.spec_from_loader(fullname, _Alias(new, warn))


def install(package):
    """Put the finder of the old names first on sys.meta_path (ahead of the
    path finder, which would load a moved package's submodule a second time
    under its old name) and return the package's __getattr__, which gives
    ``ps.houston`` and the like."""
    if not any(isinstance(f, _Finder) and f.package == package for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(package))

    def __getattr__(name):
        found = new_name(package, f"{package}.{name}")
        if found is None or "." in name:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        new, warn = found
        if warn:
            _warn(f"{package}.{name}", new)
        return importlib.import_module(new)

    return __getattr__
