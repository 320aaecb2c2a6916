#!/usr/bin/env bash
# Runs a torch_xla_hloc test with the Python of the torch/torch_xla virtual
# environment (tools/setup.sh makes it; third_party/pjrt_configure.bzl finds
# it): run_torch_test.sh PYTHON TEST.py ARGS...
set -euo pipefail
python=$1
shift
if [ -z "$python" ] || [ ! -x "$python" ]; then
  echo "FAILED: no Python with torch and torch_xla; run tools/setup.sh (it makes ~/.cache/hloc-torch-venv)"
  exit 1
fi
# The plugin's and the package's paths are relative to the runfiles root.
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}"
export PYTHONDONTWRITEBYTECODE=1
exec "$python" "$@"
