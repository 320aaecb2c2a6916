#!/usr/bin/env bash
# The main job, set-up included: install what is missing, build the hloc CLI
# optimized, and take every JAX zoo model through it (load the HloModuleProto
# JAX dumped, verify, print canonical text, convert text <-> proto, stats).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
bash tools/setup.sh
bazel build -c opt //tools:hloc
hloc="$here/bazel-bin/tools/hloc"
out="${HLOC_OUT:-$(mktemp -d)}"
for pb in tests/jax/zoo/*.before.pb; do
  model=$(basename "$pb" .before.pb)
  "$hloc" verify "$pb" >/dev/null
  "$hloc" print "$pb" >"$out/$model.hlo"
  "$hloc" convert "$out/$model.hlo" "$out/$model.pb"
  "$hloc" print "$out/$model.pb" | cmp -s - "$out/$model.hlo"
  instructions=$("$hloc" stats "$pb" | awk '/instructions:/ {print $2}')
  printf '%-20s verified, printed, round-tripped (%s instructions)\n' "$model" "$instructions"
done
echo "main: outputs in $out"
