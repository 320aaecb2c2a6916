#!/usr/bin/env bash
# Runs hloc's threaded tests under ThreadSanitizer (gcc's -fsanitize=thread,
# `--config=tsan` in .bazelrc): many threads compiling and running through one
# api::Client, the runtime's thread pool and communicator, the host backend's
# and the interpreter's N-device runners.
#
#   bash tools/tsan.sh [extra bazel test arguments]
#
# Not part of tools/test.sh / CI: the TSan build is a second build of most of
# hloc (outputs in k8-fastbuild-tsan), which on two cores costs more than the
# CI budget has left. Any report fails the test (halt_on_error=1) and prints
# both stacks. Reports from code hloc does not build (LLVM's JIT, oneDNN,
# libgomp) are suppressed in tools/tsan_suppressions.txt, each entry with why;
# races in hloc's own code are never suppressed, they are fixed.
# HLOC_TSAN_OUTPUT_BASE=DIR keeps the TSan build in its own Bazel output base
# (so it can build while another Bazel command runs in this checkout).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
startup=()
[ -n "${HLOC_TSAN_OUTPUT_BASE:-}" ] && startup=(--output_base="$HLOC_TSAN_OUTPUT_BASE")
targets=(
  //tests/random:concurrency_test
  //tests/random:determinism_test
  //runtime:runtime_test
  //runtime:communicator_test
  //backend/host:run_on_host_devices_test
  //hlo/evaluator:multi_device_test
  //api:api_test
)
options="halt_on_error=1:second_deadlock_stack=1:history_size=4:suppressions=$here/tools/tsan_suppressions.txt"
symbolizer=/usr/lib/llvm-19/bin/llvm-symbolizer  # file:line in reports (tools/setup.sh installs it)
[ -x "$symbolizer" ] && options="$options:external_symbolizer_path=$symbolizer"
# First, ThreadSanitizer must catch a deliberate race in this build.
bazel "${startup[@]}" build --config=tsan //tests:tsan_self_check || exit 1
bin="$(bazel "${startup[@]}" info --config=tsan bazel-bin 2>/dev/null)"
TSAN_OPTIONS="$options" "$bin/tests/tsan_self_check" >"${TMPDIR:-/tmp}/hloc_tsan_self_check.log" 2>&1
if ! grep -q "ThreadSanitizer: data race" "${TMPDIR:-/tmp}/hloc_tsan_self_check.log"; then
  echo "tools/tsan.sh: ThreadSanitizer did not report tests/tsan_self_check.cc's data race; is --config=tsan instrumenting?" >&2
  cat "${TMPDIR:-/tmp}/hloc_tsan_self_check.log" >&2
  exit 1
fi
echo "tools/tsan.sh: self-check OK (ThreadSanitizer reported the deliberate race)"
exec bazel "${startup[@]}" test --config=tsan \
  --test_env=TSAN_OPTIONS="$options" \
  "${targets[@]}" "$@"
