"""Binds what hloc's PJRT plugin (//api/pjrt) needs from outside the repository:

  - the PJRT C API header (xla/pjrt/c/pjrt_c_api.h, API 0.90), which
    tools/setup.sh extracts from PyPI's tensorflow-cpu 2.21 wheel into
    $HLOC_PJRT_HEADER_DIR (default ~/.cache/hloc-pjrt/include); it is not
    committed;
  - the Python of the virtual environment with torch and torch_xla that the
    PyTorch tests run (tools/setup.sh makes it at $HLOC_TORCH_VENV, default
    ~/.cache/hloc-torch-venv).

When either is missing the repository still loads, so the rest of `//...`
builds: the header target then fails with a message naming tools/setup.sh,
and TORCH_PYTHON is empty (the PyTorch tests fail saying so)."""

def _home(ctx):
    return ctx.os.environ.get("HOME", "/root")

def _pjrt_configure_impl(ctx):
    header_dir = ctx.os.environ.get("HLOC_PJRT_HEADER_DIR", _home(ctx) + "/.cache/hloc-pjrt/include")
    header = ctx.path(header_dir + "/xla/pjrt/c/pjrt_c_api.h")
    if header.exists:
        ctx.symlink(header, "include/xla/pjrt/c/pjrt_c_api.h")
    else:
        ctx.file("include/xla/pjrt/c/pjrt_c_api.h", """
#error "xla/pjrt/c/pjrt_c_api.h is missing from %s: run tools/setup.sh"
""" % header_dir)

    venv = ctx.os.environ.get("HLOC_TORCH_VENV", _home(ctx) + "/.cache/hloc-torch-venv")
    python = ctx.path(venv + "/bin/python")
    ctx.file("defs.bzl", "TORCH_PYTHON = \"%s\"\n" % (str(python) if python.exists else ""))
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

cc_library(
    name = "pjrt_c_api",
    hdrs = ["include/xla/pjrt/c/pjrt_c_api.h"],
    includes = ["include"],
)

exports_files(["defs.bzl"])
""")

pjrt_configure = repository_rule(
    implementation = _pjrt_configure_impl,
    environ = ["HOME", "HLOC_PJRT_HEADER_DIR", "HLOC_TORCH_VENV"],
    local = True,
)
