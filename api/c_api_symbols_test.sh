#!/usr/bin/env bash
# libhloc_c.so defines and exports hloc_ symbols only: none of hloc's C++
# code, nor LLVM's, Abseil's or protobuf's, can clash with another copy in
# the process that loads it.
set -euo pipefail
lib=$1
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
count=$(grep -c '^hloc_' <<<"$exported" || true)
others=$(grep -v '^hloc_' <<<"$exported" || true)
if [ -n "$others" ]; then
  echo "FAILED: $lib exports symbols outside the C API:"
  head -20 <<<"$others"
  exit 1
fi
for symbol in hloc_client_create hloc_compile hloc_execute hloc_error_message hloc_buffer_wrap_host \
    hloc_client_register_custom_call hloc_error_create; do
  grep -qx "$symbol" <<<"$exported" || { echo "FAILED: $symbol is not exported"; exit 1; }
done
echo "ok: $count hloc_ symbols exported, nothing else"
