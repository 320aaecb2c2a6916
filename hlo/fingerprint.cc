// Two 64-bit lanes with different seeds, each mixing one 8-byte word at a
// time and finished with a full avalanche (the finalizer of MurmurHash3's
// 64-bit variant: its constants are published facts).
#include "hlo/fingerprint.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hloc {
namespace {

uint64_t Avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

uint64_t Rotate(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

}  // namespace

std::string Fingerprint128(absl::string_view data) {
  uint64_t a = 0x9e3779b97f4a7c15ULL ^ data.size();
  uint64_t b = 0x6a09e667f3bcc909ULL + data.size();
  size_t i = 0;
  for (; i + 8 <= data.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, data.data() + i, 8);
    a = Rotate((a ^ word) * 0x87c37b91114253d5ULL, 31) * 0x4cf5ad432745937fULL;
    b = Rotate((b + word) * 0x4cf5ad432745937fULL, 27) ^ a;
  }
  uint64_t tail = 0;
  if (i < data.size()) std::memcpy(&tail, data.data() + i, data.size() - i);
  a = Avalanche(a ^ tail ^ (b << 1));
  b = Avalanche(b + tail + Rotate(a, 17));
  return absl::StrFormat("%016x%016x", a, b);
}

FingerprintBuilder& FingerprintBuilder::Add(absl::string_view piece) {
  absl::StrAppend(&data_, piece.size(), ":", piece, ";");
  return *this;
}

FingerprintBuilder& FingerprintBuilder::Add(int64_t value) {
  absl::StrAppend(&data_, "#", value, ";");
  return *this;
}

}  // namespace hloc
