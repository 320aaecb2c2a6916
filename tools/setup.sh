#!/usr/bin/env bash
# Installs everything hloc needs on a fresh machine of this image (Debian 12):
# Bazel 4, Abseil, protobuf, LLVM 19, GoogleTest/Mock, Google Benchmark, oneDNN, Open MPI,
# OpenBLAS from Debian, and the pinned Python packages (jax, numpy, protobuf) from PyPI.
# Idempotent: packages already present are skipped.
set -euo pipefail

debs=(bazel-bootstrap bazel-platforms libabsl-dev libprotobuf-dev protobuf-compiler
      llvm-19-dev libgtest-dev libgmock-dev libbenchmark-dev graphviz
      libdnnl-dev libzstd-dev  # libzstd-dev: static LLVM link (tools/build_standalone.sh)
      libgoogle-perftools-dev  # tcmalloc for hloc's binaries, shared and static
      clang-19 libclang-rt-19-dev libfuzzer-19-dev  # tests/fuzz: libFuzzer, ASan/UBSan (--config=fuzz)
      libomp-19-dev  # omp.h for clang (oneDNN's OpenMP calls; the program still links GCC's libgomp)
      libopenmpi-dev openmpi-bin  # MPI communicator (runtime/mpi), mpirun for its tests
      libopenblas0-pthread)  # optimized LAPACK/BLAS behind liblapack.so.3 (JAX's lapack_*_ffi calls)
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
# hloc's PJRT plugin (api/pjrt): the PJRT C API header, extracted from PyPI's
# tensorflow-cpu wheel (only the header is kept; not committed), and a virtual
# environment with torch and torch_xla for the PyTorch tests (~6.5 GB).
pjrt_include="${HLOC_PJRT_HEADER_DIR:-$HOME/.cache/hloc-pjrt/include}"
if [ ! -f "$pjrt_include/xla/pjrt/c/pjrt_c_api.h" ]; then
  echo "setup: extracting the PJRT C API header from tensorflow-cpu 2.21.0"
  wheel_dir="$(mktemp -d)"
  python3 -m pip download -q --no-deps -d "$wheel_dir" tensorflow-cpu==2.21.0
  python3 - "$wheel_dir" "$pjrt_include" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "tensorflow_cpu-*.whl"))[0]
member = "tensorflow/include/xla/pjrt/c/pjrt_c_api.h"
target = os.path.join(sys.argv[2], "xla/pjrt/c/pjrt_c_api.h")
os.makedirs(os.path.dirname(target), exist_ok=True)
with zipfile.ZipFile(wheel) as z, open(target, "wb") as out:
    out.write(z.read(member))
PY
  rm -rf "$wheel_dir"
fi
torch_venv="${HLOC_TORCH_VENV:-$HOME/.cache/hloc-torch-venv}"
if ! "$torch_venv/bin/python" -c 'import torch_xla, wheel' 2>/dev/null; then
  echo "setup: installing torch 2.9.0 and torch-xla 2.9.0 into $torch_venv"
  python3 -m venv "$torch_venv"
  "$torch_venv/bin/python" -m pip install -q torch==2.9.0 torch-xla==2.9.0 wheel
fi
echo "setup: done"
