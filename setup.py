"""Build of the C extension pysched._core from csrc/.

PYSCHED_SANITIZE=1 builds it with AddressSanitizer and UBSan (see README,
"Sanitizer build")."""
import glob
import os

from setuptools import Extension, setup

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
    cflags += ["-O2"]

setup(
    options={"build": {"build_base": build_base}},
    ext_modules=[
        Extension(
            "pysched._core",
            # every C file below csrc/: a new policy file needs no edit here
            sources=sorted(glob.glob("csrc/**/*.c", recursive=True)),
            depends=sorted(glob.glob("csrc/**/*.h", recursive=True)),
            include_dirs=["csrc", "csrc/core", "csrc/policies"],
            extra_compile_args=cflags,
            extra_link_args=ldflags,
            libraries=["m"],
        )
    ]
)
