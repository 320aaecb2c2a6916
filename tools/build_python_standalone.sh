#!/usr/bin/env bash
# Builds the `hloc` Python package for another Python into DIR/hloc, with
# LLVM, Abseil and protobuf linked into _hloc.so statically and oneDNN
# bundled beside it (tools/build_standalone.sh --bundle-shared), so that
# PYTHONPATH=DIR makes `import hloc` work on a machine that has none of this
# image's packages: a GPU machine whose Python is not this one's, say.
#
#   bash tools/build_python_standalone.sh DIR PYTHON_INCLUDE
#
# PYTHON_INCLUDE is the target Python's header folder (the one holding
# Python.h and pyconfig.h), e.g. /root/.pyenv/versions/3.12.1/include/python3.12
# for CPython 3.12 (any 3.12.x: the ABI holds within a minor version). The
# build sets HLOC_PYTHON_INCLUDE for Bazel's python_config repository, which
# then compiles the extension and nanobind against those headers; the next
# build without it goes back to this machine's Python.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIR PYTHON_INCLUDE" >&2; exit 2; }
out_dir=$1
include=$(cd "$2" && pwd)
[ -f "$include/Python.h" ] || { echo "error: no Python.h in $include" >&2; exit 1; }
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out_dir"
HLOC_PYTHON_INCLUDE=$include bash "$repo/tools/build_standalone.sh" "$out_dir" --bundle-shared \
  --target=//python:hloc/_hloc.so
cp "$repo"/python/src/hloc/*.py "$out_dir/hloc/"
rm -f "$out_dir/hloc/_hloc.so.ldd"
echo "ok: PYTHONPATH=$out_dir imports hloc built for $(grep -m1 'define PY_VERSION ' "$include/patchlevel.h" | cut -d'"' -f2)"
