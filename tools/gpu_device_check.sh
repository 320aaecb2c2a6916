#!/usr/bin/env bash
# Runs hloc's GPU checks on a machine with an NVIDIA GPU and none of this
# image's packages: the self-contained binaries that tools/build_standalone.sh
# links (hloc, cuda_device_test, gpu_device_test, gpu_dynamic_test, gpu_inplace_test,
# gpu_collective_device_test, api_cuda_device_test, gpu_differential_test,
# gpu_corpus_device_test, gpu_bench), the JAX zoo from this checkout and a copy of the corpus,
# and the Python package when BIN_DIR/py/hloc holds one built for that
# machine's python3 (tools/build_python_standalone.sh BIN_DIR/py INCLUDE).
#
#   bash tools/gpu_device_check.sh BIN_DIR CORPUS_DIR OUT_DIR [tests|bench|all]
#
# BIN_DIR holds the binaries (or BIN_DIR/bin.tar.xz, unpacked first);
# OUT_DIR receives one log per step and summary.txt. The corpus test runs in
# as many shards as there are cores (one GPU, several processes). The bench
# step (when gpu_bench is there) generates the real-size zoo for the GPU
# (tests/jax_large/make_large_zoo.py --gpu, into a temporary folder, or
# BENCH_ZOO_DIR to keep it) and runs
# bench/gpu_vs_xla.py on it and on tests/jax/zoo: hloc vs XLA through JAX,
# device time from CUPTI on both sides and wall time of a warm step, into
# OUT_DIR/gpu_bench.md and .json. Bandwidth and gemm tables: run
# gpu_vs_xla.py by hand (--skip zoo,floor).
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
# Libraries bundled beside the binaries (tools/build_standalone.sh --bundle-shared),
# then the CUDA libraries of pip's nvidia-* wheels (cuBLASLt, cuDNN, NCCL, CUPTI),
# which hloc loads with dlopen.
nvidia_libs=$(python3 -c "import glob, os, nvidia; print(':'.join(sorted({os.path.dirname(f)
    for p in nvidia.__path__ for f in glob.glob(p + '/**/lib*.so*', recursive=True)})))" \
    2>/dev/null || true)
export LD_LIBRARY_PATH=$bin${nvidia_libs:+:$nvidia_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
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
  run_test gpu_dynamic_test 1 120
  run_test gpu_inplace_test 1 120
  run_test gpu_collective_device_test 1 120
  run_test api_cuda_device_test 1 120
  export HLOC_RANDOM_SECONDS=${HLOC_RANDOM_SECONDS:-60}  # the random modules' budget
  run_test gpu_differential_test 1 180
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
  if [ -f "$bin/py/hloc/_hloc.so" ]; then
    # The Python package built for this machine's python3
    # (tools/build_python_standalone.sh BIN_DIR/py ...): its GPU tests, then
    # the general ones, on the GPU machine's numpy, torch, cupy and jax.
    for t in cuda_device_test hloc_test; do
      (cd "$repo" && PYTHONPATH="$bin/py" PYTHONUNBUFFERED=1 timeout 180 python3 "python/$t.py") \
        >"$out/py_$t.log" 2>&1
      rc=$?
      note "python3 python/$t.py: exit $rc; $(grep -E '^(Ran|OK|FAILED)' "$out/py_$t.log" | tr '\n' ' ')" \
        "$(grep -cE '\.\.\. skipped' "$out/py_$t.log") skipped"
      grep -E '^(FAIL|ERROR):|\.\.\. skipped' "$out/py_$t.log" | head -20 | tee -a "$summary"
    done
  fi
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  # hloc vs XLA measured the same way (bench/gpu_vs_xla.py): the one-kernel
  # floor, the real-size zoo made here for the GPU (not carried: generated
  # by XLA on this GPU, which records its result), then tests/jax/zoo. Each
  # step has a time limit; gpu_vs_xla.py rewrites its report after every
  # model, so a step cut short keeps what it measured. About 4 minutes,
  # at most 6: generation <= BENCH_GEN_LIMIT (default 90 s), then each zoo's
  # models (BENCH_ZOOS, default large,small) until BENCH_BUDGET (default 100 s
  # per zoo) has passed, the
  # measurements killed after 2 * BENCH_BUDGET + 60 s.
  if [ -x "$bin/gpu_bench" ]; then
    budget=${BENCH_BUDGET:-100}
    # About 1 GB of snapshots: outside OUT_DIR (only its MANIFEST.tsv is kept).
    zoo=${BENCH_ZOO_DIR:-$(mktemp -d /tmp/hloc_large_zoo.XXXXXX)}
    # JAX's persistent compilation cache, shared by the generation and the
    # measurements: XLA compiles (and autotunes) each real-size model once.
    export JAX_COMPILATION_CACHE_DIR=${JAX_COMPILATION_CACHE_DIR:-$zoo/jax_cache}
    export JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0
    start=$SECONDS
    note "$(date -u +%T) bench: generating the real-size zoo into $zoo"
    (cd "$repo" && PYTHONUNBUFFERED=1 timeout "${BENCH_GEN_LIMIT:-90}" python3 \
        tests/jax_large/make_large_zoo.py --gpu --out "$zoo" --jobs 6) \
        >"$out/large_zoo.log" 2>&1
    rc=$?
    note "$(date -u +%T) make_large_zoo --gpu: exit $rc ($((SECONDS - start)) s)," \
      "$(ls "$zoo"/*.snapshot.pb 2>/dev/null | wc -l) snapshots," \
      "$(du -sh "$zoo" 2>/dev/null | cut -f1)"
    cp "$zoo/MANIFEST.tsv" "$out/large_zoo_MANIFEST.tsv" 2>/dev/null
    grep -E 'FAILED|Error' "$out/large_zoo.log" | head -20 >>"$summary"
    start=$SECONDS
    (cd "$repo" && PYTHONUNBUFFERED=1 timeout $((2 * budget + 60)) python3 bench/gpu_vs_xla.py \
        --bin "$bin/gpu_bench" --out "$out/gpu_bench.md" --zoo "${BENCH_ZOOS:-large,small}" \
        --large-dir "$zoo" --skip bandwidth,gemm --min-time 0.1 --trace-steps 20 \
        --timeout 60 --budget "$budget") >"$out/gpu_bench.log" 2>&1
    rc=$?
    note "$(date -u +%T) gpu_vs_xla: exit $rc ($((SECONDS - start)) s); report $out/gpu_bench.md and .json"
    grep -E 'Error|error:|Traceback' "$out/gpu_bench.log" | head -10 >>"$summary"
    [ -f "$out/gpu_bench.md" ] && cat "$out/gpu_bench.md" >>"$summary"
    [ -z "${BENCH_ZOO_DIR:-}" ] && rm -rf "$zoo"
  else
    note "gpu_bench: missing"
  fi
fi
cat "$summary"
