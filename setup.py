"""Build of the C extension pysched._core from csrc/.

PYSCHED_SANITIZE=1 builds it with AddressSanitizer and UBSan (see
docs/internals/sanitizer.md)."""
import glob
import os
import re
import shutil

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

# The headers a policy built outside the package compiles against
# (pysched.build_policy): the core's own, copied into the package at build
# time so that csrc/core stays their one source.
HEADERS = sorted(glob.glob("csrc/core/*.h")) + [
    # the sched_ext class's interface and its C dialect (pysched/scx.h)
    "csrc/policies/ext/ext_ops.h", "csrc/policies/ext/scx.h", "csrc/policies/ext/scx_maps.h"]
HEADER_DIR = os.path.join("pysched", "include", "pysched")  # in the built package


class build_py_with_headers(build_py):
    """build_py, plus the core's headers into pysched/include/pysched."""

    def run(self):
        # a fresh copy of the package each time: build_lib is kept between
        # builds of one checkout, and a module that moved (0.2.0 moved most)
        # would otherwise stay there and ship in the wheel beside its new
        # place; build_ext relinks the core into it from its cached objects
        shutil.rmtree(os.path.join(self.build_lib, "pysched"), ignore_errors=True)
        super().run()
        dest = os.path.join(self.build_lib, HEADER_DIR)
        self.mkpath(dest)
        for h in HEADERS:
            self.copy_file(h, dest)

    def get_outputs(self, include_bytecode=True):
        return super().get_outputs(include_bytecode) + [
            os.path.join(self.build_lib, HEADER_DIR, os.path.basename(h)) for h in HEADERS]


# the package version, from its one place (src/pysched/__init__.py):
# snapshots record the version that made them
with open(os.path.join("src", "pysched", "__init__.py")) as f:
    VERSION = re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)

cflags = ["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers", "-Wno-unused-parameter"]
ldflags = []
# a build directory of its own, so that objects of the other build are never reused
build_base = "build/release"
if os.environ.get("PYSCHED_SANITIZE"):
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
    # Python's own CFLAGS carry -fwrapv, which would hide signed overflow from UBSan
    cflags += ["-O1", "-g", "-fno-omit-frame-pointer", "-fno-wrapv"] + san
    ldflags += san
    build_base = "build/sanitize"
else:
    # -fno-semantic-interposition: nothing interposes on the extension's own
    # functions (a policy library binds to them, never replaces them), so
    # calls among them within a file go direct and may be inlined, and
    # -Bsymbolic-functions binds calls between files without the PLT
    cflags += ["-O2", "-fno-semantic-interposition"]
    ldflags += ["-Wl,-Bsymbolic-functions"]

setup(
    options={"build": {"build_base": build_base}},
    cmdclass={"build_py": build_py_with_headers},
    ext_modules=[
        Extension(
            "pysched._core",
            # every C file below csrc/: a new policy file needs no edit here
            sources=sorted(glob.glob("csrc/**/*.c", recursive=True)),
            depends=sorted(glob.glob("csrc/**/*.h", recursive=True)),
            include_dirs=["csrc", "csrc/core", "csrc/policies"],
            define_macros=[("PS_VERSION", f'"{VERSION}"')],
            extra_compile_args=cflags,
            extra_link_args=ldflags,
            # dl: dlopen of the policy libraries built outside the package
            libraries=["m", "dl"],
        )
    ]
)
