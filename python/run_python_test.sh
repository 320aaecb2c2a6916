#!/usr/bin/env bash
# Runs one Python test file with the given interpreter and the hloc package
# built by Bazel on PYTHONPATH, from the workspace root (so tests/jax/... is
# found), with JAX on the CPU.
set -euo pipefail
python=$1
test=$2
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
cd "$root"
export PYTHONPATH="$root/python:$root/tests/jax${PYTHONPATH:+:$PYTHONPATH}"
export JAX_PLATFORMS=cpu
exec "$python" "$test"
