// libFuzzer entry for FuzzHloProto (fuzz_targets.h); built with --config=fuzz.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return hloc::fuzz::FuzzHloProto(data, size);
}
