#!/usr/bin/env bash
# End-to-end checks of the hloc command line: every subcommand on a real JAX
# dump, text <-> proto conversion, and clear failures on bad input.
set -uo pipefail
hloc="$TEST_SRCDIR/$TEST_WORKSPACE/tools/hloc"
zoo="$TEST_SRCDIR/$TEST_WORKSPACE/tests/jax/zoo"
tmp="${TEST_TMPDIR:-/tmp}"
failures=0
check() {  # check NAME EXPECTED_RC COMMAND...
  local name=$1 want=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL $name: exit $rc, wanted $want"; cat "$tmp/out" "$tmp/err"; failures=$((failures+1))
  else
    echo "ok   $name"
  fi
}
expect_in() {  # expect_in NAME FILE TEXT
  if grep -q -- "$3" "$2"; then echo "ok   $1"; else echo "FAIL $1: '$3' not in $2"; cat "$2"; failures=$((failures+1)); fi
}

check help 0 "$hloc" --help
expect_in help-lists-convert "$tmp/out" convert
for cmd in convert verify print stats run compare opt explain graph; do
  check "$cmd-help" 0 "$hloc" "$cmd" --help
  expect_in "$cmd-help-usage" "$tmp/out" "usage: hloc $cmd"
done
check unknown-command 2 "$hloc" frobnicate
check missing-args 2 "$hloc" verify
check unknown-option 2 "$hloc" print --colour "$zoo/softmax.before.txt"

check verify-text 0 "$hloc" verify "$zoo/softmax.before.txt"
check verify-proto 0 "$hloc" verify "$zoo/mlp_gelu.before.pb"
check print-proto 0 "$hloc" print "$zoo/mlp_gelu.before.pb"
expect_in print-has-entry "$tmp/out" "ENTRY"
cp "$tmp/out" "$tmp/printed.hlo"
check stats 0 "$hloc" stats "$zoo/attention.before.pb"
expect_in stats-counts-dot "$tmp/out" "dot"

# text -> proto -> text is a fixed point of the canonical printer.
check to-proto 0 "$hloc" convert "$tmp/printed.hlo" "$tmp/m.pb"
check from-proto 0 "$hloc" convert "$tmp/m.pb" "$tmp/m.hlo"
check print-again 0 "$hloc" print "$tmp/m.hlo"
if cmp -s "$tmp/out" "$tmp/printed.hlo"; then echo "ok   roundtrip-fixed-point"; else
  echo "FAIL roundtrip-fixed-point"; diff "$tmp/out" "$tmp/printed.hlo" | head -20; failures=$((failures+1)); fi

# run on a JAX snapshot reproduces XLA's recorded result; compare says so.
check run-snapshot 0 "$hloc" run "$zoo/mlp_gelu.snapshot.pb" --output="$tmp/mlp.pb"
expect_in run-summary "$tmp/out" "output f32\[8,16\]: min"
check compare-with-xla 0 "$hloc" compare "$zoo/mlp_gelu.snapshot.pb" "$tmp/mlp.pb"
expect_in compare-ok "$tmp/out" "^OK"
check compare-mismatch 1 "$hloc" compare "$zoo/mlp_gelu.snapshot.pb" "$zoo/softmax.snapshot.pb"
expect_in compare-says-shape "$tmp/out" "shape mismatch"
check run-seeded 0 "$hloc" run "$zoo/softmax.before.txt" --seed=7
cp "$tmp/out" "$tmp/seed7"
check run-seeded-again 0 "$hloc" run "$zoo/softmax.before.txt" --seed=7
if cmp -s "$tmp/out" "$tmp/seed7"; then echo "ok   run-deterministic"; else echo "FAIL run-deterministic"; failures=$((failures+1)); fi
check run-host 0 "$hloc" run "$zoo/transformer_block.snapshot.pb" --backend=host --output="$tmp/host.pb"
check compare-host-with-xla 0 "$hloc" compare "$zoo/transformer_block.snapshot.pb" "$tmp/host.pb"
check run-unknown-backend 1 "$hloc" run "$zoo/softmax.before.txt" --backend=tpu

