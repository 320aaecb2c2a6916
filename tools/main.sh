#!/usr/bin/env bash
# The main job, set-up included: install what is missing, build the hloc CLI
# optimized, and take every JAX zoo model through it: load the HloModuleProto
# JAX dumped, verify, print canonical text, round-trip text <-> proto, optimize
# (library outlining + fusion), and evaluate on the recorded arguments,
# comparing with XLA:CPU's recorded result; then every zoo model's JAX function
# through hloc.jax.jit against jax.jit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bash tools/setup.sh
bazel build -c opt //tools:hloc
hloc="$(bazel info -c opt bazel-bin)/tools/hloc"
out="${HLOC_OUT:-$(mktemp -d)}"
printf '%-20s %-12s %-10s %s\n' model instructions calls+fusions "vs XLA:CPU"
for pb in tests/jax/zoo/*.before.pb; do
  model=$(basename "$pb" .before.pb)
  "$hloc" verify "$pb" >/dev/null
  "$hloc" print "$pb" >"$out/$model.hlo"
  "$hloc" convert "$out/$model.hlo" "$out/$model.pb"
  "$hloc" print "$out/$model.pb" | cmp -s - "$out/$model.hlo"
  "$hloc" opt "$pb" >"$out/$model.opt.hlo"
  "$hloc" verify "$out/$model.opt.hlo" >/dev/null
  kernels=$(grep -cE '^  (ROOT )?%[^ ]+ = .* (fusion|call)\(' "$out/$model.opt.hlo" || true)
  instructions=$("$hloc" stats "$pb" | awk '/instructions:/ {print $2; exit}')
  summary=$("$hloc" run "tests/jax/zoo/$model.snapshot.pb" --output="$out/$model.result.pb")
  # bf16 results: library gemms add the bias before the one rounding to bf16
  # where XLA rounds twice (numerics contract "reformulation"), so a bf16
  # element may differ by about one ulp of the values around it: the same
  # tolerance as //backend/host:onednn_zoo_test.
  tolerance=()
  if grep -q ' bf16\[' <<<"$summary"; then tolerance=(--rtol=2e-2 --atol=2e-2); fi
  verdict=$("$hloc" compare "tests/jax/zoo/$model.snapshot.pb" "$out/$model.result.pb" \
            ${tolerance[@]+"${tolerance[@]}"} | cut -c1-60)
  if ((${#tolerance[@]})); then verdict="$verdict (bf16 tolerance 2e-2)"; fi
  printf '%-20s %-12s %-10s %s\n' "$model" "$instructions" "$kernels" "$verdict"
done
echo "main: outputs in $out"

# The same zoo through the embedding API: each model's JAX function run by
# hloc.jax.jit next to jax.jit on the same inputs.
bazel build -c opt //python:hloc
PYTHONPATH="$(bazel info -c opt bazel-bin)/python:$here/tests/jax" JAX_PLATFORMS=cpu \
  python3 python/zoo_through_jit.py
