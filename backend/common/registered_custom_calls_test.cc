// The host function every target calls for a registered custom call: the
// frame it builds from host buffers, its error, and the lookup's error.
#include "backend/common/registered_custom_calls.h"

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace backend {
namespace {

constexpr char kModule[] = R"(
HloModule m
ENTRY main {
  x = f32[2,3] parameter(0)
  n = (s32[], s32[2]) parameter(1)
  ROOT c = (f32[2,3], (s32[])) custom-call(x, n), custom_call_target="sum_and_count", backend_config="cfg"
})";

TEST(RegisteredCustomCallTest, CallsTheFunctionWithTheFlattenedLeaves) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction& call = *(*module)->entry()->root();
  CustomCallRegistry registry;
  std::string seen;
  ASSERT_TRUE(registry
                  .Register("sum_and_count",
                            [&seen](const CustomCallFrame& frame) {
                              seen = absl::StrCat(frame.target, " %", frame.instruction, " ",
                                                  frame.backend_config, " ",
                                                  frame.operands.size(), "->",
                                                  frame.results.size());
                              const float* x = static_cast<const float*>(frame.operands[0].data);
                              float* y = static_cast<float*>(frame.results[0].data);
                              for (int i = 0; i < 6; ++i) y[i] = 2 * x[i];
                              const int32_t* a = static_cast<const int32_t*>(frame.operands[1].data);
                              const int32_t* b = static_cast<const int32_t*>(frame.operands[2].data);
                              *static_cast<int32_t*>(frame.results[1].data) = *a + b[0] + b[1];
                              return absl::OkStatus();
                            })
                  .ok());
  absl::StatusOr<std::shared_ptr<const CustomCallHandler>> handler =
      FindRegisteredCustomCall(registry.Snapshot().get(), call);
  ASSERT_TRUE(handler.ok()) << handler.status();
  runtime::HostFunction function = MakeRegisteredCustomCallFunction(*handler, &call);

  const float x[6] = {1, 2, 3, 4, 5, 6};
  const int32_t a = 10, b[2] = {20, 30};
  float y[6] = {0};
  int32_t count = 0;
  const void* inputs[] = {x, &a, b};
  void* outputs[] = {y, &count};
  ASSERT_TRUE(function(inputs, outputs).ok());
  EXPECT_EQ(seen, "sum_and_count %c cfg 3->2");
  EXPECT_EQ(y[5], 12.0f);
  EXPECT_EQ(count, 60);
}

TEST(RegisteredCustomCallTest, ErrorsNameTheInstructionAndTheTarget) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  const HloInstruction& call = *(*module)->entry()->root();
  // Nothing registered (no table, or a table without it).
  CustomCallRegistry registry;
  for (const CustomCallTargets* targets : {static_cast<const CustomCallTargets*>(nullptr),
                                           registry.Snapshot().get()}) {
    absl::StatusOr<std::shared_ptr<const CustomCallHandler>> none =
        FindRegisteredCustomCall(targets, call);
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_TRUE(absl::StrContains(none.status().message(),
                                  "%c (custom-call): custom-call target \"sum_and_count\""))
        << none.status();
  }
  ASSERT_TRUE(registry
                  .Register("sum_and_count",
                            [](const CustomCallFrame&) {
                              return absl::ResourceExhaustedError("out of tea");
                            })
                  .ok());
  absl::StatusOr<std::shared_ptr<const CustomCallHandler>> handler =
      FindRegisteredCustomCall(registry.Snapshot().get(), call);
  ASSERT_TRUE(handler.ok()) << handler.status();
  float x[6] = {0}, y[6] = {0};
  int32_t a = 0, b[2] = {0, 0}, count = 0;
  const void* inputs[] = {x, &a, b};
  void* outputs[] = {y, &count};
  absl::Status status = MakeRegisteredCustomCallFunction(*handler, &call)(inputs, outputs);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), "custom-call %c (target \"sum_and_count\"): out of tea");
}

}  // namespace
}  // namespace backend
}  // namespace hloc
