#!/usr/bin/env bash
# The sharded zoo on 4 MPI processes (Open MPI, one host device per rank):
# every model's per-device outputs match JAX's. SKIPPED only when mpirun is
# absent (tools/setup.sh installs Debian's Open MPI).
set -uo pipefail
if ! command -v mpirun >/dev/null; then
  echo "SKIPPED: mpirun not found (tools/setup.sh installs openmpi-bin and libopenmpi-dev)"
  exit 0
fi
main="${TEST_SRCDIR}/${TEST_WORKSPACE}/tests/jax_sharded/sharded_zoo_mpi_main"
status=0
for model in dp_train_step tp_mlp ring_attention moe_all_to_all pmap_step; do
  out="$(mpirun --allow-run-as-root --oversubscribe -np 4 -x TEST_SRCDIR -x TEST_WORKSPACE \
         "$main" "$model" 2>&1)"
  rc=$?
  echo "$out"
  if [ $rc -ne 0 ] || ! grep -q "^$model: matches JAX on 4 MPI ranks" <<<"$out"; then
    echo "FAIL: $model (exit $rc)"
    status=1
  fi
done
exit $status
