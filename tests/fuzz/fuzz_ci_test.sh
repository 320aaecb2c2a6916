#!/usr/bin/env bash
# Runs each hloc fuzzer (libFuzzer + ASan/UBSan) for a fixed time, seeded from
# the XLA corpus ($HLOC_CORPUS_DIR, through make_seeds) and the saved
# regression inputs. Fails on any crash, sanitizer report, leak, timeout
# (-timeout), huge allocation (-malloc_limit_mb) or memory blow-up
# (-rss_limit_mb), printing the input that did it and how to reproduce it.
#
# Build with --config=fuzz (tools/test.sh runs it so):
#   bazel test --config=fuzz //tests/fuzz:fuzz_ci_test
# HLOC_FUZZ_SECONDS (default 45) is each fuzzer's budget; the arguments (else
# HLOC_FUZZ_TARGETS, else "text proto pipeline") pick the fuzzers.
#
# Before fuzzing it proves it can fail: the text fuzzer runs an input that
# trips an injected heap overflow (HLOC_FUZZ_SELF_TEST=1, fuzz_targets.h),
# and the test stops unless that run fails with ASan's report.
set -uo pipefail

seconds="${HLOC_FUZZ_SECONDS:-45}"
here="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-hloc}/tests/fuzz"
out="${TEST_UNDECLARED_OUTPUTS_DIR:-${TEST_TMPDIR}/outputs}"
work="${TEST_TMPDIR}/fuzz"
mkdir -p "$out" "$work"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=0:symbolize=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1"

"$here/text_fuzzer" -help=1 > "$work/help.txt" 2>&1
if ! grep -q 'max_total_time' "$work/help.txt"; then
  echo "FAIL: $here/text_fuzzer is not a libFuzzer binary: build with --config=fuzz"
  exit 1
fi

# ---- the self-test: a crash must fail this test.
printf 'hloc-fuzz-self-test' > "$work/self-test-input"
HLOC_FUZZ_SELF_TEST=1 "$here/text_fuzzer" -runs=1 "$work/self-test-input" > "$work/self-test.log" 2>&1
self_rc=$?
if [ "$self_rc" -eq 0 ] || ! grep -q 'ERROR: AddressSanitizer: heap-buffer-overflow' "$work/self-test.log"; then
  echo "FAIL: the injected heap overflow was not reported (exit $self_rc); fuzzing would prove nothing"
  cat "$work/self-test.log"
  exit 1
fi
echo "self-test: the injected heap overflow fails the fuzzer (exit $self_rc), as it must"

# ---- seeds
seeds="$work/seeds"
if [ -n "${HLOC_CORPUS_DIR:-}" ] && "$here/make_seeds" "$seeds" > "$work/make_seeds.log" 2>&1; then
  cat "$work/make_seeds.log"
else
  echo "WARNING: no corpus seeds (HLOC_CORPUS_DIR='${HLOC_CORPUS_DIR:-}'); fuzzing from the regression inputs only"
  cat "$work/make_seeds.log" 2>/dev/null
  mkdir -p "$seeds/text" "$seeds/proto" "$seeds/pipeline"
fi
dict=()
[ -f "$seeds/hlo.dict" ] && dict=(-dict="$seeds/hlo.dict")

# print_reproducer FUZZER FILE
print_reproducer() {
  local fuzzer="$1" file="$2"
  echo "---- reproducer $(basename "$file") ($(wc -c < "$file") bytes), saved in the test's undeclared outputs"
  if LC_ALL=C grep -q '[^[:print:][:space:]]' "$file"; then
    echo "(binary; base64 follows)"
    base64 -w 100 "$file" | head -200
  else
    head -c 8000 "$file"; echo
  fi
  echo "---- reproduce: bazel run --config=fuzz //tests/fuzz:${fuzzer} -- FILE"
  echo "     (or without clang: bazel run //tests/fuzz:${fuzzer} -- FILE)"
}

failed=0
# fuzzer  seed-kind  max_len
kinds="${*:-${HLOC_FUZZ_TARGETS:-text proto pipeline}}"
for kind in $kinds; do
  fuzzer="${kind}_fuzzer"
  max_len=8192
  [ "$kind" = pipeline ] && max_len=4096
  corpus="$work/corpus-$kind"
  mkdir -p "$corpus"
  extra=()
  [ "$kind" != proto ] && extra=("${dict[@]}")
  echo "==== $fuzzer: ${seconds}s from $(ls "$seeds/$kind" | wc -l) seeds"
  start=$(date +%s)
  "$here/$fuzzer" -seed=1 -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 -malloc_limit_mb=1024 \
      -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$out/$fuzzer-" "${extra[@]}" \
      "$corpus" "$seeds/$kind" "$here/regressions/$kind" > "$work/$fuzzer.log" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$fuzzer.log" | grep -o '[0-9]*$' | tail -1)
  cp "$work/$fuzzer.log" "$out/"
  echo "$fuzzer: exit $rc, ${execs:-?} executions in ${elapsed}s, corpus $(ls "$corpus" | wc -l) new inputs"
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "FAIL: $fuzzer found a problem; its log ends:"
    tail -n 60 "$work/$fuzzer.log"
    for artifact in "$out/$fuzzer"-*; do
      case "$artifact" in *.log) continue ;; esac
      [ -f "$artifact" ] && print_reproducer "$fuzzer" "$artifact"
    done
  fi
done
exit "$failed"
