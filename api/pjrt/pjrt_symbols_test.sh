#!/usr/bin/env bash
# libhloc_pjrt.so defines and exports GetPjrtApi and nothing else, so none of
# hloc's code (nor LLVM's, Abseil's or protobuf's) can clash with the copies
# inside the framework that loads it (torch_xla links its own XLA).
set -euo pipefail
lib=$1
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
if [ "$exported" != "GetPjrtApi" ]; then
  echo "FAILED: $lib should export GetPjrtApi only, exports:"
  head -20 <<<"$exported"
  exit 1
fi
echo "ok: GetPjrtApi is the only exported symbol"
