#!/usr/bin/env bash
# Regenerates tests/random/xla_refs: random modules (seeds 1..COUNT of the
# generator, random_module.h) with XLA:CPU's results through jaxlib, for
# random_xla_refs_test. Needs what tests/xla_refs/make_refs.py needs (jax
# from tests/jax/requirements.txt, protoc).
#
#   bash tests/random/make_xla_refs.sh [COUNT]      # default 150
set -euo pipefail
cd "$(dirname "$0")/../.."
count=${1:-150}
bazel build //tests/random:dump_random_modules
dir=$(mktemp -d /tmp/random_modules.XXXXXX)
trap 'rm -rf "$dir"' EXIT
"$(bazel info bazel-bin)/tests/random/dump_random_modules" "$dir" 1 "$count"
rm -f tests/random/xla_refs/*.snapshot.pb tests/random/xla_refs/MANIFEST.tsv
python3 tests/xla_refs/make_refs.py --hlo-dir "$dir" --out tests/random/xla_refs
