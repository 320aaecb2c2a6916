#!/usr/bin/env bash
# Runs hloc's fuzzers (tests/fuzz; libFuzzer + ASan/UBSan, clang-19) for
# longer than CI does, keeping what they learn between runs.
#
#   bash tools/fuzz.sh [SECONDS_EACH] [text|proto|pipeline ...]
#
# Defaults: 600 seconds each, all three. Seeds come from the XLA corpus
# ($HLOC_CORPUS_DIR, else ../shared/corpus); each fuzzer's growing corpus is
# kept in $HLOC_FUZZ_DIR (default ~/.cache/hloc-fuzz)/corpus-KIND, crashes in
# .../artifacts. A crash is reproduced with
#   bazel run --config=fuzz //tests/fuzz:KIND_fuzzer -- FILE
# or, without clang, `bazel run //tests/fuzz:KIND_fuzzer -- FILE`; once fixed,
# copy FILE to tests/fuzz/regressions/KIND/ (fuzz_regression_test runs it).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
seconds="${1:-600}"
shift || true
kinds=("$@")
[ ${#kinds[@]} -eq 0 ] && kinds=(text proto pipeline)
export HLOC_CORPUS_DIR="${HLOC_CORPUS_DIR:-$(cd "$here/.." && pwd)/shared/corpus}"
dir="${HLOC_FUZZ_DIR:-$HOME/.cache/hloc-fuzz}"
mkdir -p "$dir/artifacts"

targets=(//tests/fuzz:make_seeds)
for kind in "${kinds[@]}"; do targets+=("//tests/fuzz:${kind}_fuzzer"); done
bazel build --config=fuzz "${targets[@]}" || exit 1
bin="$(bazel info --config=fuzz bazel-bin 2>/dev/null)/tests/fuzz"
[ -d "$dir/seeds/text" ] || "$bin/make_seeds" "$dir/seeds" || exit 1

export ASAN_OPTIONS="detect_leaks=1:symbolize=1"
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-19/bin/llvm-symbolizer
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
status=0
for kind in "${kinds[@]}"; do
  mkdir -p "$dir/corpus-$kind"
  max_len=8192
  [ "$kind" = pipeline ] && max_len=4096
  dict=()
  [ "$kind" != proto ] && dict=(-dict="$dir/seeds/hlo.dict")
  log="$dir/$kind-$(date +%Y%m%d-%H%M%S).log"
  echo "==== ${kind}_fuzzer for ${seconds}s (log $log)"
  "$bin/${kind}_fuzzer" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 \
      -malloc_limit_mb=1024 -max_len="$max_len" -print_final_stats=1 \
      -artifact_prefix="$dir/artifacts/${kind}-" "${dict[@]}" \
      "$dir/corpus-$kind" "$dir/seeds/$kind" "tests/fuzz/regressions/$kind" > "$log" 2>&1
  rc=$?
  grep -E 'stat::(number_of_executed_units|new_units_added|peak_rss_mb)|^#[0-9]+ *DONE' "$log"
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "${kind}_fuzzer: exit $rc; the log ends:"
    tail -n 40 "$log"
  fi
done
echo "artifacts: $(ls "$dir/artifacts" | wc -l) in $dir/artifacts"
exit "$status"
