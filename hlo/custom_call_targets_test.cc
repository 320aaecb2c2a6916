// CustomCallRegistry: snapshots stay as taken, fingerprints tell tables
// apart, refused names, and CallCustomCallHandler's frame and errors.
#include "hlo/custom_call_targets.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

absl::Status Ok(const CustomCallFrame&) { return absl::OkStatus(); }

TEST(CustomCallTargetsTest, SnapshotsKeepTheirTable) {
  CustomCallRegistry registry;
  std::shared_ptr<const CustomCallTargets> empty = registry.Snapshot();
  EXPECT_TRUE(empty->empty());
  ASSERT_TRUE(registry.Register("f", Ok).ok());
  std::shared_ptr<const CustomCallTargets> first = registry.Snapshot();
  EXPECT_TRUE(empty->empty());
  ASSERT_NE(first->Find("f"), nullptr);
  EXPECT_EQ(first->Find("g"), nullptr);
  EXPECT_NE(first->fingerprint(), empty->fingerprint());

  ASSERT_TRUE(registry.Register("f", Ok).ok());  // Replaced: a new handler.
  std::shared_ptr<const CustomCallTargets> second = registry.Snapshot();
  EXPECT_NE(second->Find("f"), first->Find("f"));
  EXPECT_NE(second->fingerprint(), first->fingerprint());
  EXPECT_EQ(registry.Snapshot()->fingerprint(), second->fingerprint());

  CustomCallRegistry other;  // The same name elsewhere is another function.
  ASSERT_TRUE(other.Register("f", Ok).ok());
  EXPECT_NE(other.Snapshot()->fingerprint(), second->fingerprint());
}

TEST(CustomCallTargetsTest, RefusedRegistrations) {
  CustomCallRegistry registry;
  EXPECT_EQ(registry.Register("", Ok).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("f", nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register("TopK", Ok).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(registry.Snapshot()->empty());
}

TEST(CustomCallTargetsTest, FrameHasLeavesAndConfigAndErrorsNameTheCall) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(R"(
HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = (s32[4], f32[]) parameter(1)
  ROOT c = (f32[3], (s8[2], f32[])) custom-call(a, b), custom_call_target="t", backend_config="cfg"
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction* call = (*module)->entry()->root();
  CustomCallHandler handler;
  handler.target = "t";
  handler.function = [](const CustomCallFrame& frame) -> absl::Status {
    EXPECT_EQ(frame.target, "t");
    EXPECT_EQ(frame.instruction, "c");
    EXPECT_EQ(frame.backend_config, "cfg");
    EXPECT_EQ(frame.operands.size(), 3u);  // a, then b's two leaves.
    EXPECT_EQ(frame.results.size(), 3u);
    if (frame.operands.size() == 3 && frame.results.size() == 3) {
      EXPECT_EQ(frame.operands[0].byte_size(), 24);
      EXPECT_EQ(frame.operands[1].type, xla::S32);
      EXPECT_EQ(frame.results[1].type, xla::S8);
      EXPECT_TRUE(frame.results[2].dims.empty());
    }
    return absl::NotFoundError("nope");
  };
  std::vector<int64_t> storage(64);
  std::vector<void*> buffers(6, storage.data());
  absl::Status status = CallCustomCallHandler(handler, *call, buffers);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "custom-call %c (target \"t\"): nope");
  buffers.pop_back();  // A buffer short: an internal error, not a call.
  EXPECT_EQ(CallCustomCallHandler(handler, *call, buffers).code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace hloc
