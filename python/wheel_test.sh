#!/usr/bin/env bash
# Installs the wheel that //python:wheel builds with pip (offline, into a
# temporary directory, no dependencies fetched) and runs a module through the
# installed package, from outside the source tree.
set -euo pipefail
python=$1
wheel_dir=$2
wheels=("$wheel_dir"/hloc-*.whl)
[ "${#wheels[@]}" -eq 1 ] && [ -f "${wheels[0]}" ] || { echo "expected one wheel in $wheel_dir"; exit 1; }
site="${TEST_TMPDIR:-$(mktemp -d)}/site"
"$python" -m pip install --quiet --no-index --no-deps --target "$site" "${wheels[0]}"
[ -f "$site/hloc/_hloc.so" ] || { echo "the wheel did not install hloc/_hloc.so"; exit 1; }
ls -d "$site"/hloc-*.dist-info >/dev/null
cd "$TEST_TMPDIR"
PYTHONPATH="$site" JAX_PLATFORMS=cpu "$python" - <<'PY'
import numpy as np
import hloc
assert hloc.__file__.startswith(__import__("os").environ["PYTHONPATH"]), hloc.__file__
exe = hloc.compile("""
HloModule add
ENTRY main {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  ROOT s = f32[3] add(x, y)
}""", backend="host")
(out,) = exe(np.ones(3, np.float32), np.arange(3, dtype=np.float32))
np.testing.assert_array_equal(out, [1, 2, 3])
print("installed wheel runs:", hloc.__version__, out)
PY
