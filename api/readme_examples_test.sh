#!/usr/bin/env bash
# Runs the README's embedding examples exactly as written: the first three
# python blocks (one device; several devices; a custom call) and the first c
# code block of the section "Embedding hloc".
set -euo pipefail
python=$1 readme=$2 lib=$3
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
work="${TEST_TMPDIR:-$(mktemp -d)}"
section=$(awk '/^## Embedding hloc/{on=1; next} on && /^## /{exit} on' "$readme")
# block LANG [N]: the Nth (default first) code block in LANG.
block() {
  awk -v lang="$1" -v want="${2:-1}" '$0 == "```" lang {n++; on = (n == want); next}
    on && /^```$/ {exit} on' <<<"$section"
}
block python >"$work/example.py"
block python 2 >"$work/devices.py"
block python 3 >"$work/custom.py"
block c >"$work/example.c"
[ -s "$work/example.py" ] && [ -s "$work/devices.py" ] && [ -s "$work/custom.py" ] &&
  [ -s "$work/example.c" ] ||
  { echo "FAILED: README examples not found"; exit 1; }

out=$(cd "$root" && PYTHONPATH="$root/python" JAX_PLATFORMS=cpu "$python" "$work/example.py")
echo "$out"
grep -q "dtype=float32)]" <<<"$out" || { echo "FAILED: python example output"; exit 1; }

out=$(cd "$root" && PYTHONPATH="$root/python" JAX_PLATFORMS=cpu "$python" "$work/devices.py")
echo "$out"
expected=$'[2240. 2472. 2720. 2984.]\n4\n[12. 16.] (4, 2)'
[ "$out" = "$expected" ] || { echo "FAILED: python devices example printed '$out'"; exit 1; }

out=$(cd "$root" && PYTHONPATH="$root/python" JAX_PLATFORMS=cpu "$python" "$work/custom.py")
echo "$out"
expected='[-1.5 -1.   0.   1. ] 3.0'
[ "$out" = "$expected" ] || { echo "FAILED: python custom-call example printed '$out'"; exit 1; }

libdir=$(cd "$(dirname "$lib")" && pwd)
gcc -std=c11 -Wall -Werror -I"$root" "$work/example.c" "$libdir/$(basename "$lib")" \
    -Wl,-rpath,"$libdir" -o "$work/example"
out=$("$work/example")
echo "$out"
[ "$out" = "11 22 33" ] || { echo "FAILED: C example printed '$out'"; exit 1; }
echo "ok: the four README examples run as written"
