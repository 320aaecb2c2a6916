#!/usr/bin/env bash
# Runs hloc's GPU checks on a machine with an NVIDIA GPU and none of this
# image's packages: the self-contained binaries that tools/build_standalone.sh
# links (hloc, cuda_device_test, gpu_device_test, gpu_inplace_test,
# gpu_corpus_device_test, gpu_bench), the JAX zoo from this checkout and a copy of the corpus.
#
#   bash tools/gpu_device_check.sh BIN_DIR CORPUS_DIR OUT_DIR [tests|bench|all]
#
# BIN_DIR holds the binaries (or BIN_DIR/bin.tar.xz, unpacked first);
# OUT_DIR receives one log per step and summary.txt. The corpus test runs in
# as many shards as there are cores (one GPU, several processes). The bench
# step runs bench/gpu_vs_xla.py (hloc vs XLA through JAX, bandwidth vs copy,
# gemm vs cuBLAS) when gpu_bench is there.
set -uo pipefail
bin=$1; corpus=$2; out=$3; what=${4:-all}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
if [ -f "$bin/bin.tar.xz" ]; then
  tar -C "$bin" -xJf "$bin/bin.tar.xz" || { echo "cannot unpack $bin/bin.tar.xz"; exit 1; }
fi
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

note "== $(date -u +%FT%TZ) $(hostname)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | tee -a "$summary"
export HLOC_CORPUS_DIR=$corpus
# Libraries bundled beside the binaries (tools/build_standalone.sh --bundle-shared).
export LD_LIBRARY_PATH=$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TEST_SRCDIR=$(dirname "$repo") TEST_WORKSPACE=$(basename "$repo")
cores=$(nproc)

run_test() {  # NAME [shards] [timeout seconds]
  local name=$1 shards=${2:-1} limit=${3:-300} start=$SECONDS
  [ -x "$bin/$name" ] || { note "$name: missing"; return; }
  if [ "$shards" = 1 ]; then
    (cd "$repo" && timeout "$limit" "$bin/$name" --gtest_brief=1) >"$out/$name.log" 2>&1
    echo "exit $?" >>"$out/$name.log"
  else
    for ((s = 0; s < shards; s++)); do
      (cd "$repo" && GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$s timeout "$limit" "$bin/$name" \
          --gtest_brief=1 >"$out/$name.$s.log" 2>&1; echo "exit $?" >>"$out/$name.$s.log") &
    done
    wait
    cat "$out/$name".*.log >"$out/$name.log"
    rm -f "$out/$name".*.log
  fi
  note "$name ($((SECONDS - start)) s): $(grep -cE '^\[  PASSED  \]|^\[       OK \]' "$out/$name.log" || true) ok lines;" \
    "$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$name.log" | tr '\n' ' ')" \
    "$(grep -E '^exit ' "$out/$name.log" | sort | uniq -c | tr '\n' ' ')"
  grep -E '^\[  FAILED  \] [A-Za-z]' "$out/$name.log" | sort -u | head -40 | tee -a "$summary"
}

if [ "$what" = tests ] || [ "$what" = all ]; then
  run_test cuda_device_test 1 90
  run_test gpu_device_test 1 180
  run_test gpu_inplace_test 1 120
  run_test gpu_corpus_device_test "$cores" 240
  grep -hE '^(gpu corpus|  )' "$out/gpu_corpus_device_test.log" | head -60 >>"$summary"
  if [ -x "$bin/hloc" ]; then
    # The self-contained CLI: each model on the GPU, compared with the interpreter.
    for m in softmax conv2d mlp_gelu while_loop; do
      {
        cd "$repo" &&
          timeout 120 "$bin/hloc" run "tests/jax/zoo/$m.snapshot.pb" --backend=cuda --output="$out/.cuda.pb" &&
          timeout 120 "$bin/hloc" run "tests/jax/zoo/$m.snapshot.pb" --backend=interpreter --output="$out/.ref.pb" &&
          "$bin/hloc" compare "$out/.ref.pb" "$out/.cuda.pb"
      } >>"$out/hloc_run.log" 2>&1
      note "hloc run --backend=cuda $m vs interpreter: exit $? $(tail -1 "$out/hloc_run.log")"
    done
    rm -f "$out/.cuda.pb" "$out/.ref.pb"
  fi
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  if [ -x "$bin/gpu_bench" ]; then
    (cd "$repo" && PYTHONUNBUFFERED=1 timeout 420 python3 bench/gpu_vs_xla.py --bin "$bin/gpu_bench" \
        --out "$out/gpu_bench.md") >"$out/gpu_bench.log" 2>&1
    note "gpu_vs_xla: exit $?"
    tail -60 "$out/gpu_bench.log" >>"$summary"
  else
    note "gpu_bench: missing"
  fi
fi
cat "$summary"
