// hloc's fuzz targets: what one libFuzzer input goes through. Each returns 0
// for an input worth keeping and -1 for one libFuzzer should not add to its
// corpus (too large to be useful); a broken property is a crash (FuzzFailure
// prints what and aborts), as is anything the sanitizers catch.
//
// The properties, beyond "no crash, no leak, no sanitizer report":
//   - every rejection (parser, proto reader, verifier, pipeline, interpreter,
//     host backend) is a Status with a non-empty message;
//   - a module the verifier accepts prints as text that parses and verifies
//     again, and converts to an HloModuleProto that loads and verifies again
//     (when its constants are small: see fuzz_common.cc).
//
// The targets are libraries so that one test (fuzz_regression_test) can run
// every saved input through every target with the ordinary toolchain; the
// fuzzer binaries (*_fuzzer.cc) are one-line LLVMFuzzerTestOneInput wrappers.
#ifndef HLOC_TESTS_FUZZ_FUZZ_TARGETS_H_
#define HLOC_TESTS_FUZZ_FUZZ_TARGETS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "hlo/module.h"

namespace hloc::fuzz {

// HLO text (possibly several modules split by "// -----"): parse, verify,
// print and parse again, convert to a proto and load again.
int FuzzHloText(const uint8_t* data, size_t size);

// Serialized HloModuleProto / HloProto / HloSnapshot bytes: the fast reader
// and the generated messages, then verify and round trip as above.
int FuzzHloProto(const uint8_t* data, size_t size);

// HLO text of one small module: parse, verify, then (when it is small enough
// to run quickly) evaluate on the interpreter, optimize with the host
// pipeline, evaluate the optimized module and compile and run it on the host
// backend.
int FuzzPipeline(const uint8_t* data, size_t size);

// ---- shared by the targets

// The text targets' ParseOptions::max_constant_bytes: an elided constant
// ("{...}") above it is a parse error, not an allocation past libFuzzer's
// -malloc_limit_mb.
inline constexpr int64_t kMaxConstantBytes = int64_t{64} << 20;

// Prints `what` (and `detail`) to stderr and aborts: a property is broken.
[[noreturn]] void FuzzFailure(const std::string& what, const std::string& detail = "");

// A rejection must say why.
void RequireMessage(const absl::Status& status, const char* stage);

// The round trips a verified module must survive (see the header comment).
void CheckVerifiedRoundTrips(const HloModule& module);

// The fuzz CI test's proof that a crash fails it: with HLOC_FUZZ_SELF_TEST=1
// in the environment, an input starting with "hloc-fuzz-self-test" reads past
// the end of a heap buffer (ASan reports it, libFuzzer saves the input, the
// test sees the failure). Does nothing otherwise.
void MaybeInjectedBug(const uint8_t* data, size_t size);

}  // namespace hloc::fuzz

#endif  // HLOC_TESTS_FUZZ_FUZZ_TARGETS_H_
