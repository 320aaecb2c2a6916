#!/usr/bin/env bash
# mpi_collectives_main on 3 MPI processes (f16/bf16 reductions and
# ragged-all-to-all over MpiCommunicator). SKIPPED only when mpirun is absent
# (tools/setup.sh installs Debian's Open MPI).
set -uo pipefail
if ! command -v mpirun >/dev/null; then
  echo "SKIPPED: mpirun not found (tools/setup.sh installs openmpi-bin and libopenmpi-dev)"
  exit 0
fi
main="${TEST_SRCDIR}/${TEST_WORKSPACE}/runtime/mpi/mpi_collectives_main"
out="$(timeout 120 mpirun --allow-run-as-root --oversubscribe -np 3 "$main" 2>&1)"
rc=$?
echo "$out"
if [ $rc -ne 0 ] || [ "$(grep -c ': ok$' <<<"$out")" -ne 3 ]; then
  echo "FAIL (exit $rc)"
  exit 1
fi
