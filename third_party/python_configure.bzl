"""Binds the Python that runs hloc's Python tests: its headers, nanobind's
sources (from the installed PyPI package; tools/setup.sh installs it), the
headers of XLA's FFI that jaxlib installs (hloc.jax runs executables through
it; empty when jaxlib is missing) and the interpreter's path. Read once per
machine; re-read when PATH changes."""

_SCRIPT = """
import os, sys, sysconfig
import nanobind
print(sysconfig.get_paths()["include"])
print(os.path.dirname(nanobind.__file__))
print(sys.executable)
try:
    import jax.ffi
    print(jax.ffi.include_dir())
except Exception:
    print("")
"""

def _python_configure_impl(ctx):
    python = ctx.which("python3")
    if python == None:
        fail("python3 is not on PATH")
    result = ctx.execute([python, "-c", _SCRIPT])
    if result.return_code != 0:
        fail("python3 could not report its headers and nanobind (run tools/setup.sh): " + result.stderr)
    include, nanobind, executable, xla_ffi = (result.stdout.strip("\n").split("\n") + [""])[:4]
    # Another Python's headers (a folder holding Python.h): the extension is
    # then built for that Python, e.g. to carry it to a machine whose Python
    # differs from this one (tools/build_python_standalone.sh). The tests
    # still run with the local interpreter.
    other_include = ctx.os.environ.get("HLOC_PYTHON_INCLUDE", "")
    if other_include:
        if not ctx.path(other_include + "/Python.h").exists:
            fail("HLOC_PYTHON_INCLUDE=%s holds no Python.h" % other_include)
        include = other_include
    ctx.symlink(include, "python_include")
    ctx.symlink(nanobind, "nanobind")
    if xla_ffi:
        ctx.symlink(xla_ffi, "xla_ffi_include")
        xla_ffi_library = """
cc_library(
    name = "xla_ffi_headers",
    hdrs = glob(["xla_ffi_include/xla/ffi/api/*.h"]),
    includes = ["xla_ffi_include"],
    defines = ["HLOC_HAVE_XLA_FFI"],
)
"""
    else:
        xla_ffi_library = """
# jaxlib is not installed: no XLA FFI headers (hloc.jax needs jax anyway).
cc_library(name = "xla_ffi_headers")
"""
    ctx.file("defs.bzl", "PYTHON = \"%s\"\n" % executable)
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "python_headers",
    hdrs = glob(["python_include/**/*.h"]),
    includes = ["python_include"],
)

cc_library(
    name = "nanobind",
    srcs = ["nanobind/src/nb_combined.cpp"],
    hdrs = glob([
        "nanobind/include/**/*.h",
        "nanobind/src/*.h",
        "nanobind/ext/robin_map/include/**/*.h",
    ]),
    copts = ["-fvisibility=hidden", "-fno-strict-aliasing", "-O2"],
    # nb_combined.cpp includes the other sources.
    textual_hdrs = glob(["nanobind/src/*.cpp"], exclude = ["nanobind/src/nb_combined.cpp"]),
    includes = ["nanobind/include", "nanobind/ext/robin_map/include"],
    deps = [":python_headers"],
)

exports_files(["defs.bzl"])
""" + xla_ffi_library)

python_configure = repository_rule(
    implementation = _python_configure_impl,
    environ = ["PATH", "PYENV_VERSION", "HLOC_PYTHON_INCLUDE"],
    local = True,
)
