// Checks shared by the fuzz targets (fuzz_targets.h).
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/proto_io.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "tests/fuzz/fuzz_targets.h"

namespace hloc::fuzz {

void FuzzFailure(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "hloc fuzz: property broken: %s\n%s\n", what.c_str(), detail.c_str());
  std::fflush(stderr);
  std::abort();
}

void RequireMessage(const absl::Status& status, const char* stage) {
  if (!status.ok() && status.message().empty()) {
    FuzzFailure(std::string(stage) + " rejected the input with an empty message",
                status.ToString());
  }
}

// Above this many bytes of constants a round trip only measures how fast
// big literals copy (an elided "{...}" constant of a few bytes of text can
// be megabytes), and the fuzzer's per-input timeout would fire.
constexpr int64_t kMaxRoundTripLiteralBytes = 256 << 10;

void CheckVerifiedRoundTrips(const HloModule& module) {
  int64_t literal_bytes = 0;
  for (const HloComputation* computation : module.computations()) {
    for (const HloInstruction* instruction : computation->instructions()) {
      if (instruction->opcode() == HloOpcode::kConstant) {
        literal_bytes += instruction->literal().size_bytes();
      }
    }
  }
  if (literal_bytes > kMaxRoundTripLiteralBytes) return;
  const std::string printed = PrintModule(module);
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseHloModule(printed);
  if (!reparsed.ok()) {
    FuzzFailure("a verified module's printed text does not parse: " + reparsed.status().ToString(),
                printed);
  }
  absl::Status reverified = VerifyModule(**reparsed);
  if (!reverified.ok()) {
    FuzzFailure("a verified module's printed text does not verify: " + reverified.ToString(),
                printed);
  }
  absl::StatusOr<xla::HloModuleProto> proto = ModuleToProto(module);
  if (!proto.ok()) {
    FuzzFailure("a verified module does not convert to a proto: " + proto.status().ToString(),
                printed);
  }
  absl::StatusOr<std::unique_ptr<HloModule>> loaded = ModuleFromProto(*proto);
  if (!loaded.ok()) {
    FuzzFailure("a verified module's proto does not load: " + loaded.status().ToString(),
                printed);
  }
  absl::Status proto_verified = VerifyModule(**loaded);
  if (!proto_verified.ok()) {
    FuzzFailure("a verified module's proto does not verify: " + proto_verified.ToString(),
                printed);
  }
}

void MaybeInjectedBug(const uint8_t* data, size_t size) {
  static const bool enabled = [] {
    const char* value = std::getenv("HLOC_FUZZ_SELF_TEST");
    return value != nullptr && std::string(value) == "1";
  }();
  static constexpr char kMarker[] = "hloc-fuzz-self-test";
  if (!enabled || size < sizeof(kMarker) - 1 ||
      std::string(reinterpret_cast<const char*>(data), sizeof(kMarker) - 1) != kMarker) {
    return;
  }
  std::vector<char> buffer(size);
  volatile char past_the_end = buffer.data()[size + 8];
  (void)past_the_end;
}

}  // namespace hloc::fuzz
