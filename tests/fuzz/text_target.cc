// Fuzz target: HLO text -> parser -> verifier -> round trips.
#include <memory>
#include <vector>

#include "absl/strings/string_view.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"
#include "tests/fuzz/fuzz_targets.h"

namespace hloc::fuzz {

// Longer texts only slow the fuzzer down; the corpus seeds are below this.
constexpr size_t kMaxTextBytes = 64 << 10;

int FuzzHloText(const uint8_t* data, size_t size) {
  if (size > kMaxTextBytes) return -1;
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  ParseOptions options;
  options.filename = "fuzz.hlo";
  options.max_constant_bytes = kMaxConstantBytes;
  for (absl::StatusOr<std::unique_ptr<HloModule>>& parsed : ParseEachHloModule(text, options)) {
    if (!parsed.ok()) {
      RequireMessage(parsed.status(), "parser");
      continue;
    }
    absl::Status verified = VerifyModule(**parsed);
    if (!verified.ok()) {
      RequireMessage(verified, "verifier");
      continue;
    }
    CheckVerifiedRoundTrips(**parsed);
  }
  return 0;
}

}  // namespace hloc::fuzz