# opt fuses; explain shows the ledger; the optimized module still verifies.
check opt-default 0 "$hloc" opt "$zoo/layer_norm.before.txt"
expect_in opt-outlines-layer-norm "$tmp/out" 'composite.name="hloc.layer_norm"'
check opt 0 "$hloc" opt "$zoo/layer_norm.before.txt" --pipeline=fusion
expect_in opt-fuses "$tmp/out" "fusion("
cp "$tmp/out" "$tmp/opt.hlo"
check opt-output-verifies 0 "$hloc" verify "$tmp/opt.hlo"
check explain 0 "$hloc" explain "$zoo/softmax.before.txt"
expect_in explain-has-rules "$tmp/out" "accepted"
check opt-unknown-pipeline 1 "$hloc" opt "$zoo/softmax.before.txt" --pipeline=nope
check opt-dump 0 "$hloc" opt "$zoo/softmax.before.txt" --dump-to="$tmp/dumps"
if ls "$tmp/dumps"/*.hlo >/dev/null 2>&1; then echo "ok   opt-dump-files"; else echo "FAIL opt-dump-files"; failures=$((failures+1)); fi

# graph draws fusion clusters; svg through Graphviz when it is installed.
check graph-dot 0 "$hloc" graph "$zoo/layer_norm.before.txt" --pipeline=fusion
expect_in graph-cluster "$tmp/out" "subgraph cluster_"
if command -v dot >/dev/null; then
  check graph-svg 0 "$hloc" graph "$zoo/layer_norm.before.txt" --format=svg --output="$tmp/g.svg"
  expect_in graph-svg-file "$tmp/g.svg" "<svg"
fi
check graph-bad-format 1 "$hloc" graph "$zoo/layer_norm.before.txt" --format=png

# Bad input: clear message, exit 1, no crash.
printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, q)\n}\n' >"$tmp/bad.hlo"
check bad-text 1 "$hloc" verify "$tmp/bad.hlo"
expect_in bad-text-location "$tmp/err" "bad.hlo:4:"
head -c 100 "$zoo/mlp_gelu.before.pb" >"$tmp/trunc.pb"
check truncated-proto 1 "$hloc" print "$tmp/trunc.pb"
check missing-file 1 "$hloc" stats "$tmp/does-not-exist.hlo"
printf 'HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT a = f32[3] negate(p)\n}\n' >"$tmp/shape.hlo"
check bad-shape 1 "$hloc" verify "$tmp/shape.hlo"
expect_in bad-shape-names-instruction "$tmp/err" "negate\|%a\| a"

# Only hloc speaks to the user: probing a snapshot's proto kind prints no
# protobuf log lines, and host kernels compile without LLVM remarks.
expect_quiet() {  # expect_quiet NAME: stderr of the last check is empty
  if [ -s "$tmp/err" ]; then echo "FAIL $1: stderr not empty"; head -5 "$tmp/err"; failures=$((failures+1));
  else echo "ok   $1"; fi
}
for snapshot in "$zoo"/*.snapshot.pb; do
  name=$(basename "$snapshot" .snapshot.pb)
  check "print-snapshot-$name" 0 "$hloc" print "$snapshot"
  expect_quiet "print-snapshot-$name-quiet"
done
check run-host-quiet 0 "$hloc" run "$zoo/layer_norm.before.txt" --backend=host
expect_quiet run-host-quiet-stderr

# Modules the verifier rejects reach no pass, emitter, interpreter or backend:
# every command that would use one refuses it (exit 1, the verifier's message).
testdata="$TEST_SRCDIR/$TEST_WORKSPACE/tools/testdata"
invalid=("$testdata/dot_result_shape.hlo" "$testdata/recursive_call.hlo" "$testdata/while_tuple_mismatch.hlo")
upcaster="${HLOC_CORPUS_DIR:-}/xla/xla_hlo_transforms_tests_operand_upcaster.hlo"
if [ -f "$upcaster" ]; then invalid+=("$upcaster"); else echo "skip operand_upcaster: no HLOC_CORPUS_DIR"; fi
for f in "${invalid[@]}"; do
  name=$(basename "$f" .hlo)
  check "verify-$name" 1 "$hloc" verify "$f"
  for backend in interpreter host cuda; do
    check "run-$backend-$name" 1 "$hloc" run "$f" --backend="$backend"
    expect_in "run-$backend-$name-says-why" "$tmp/err" "fails verification: computation"
  done
  for cmd in opt explain graph stats; do
    check "$cmd-$name" 1 "$hloc" "$cmd" "$f"
    expect_in "$cmd-$name-says-why" "$tmp/err" "fails verification"
  done
  for target in cuda host; do
    check "compile-$target-$name" 1 "$hloc" compile "$f" --target="$target" --emit=llvm
    expect_in "compile-$target-$name-says-why" "$tmp/err" "fails verification"
  done
done
"$hloc" convert "$testdata/while_tuple_mismatch.hlo" "$tmp/while.pb" >/dev/null 2>&1
check run-proto-while-tuple-mismatch 1 "$hloc" run "$tmp/while.pb" --backend=interpreter
expect_in run-proto-while-says-why "$tmp/err" "fails verification"

# --backend=cuda runs on a GPU, or fails with the reason (exit 1, no crash).
"$hloc" run "$zoo/mlp_gelu.snapshot.pb" --backend=cuda --output="$tmp/cuda.pb" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ "$rc" = 0 ]; then
  check compare-cuda-with-xla 0 "$hloc" compare "$zoo/mlp_gelu.snapshot.pb" "$tmp/cuda.pb"
elif [ "$rc" = 1 ] && grep -q "no usable GPU here" "$tmp/err"; then
  echo "ok   run-cuda-without-gpu: $(head -c 200 "$tmp/err")"
else
  echo "FAIL run-cuda: exit $rc"; cat "$tmp/out" "$tmp/err"; failures=$((failures+1))
fi

# compile: kernels as NVPTX IR / PTX / cubins and host IR / assembly, no GPU needed.
check compile-help 0 "$hloc" compile --help
expect_in compile-help-usage "$tmp/out" "usage: hloc compile"
check compile-llvm 0 "$hloc" compile "$zoo/softmax.before.txt" --target=cuda --emit=llvm
expect_in compile-llvm-nvptx "$tmp/out" 'target triple = "nvptx64-nvidia-cuda"'
expect_in compile-llvm-kernel "$tmp/out" '!"kernel", i32 1'
check compile-ptx-sm80 0 "$hloc" compile "$zoo/layer_norm.before.txt" --emit=ptx --sm=80 -o "$tmp/ln.ptx"
expect_in compile-ptx-target "$tmp/ln.ptx" ".target sm_80"
expect_in compile-ptx-entry "$tmp/ln.ptx" ".visible .entry hloc_"
expect_in compile-ptx-row-reduction "$tmp/ln.ptx" "row-reduction"
expect_in compile-ptx-summary "$tmp/out" "layer_norm.*: cuda sm_80: .* kernels .*interpreter ops: 0"
check compile-fusion-pipeline 0 "$hloc" compile "$zoo/softmax.before.txt" --pipeline=fusion --emit=ptx
expect_in compile-fused-kernel "$tmp/out" "shfl.sync.down.b32"
ptxas="${HLOC_PTXAS:-/usr/local/cuda/bin/ptxas}"
if [ -x "$ptxas" ]; then
  check compile-cubin 0 "$hloc" compile "$zoo/mlp_gelu.before.txt" --emit=cubin --sm=90 -o "$tmp/cubins"
  expect_in compile-cubin-index "$tmp/cubins/kernels.txt" "hloc_"
  if [ "$(head -c 4 "$(ls "$tmp"/cubins/*.cubin | head -1)" | od -An -c | tr -d ' ')" = '177ELF' ]; then
    echo "ok   compile-cubin-elf"; else echo "FAIL compile-cubin-elf"; failures=$((failures+1)); fi
else
  echo "skip compile-cubin: no ptxas at $ptxas"
fi
check compile-cubin-needs-dir 1 "$hloc" compile "$zoo/softmax.before.txt" --emit=cubin
check compile-host-llvm 0 "$hloc" compile "$zoo/layer_norm.before.txt" --target=host --emit=llvm
expect_in compile-host-ir "$tmp/out" "define void @kernel"
check compile-host-asm 0 "$hloc" compile "$zoo/layer_norm.before.txt" --target=host --emit=asm
expect_in compile-host-asm-ret "$tmp/out" "ret"
check compile-bad-target 1 "$hloc" compile "$zoo/softmax.before.txt" --target=tpu
check compile-bad-emit 1 "$hloc" compile "$zoo/softmax.before.txt" --target=host --emit=ptx
check compile-bad-sm 1 "$hloc" compile "$zoo/softmax.before.txt" --sm=75

# --devices: a JAX shard_map module, global arrays in and out, on the
# interpreter and on 4 host devices (the same global result), a device count
# that does not fit, and a partitioned module's per-device outputs.
sharded="$TEST_SRCDIR/$TEST_WORKSPACE/tests/jax_sharded/zoo"
check run-devices-interpreter 0 "$hloc" run "$sharded/tp_mlp.sdy.hlo" --devices=4 --backend=interpreter
expect_in run-devices-global "$tmp/out" "output f32\[16,8\]: min -5.8521 max 4.96684"
check run-devices-host 0 "$hloc" run "$sharded/tp_mlp.sdy.hlo" --devices=4 --backend=host
expect_in run-devices-host-global "$tmp/out" "output f32\[16,8\]: min -5.8521 max 4.96684"
check run-devices-wrong-count 1 "$hloc" run "$sharded/tp_mlp.sdy.hlo" --devices=2
expect_in run-devices-says-count "$tmp/err" "num_partitions=4"
check run-devices-partitioned 0 "$hloc" run "$sharded/ring_attention.partitioned.hlo" --devices=4 --backend=interpreter
expect_in run-devices-per-device "$tmp/out" "device 3:"
check run-distributed-unknown 1 "$hloc" run "$sharded/tp_mlp.sdy.hlo" --devices=4 --distributed=gloo
expect_in run-distributed-says-have "$tmp/err" "have: mpi"
# jax.jit over NamedSharding (sharding annotations only, global shapes):
# hloc's SPMD partitioner splits it for 4 devices, global arrays in and out;
# the global result equals JAX's (a snapshot of JAX's inputs and outputs) on
# the interpreter and on 4 host devices.
make_snapshot="$TEST_SRCDIR/$TEST_WORKSPACE/tests/jax_sharded/make_zoo_snapshot"
for model in spmd_tp_matmul spmd_mesh2x2_mlp; do
  check "spmd-snapshot-$model" 0 "$make_snapshot" "$model" "$tmp/$model.pb"
  for backend in interpreter host; do
    check "run-spmd-$model-$backend" 0 "$hloc" run "$tmp/$model.pb" --devices=4 \
      --backend="$backend" --output="$tmp/$model.$backend.pb"
    expect_in "run-spmd-$model-$backend-partitioned" "$tmp/err" "spmd-partition on 4 devices"
    check "compare-spmd-$model-$backend-with-jax" 0 "$hloc" compare "$tmp/$model.pb" \
      "$tmp/$model.$backend.pb"
    expect_in "compare-spmd-$model-$backend-ok" "$tmp/out" "^OK"
  done
done
check run-spmd-wrong-count 1 "$hloc" run "$tmp/spmd_tp_matmul.pb" --devices=3
expect_in run-spmd-wrong-count-says-why "$tmp/err" "4 tiles for 3 devices"
# XLA's own partitioned module of the same model (replica_groups=mesh[...]):
# per-device outputs.
check run-xla-partitioned-mesh-groups 0 "$hloc" run "$sharded/spmd_tp_matmul.partitioned.hlo" \
  --devices=4 --backend=host
expect_in run-xla-partitioned-per-device "$tmp/out" "device 3:"

# jax.jit with with_sharding_constraint and out_shardings for ONE device:
# its "Sharding" / "xla.sdy.FuncResultSharding" custom calls are identities
# there, on every backend.
for backend in interpreter host; do
  check "run-one-device-sharding-$backend" 0 "$hloc" run "$testdata/jax_one_device_sharding.hlo" \
    --backend="$backend"
  expect_in "run-one-device-sharding-$backend-output" "$tmp/out" "output{0} f32\[8,6\]: min"
done
# The same module through opt, explain and compile: their pipelines drop the
# annotations too (no custom call left for a kernel or a backend).
check opt-one-device-sharding 0 "$hloc" opt "$testdata/jax_one_device_sharding.hlo"
if grep -q 'custom_call_target="\(Sharding\|xla.sdy.FuncResultSharding\)"' "$tmp/out"; then
  echo "FAIL opt-one-device-sharding-removed"; cat "$tmp/out"; failures=$((failures+1))
else
  echo "ok   opt-one-device-sharding-removed"
fi
check explain-one-device-sharding 0 "$hloc" explain "$testdata/jax_one_device_sharding.hlo"
check compile-one-device-sharding-host 0 "$hloc" compile "$testdata/jax_one_device_sharding.hlo" \
  --target=host
check compile-one-device-sharding-ptx 0 "$hloc" compile "$testdata/jax_one_device_sharding.hlo"

# 4 MPI processes (tools/setup.sh installs Open MPI): rank 0 prints the same
# global output as the 4 host threads (MPI's reduction order may change the
# last bits, so the checksum is not compared).
if command -v mpirun >/dev/null; then
  check run-devices-mpi 0 mpirun --allow-run-as-root --oversubscribe -np 4 \
    "$hloc" run "$sharded/tp_mlp.sdy.hlo" --devices=4 --distributed=mpi
  expect_in run-devices-mpi-global "$tmp/out" "output f32\[16,8\]: min -5.8521 max 4.96684 mean -0.100012"
  if [ "$(grep -c '^output' "$tmp/out")" -ne 1 ]; then
    echo "FAIL run-devices-mpi-rank0-only: $(cat "$tmp/out")"; failures=$((failures + 1))
  fi
else
  echo "SKIPPED run-devices-mpi: mpirun not found (tools/setup.sh installs openmpi-bin)"
fi

# Resource limits: absurd sizes are errors before any huge allocation, an
# endless loop stops at --max-while-iterations, and memory that runs out below
# the limits (here ulimit -v) is an error, not std::bad_alloc.
for backend in interpreter host; do
  check "run-$backend-huge-temporary" 1 "$hloc" run "$testdata/resource_huge_temporary.hlo" --backend="$backend"
  expect_in "run-$backend-huge-temporary-says-why" "$tmp/err" "would take more than\|-byte arena, more than"
  check "run-$backend-huge-constant" 1 "$hloc" run "$testdata/resource_huge_constant.hlo" --backend="$backend"
  expect_in "run-$backend-huge-constant-says-why" "$tmp/err" "resource_huge_constant.hlo:3:.*f32\[1099511627776\]"
  check "run-$backend-endless-while" 1 timeout 120 "$hloc" run "$testdata/resource_endless_while.hlo" \
    --backend="$backend" --max-while-iterations=100000
  expect_in "run-$backend-endless-while-says-why" "$tmp/err" "%w.*more than 100000 iterations"
done
check run-bad-max-while-iterations 1 "$hloc" run "$testdata/resource_endless_while.hlo" --max-while-iterations=-1
if nm "$hloc" 2>/dev/null | grep -q __asan_init\|__tsan_init; then
  echo "SKIPPED run-interpreter-out-of-memory: a sanitizer's shadow memory needs more than ulimit -v allows"
else
  check run-interpreter-out-of-memory 1 bash -c "ulimit -v 3000000 && exec \"\$0\" run \"\$1\" --backend=interpreter" \
    "$hloc" "$testdata/resource_big_temporary.hlo"
  expect_in run-interpreter-out-of-memory-says-why "$tmp/err" "out of memory"
fi

# --profile: a table of every thunk (the scan's loop body under its loop),
# categories, the untimed comparison; JSON that parses with shares summing to
# 1; no profile off the host backend; a perf map naming the JIT kernels.
export HLOC_MACHINE_PEAK=10,100  # No calibration here.
check run-profile 0 "$hloc" run "$zoo/cumsum_scan.snapshot.pb" --backend=host --profile --repeats=3
expect_in run-profile-header "$tmp/out" "host backend, 3 runs"
expect_in run-profile-loop "$tmp/out" " loop .*%while"
expect_in run-profile-body "$tmp/out" "kernel .*\[%while[.0-9]* body\]"
expect_in run-profile-categories "$tmp/out" "^by category:"
expect_in run-profile-runtime "$tmp/out" "^  runtime "
expect_in run-profile-untimed "$tmp/out" "^untimed runs: median"
expect_in run-profile-summary-on-stderr "$tmp/err" "^output"
check run-profile-json 0 "$hloc" run "$zoo/attention.snapshot.pb" --backend=host --profile-json="$tmp/p.json" --repeats=2
if python3 - "$tmp/p.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["runs"] == 2, p["runs"]
cats = {c["category"] for c in p["categories"]}
assert {"kernel", "library", "runtime"} <= cats, cats
share = sum(c["share"] for c in p["categories"])
assert abs(share - 1) < 1e-6, share
lib = [e for e in p["entries"] if e["category"] == "library"]
assert lib and all(e["flops"] > 0 and e["bytes"] > 0 for e in lib), lib
PY
then echo "ok   run-profile-json-valid"; else echo "FAIL run-profile-json-valid"; cat "$tmp/p.json"; failures=$((failures+1)); fi
check run-profile-interpreter 1 "$hloc" run "$zoo/softmax.before.txt" --backend=interpreter --profile
expect_in run-profile-interpreter-says "$tmp/err" "covers --backend=host"
check run-profile-bad-repeats 1 "$hloc" run "$zoo/softmax.before.txt" --backend=host --profile --repeats=0
sh -c 'echo $$ >"$1"; exec "$2" run "$3" --backend=host --perf-map' sh "$tmp/pid" "$hloc" \
  "$zoo/attention.snapshot.pb" >"$tmp/out" 2>"$tmp/err"
map="/tmp/perf-$(cat "$tmp/pid").map"
expect_in run-perf-map-names-kernels "$map" "^[0-9a-f]* [0-9a-f]* hloc:%fusion"
rm -f "$map"

# A bounded dynamic entry parameter (issue 14): arguments of any size up to
# the bound, from a snapshot; the host gives the interpreter's answer, and an
# argument past the bound is an error naming parameter, size and bound.
cat >"$tmp/dyn.hlo" <<'HLO'
HloModule dyn
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[<=8] parameter(0)
  e = f32[<=8] exponential(p)
  z = f32[] constant(0)
  s = f32[] reduce(e, z), dimensions={0}, to_apply=add
  r = f32[1,<=8] reshape(p)
  ROOT out = (f32[], f32[1,<=8]) tuple(s, r)
}
HLO
for n in 3 9; do
  printf 'HloModule a\nENTRY e {\n  ROOT p = f32[%d] parameter(0)\n}\n' "$n" >"$tmp/arg$n.hlo"
  check "run-dynamic-args-$n" 0 "$hloc" run "$tmp/arg$n.hlo" --backend=interpreter --output="$tmp/arg$n.pb"
done
check run-dynamic-interpreter 0 "$hloc" run "$tmp/dyn.hlo" --backend=interpreter --inputs="$tmp/arg3.pb"
cp "$tmp/out" "$tmp/dyn_interpreter.txt"
expect_in run-dynamic-interpreter-size "$tmp/out" "f32\[1,3\]"
check run-dynamic-host 0 "$hloc" run "$tmp/dyn.hlo" --backend=host --inputs="$tmp/arg3.pb"
if cmp -s "$tmp/out" "$tmp/dyn_interpreter.txt"; then echo "ok   run-dynamic-host-matches"
else echo "FAIL run-dynamic-host-matches"; cat "$tmp/out" "$tmp/dyn_interpreter.txt"; failures=$((failures+1)); fi
check run-dynamic-host-past-bound 1 "$hloc" run "$tmp/dyn.hlo" --backend=host --inputs="$tmp/arg9.pb"
expect_in run-dynamic-host-past-bound-says "$tmp/err" "parameter %p) dimension 0 has size 9, above its bound 8"

# The same with a tuple parameter holding the dynamic array.
cat >"$tmp/dyn_tuple.hlo" <<'HLO'
HloModule dyn_tuple
ENTRY main {
  p = (f32[<=8], s32[]) parameter(0)
  x = f32[<=8] get-tuple-element(p), index=0
  k = s32[] get-tuple-element(p), index=1
  kf = f32[] convert(k)
  b = f32[<=8] broadcast(kf), dimensions={}
  ROOT y = f32[<=8] add(x, b)
}
HLO
for n in 3 9; do
  printf 'HloModule a\nENTRY e {\n  ROOT p = (f32[%d], s32[]) parameter(0)\n}\n' "$n" >"$tmp/targ$n.hlo"
  check "run-dynamic-tuple-args-$n" 0 "$hloc" run "$tmp/targ$n.hlo" --backend=interpreter --output="$tmp/targ$n.pb"
done
check run-dynamic-tuple-interpreter 0 "$hloc" run "$tmp/dyn_tuple.hlo" --backend=interpreter --inputs="$tmp/targ3.pb"
cp "$tmp/out" "$tmp/dyn_tuple_interpreter.txt"
expect_in run-dynamic-tuple-interpreter-size "$tmp/out" "f32\[3\]"
check run-dynamic-tuple-host 0 "$hloc" run "$tmp/dyn_tuple.hlo" --backend=host --inputs="$tmp/targ3.pb"
if cmp -s "$tmp/out" "$tmp/dyn_tuple_interpreter.txt"; then echo "ok   run-dynamic-tuple-host-matches"
else echo "FAIL run-dynamic-tuple-host-matches"; cat "$tmp/out" "$tmp/dyn_tuple_interpreter.txt"; failures=$((failures+1)); fi
check run-dynamic-tuple-host-past-bound 1 "$hloc" run "$tmp/dyn_tuple.hlo" --backend=host --inputs="$tmp/targ9.pb"
expect_in run-dynamic-tuple-host-past-bound-says "$tmp/err" "parameter %p) tuple element 0 dimension 0 has size 9, above its bound 8"
check run-dynamic-tuple-interpreter-past-bound 1 "$hloc" run "$tmp/dyn_tuple.hlo" --backend=interpreter --inputs="$tmp/targ9.pb"
expect_in run-dynamic-tuple-interpreter-past-bound-says "$tmp/err" "parameter %p has shape .*: tuple element 0 dimension 0 has size 9, above its bound 8"

# Custom-call targets served by a shared library's C functions (hloc_c.h).
lib="$TEST_SRCDIR/$TEST_WORKSPACE/tools/testdata/libcli_custom_calls.so"
cc="$TEST_SRCDIR/$TEST_WORKSPACE/tools/testdata/custom_call.hlo"
for backend in host interpreter; do
  check "custom-call-library-$backend" 0 "$hloc" run "$cc" --backend=$backend --print \
    --custom-call-library="$lib" --custom-calls=my.scale_by_two=cli_scale_by_two
  expect_in "custom-call-library-$backend-result" "$tmp/out" "f32\[4\] {3, 5, 7, 9}"
done
check custom-call-function-error 1 "$hloc" run "$cc" --backend=host \
  --custom-call-library="$lib" --custom-calls=my.scale_by_two=cli_always_fails
expect_in custom-call-function-error-says "$tmp/err" 'custom-call %twice (target "my.scale_by_two"): cli_always_fails refuses every call'
check custom-call-missing-symbol 1 "$hloc" run "$cc" --backend=host \
  --custom-call-library="$lib" --custom-calls=my.scale_by_two=nope
expect_in custom-call-missing-symbol-says "$tmp/err" "has no symbol 'nope' for target 'my.scale_by_two'"
check custom-call-missing-library 1 "$hloc" run "$cc" --backend=host \
  --custom-call-library="$tmp/nonexistent.so" --custom-calls=my.scale_by_two
expect_in custom-call-missing-library-says "$tmp/err" "cannot load $tmp/nonexistent.so"
check custom-call-library-alone 1 "$hloc" run "$cc" --backend=host --custom-call-library="$lib"
expect_in custom-call-library-alone-says "$tmp/err" "go together"
check custom-call-unregistered 1 "$hloc" run "$cc" --backend=host
expect_in custom-call-unregistered-says "$tmp/err" 'custom-call target "my.scale_by_two" is not built into hloc'
check custom-call-devices 1 "$hloc" run "$cc" --backend=host --devices=2 \
  --custom-call-library="$lib" --custom-calls=my.scale_by_two=cli_scale_by_two
expect_in custom-call-devices-says "$tmp/err" "runs one device"

echo "cli checks: $failures failed"
[ "$failures" -eq 0 ]
