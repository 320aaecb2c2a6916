#!/usr/bin/env bash
# Runs every hloc test: installs what is missing (tools/setup.sh), then
# `bazel test //...` with the XLA corpus from ../shared/corpus. Ends with one
# line "N passed, N failed[, N skipped]" counting Bazel test targets.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bash tools/setup.sh || exit 1
export HLOC_CORPUS_DIR="${HLOC_CORPUS_DIR:-$(cd "$here/.." && pwd)/shared/corpus}"
log="$(mktemp)"
bazel test //... --test_summary=short "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
passed=$(grep -cE '^//.* PASSED in ' "$log")
failed=$(grep -cE '^//.* (FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)( in |$)' "$log")
skipped=$(grep -cE '^//.* SKIPPED' "$log")
rm -f "$log"
# A build failure leaves no per-target lines; count it as a failure.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit "$rc"
