#!/usr/bin/env bash
# Installs everything hloc needs on a fresh machine of this image (Debian 12):
# Bazel 4, Abseil, protobuf, LLVM 19, GoogleTest/Mock, Google Benchmark, oneDNN
# from Debian, and the pinned Python packages (jax, numpy, protobuf) from PyPI.
# Idempotent: packages already present are skipped.
set -euo pipefail

debs=(bazel-bootstrap bazel-platforms libabsl-dev libprotobuf-dev protobuf-compiler
      llvm-19-dev libgtest-dev libgmock-dev libbenchmark-dev graphviz
      libdnnl-dev libzstd-dev  # libzstd-dev: static LLVM link (tools/build_standalone.sh)
      libgoogle-perftools-dev)  # tcmalloc for hloc's binaries, shared and static
missing=()
for pkg in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${missing[@]}"
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req="$here/tests/jax/requirements.txt"
if ! python3 - "$req" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
for line in open(sys.argv[1]):
    line = line.split('#')[0].strip()
    if not line:
        continue
    name, want = line.split('==')
    if version(name) != want:
        sys.exit(1)
PY
  echo "setup: installing Python packages from $req"
  python3 -m pip install -q -r "$req"
fi
echo "setup: done"
