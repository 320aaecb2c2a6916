// Fuzz target: serialized proto bytes -> the fast reader and the generated
// messages (HloModuleProto, HloProto, HloSnapshot) -> verifier -> round trips.
#include <memory>

#include "absl/strings/string_view.h"
#include "hlo/hlo.pb.h"
#include "hlo/proto_io.h"
#include "hlo/verifier.h"
#include "tests/fuzz/fuzz_targets.h"

namespace hloc::fuzz {

constexpr size_t kMaxProtoBytes = 64 << 10;

namespace {

void VerifyLoaded(absl::StatusOr<std::unique_ptr<HloModule>> loaded, const char* stage) {
  if (!loaded.ok()) {
    RequireMessage(loaded.status(), stage);
    return;
  }
  absl::Status verified = VerifyModule(**loaded);
  if (!verified.ok()) {
    RequireMessage(verified, "verifier");
    return;
  }
  CheckVerifiedRoundTrips(**loaded);
}

}  // namespace

int FuzzHloProto(const uint8_t* data, size_t size) {
  if (size > kMaxProtoBytes) return -1;
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The loader's fast reader.
  VerifyLoaded(ModuleFromProtoBytes(bytes), "proto reader");
  VerifyLoaded(ModuleFromHloProtoBytes(bytes), "HloProto reader");
  // The generated messages, then conversion.
  xla::HloModuleProto proto;
  if (ParseProtoQuietly(bytes, &proto)) VerifyLoaded(ModuleFromProto(proto), "proto conversion");
  absl::StatusOr<LoadedSnapshot> snapshot = SnapshotFromProtoBytes(bytes);
  if (!snapshot.ok()) {
    RequireMessage(snapshot.status(), "snapshot reader");
  } else if (snapshot->module != nullptr && VerifyModule(*snapshot->module).ok()) {
    CheckVerifiedRoundTrips(*snapshot->module);
  }
  return 0;
}

}  // namespace hloc::fuzz
