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
# The fuzz run: the text and proto fuzzers for 45 s each (tests/fuzz/
# fuzz_ci_test.sh) plus their clang-19 build of hlo/ in bazel-out/*-fuzz; with
# HLOC_FUZZ_PIPELINE=1 also the pipeline fuzzer, whose clang build is most of
# hloc (over half an hour on two busy cores). Only on the plain run (extra
# arguments such as --config=asan would mix sanitizers); HLOC_SKIP_FUZZ=1
# leaves it out.
if [ $# -eq 0 ] && [ -z "${HLOC_SKIP_FUZZ:-}" ]; then
  fuzz_targets=(//tests/fuzz:fuzz_ci_test)
  [ -n "${HLOC_FUZZ_PIPELINE:-}" ] && fuzz_targets+=(//tests/fuzz:fuzz_pipeline_ci_test)
  bazel test --config=fuzz "${fuzz_targets[@]}" --test_summary=short 2>&1 | tee -a "$log"
  fuzz_rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] && rc=$fuzz_rc
fi
passed=$(grep -cE '^//.* PASSED in ' "$log")
failed=$(grep -cE '^//.* (FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD)( in |$)' "$log")
skipped=$(grep -cE '^//.* SKIPPED' "$log")
rm -f "$log"
# Test cases that skipped themselves inside a passing target (GPU tests on a
# machine with no GPU, corpus tests without the corpus): count them and show
# each target's first reason, so a skip is never mistaken for a pass.
testlogs="$(bazel info bazel-testlogs "$@" 2>/dev/null)"
if [ -d "$testlogs" ]; then
  python3 - "$testlogs" <<'PY'
import os, re, sys
root = sys.argv[1]
total = 0
for dirpath, _, files in sorted(os.walk(root)):
    if "test.log" not in files:
        continue
    text = open(os.path.join(dirpath, "test.log"), errors="replace").read()
    cases = re.findall(r"^\[  SKIPPED \] \S+ \(\d+ ms\)$", text, re.M)
    if not cases:
        continue
    total += len(cases)
    reason = re.search(r"^\S+:\d+: Skipped\n(.*)$", text, re.M)
    target = "//" + os.path.relpath(dirpath, root).replace(os.sep, "/")
    target = re.sub(r"/shard_\d+_of_\d+$", "", target)
    print(f"  skipped cases: {len(cases):4d} in {target}: {reason.group(1)[:150] if reason else '?'}")
print(f"gtest cases skipped inside passing targets: {total}")
PY
fi
# A build failure leaves no per-target lines; count it as a failure.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
exit "$rc"
