// A stable 128-bit fingerprint of bytes, as 32 hex digits: the same input
// gives the same digits in every process, build and run, so it can name
// entries of caches kept on disk (compiled kernels, executables). Not a
// cryptographic hash: it guards against accidents, not adversaries.
#ifndef HLOC_HLO_FINGERPRINT_H_
#define HLOC_HLO_FINGERPRINT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace hloc {

std::string Fingerprint128(absl::string_view data);

// Accumulates several pieces into one fingerprint; each piece is
// length-prefixed, so ("ab", "c") and ("a", "bc") differ.
class FingerprintBuilder {
 public:
  FingerprintBuilder& Add(absl::string_view piece);
  FingerprintBuilder& Add(int64_t value);
  std::string Finish() const { return Fingerprint128(data_); }

 private:
  std::string data_;
};

}  // namespace hloc

#endif  // HLOC_HLO_FINGERPRINT_H_
