#include "hlo/backend_config.h"

#include "gtest/gtest.h"
#include "hlo/xla_data.pb.h"

namespace hloc {
namespace {

TEST(BackendConfig, RoundTripsThroughJson) {
  auto instruction = HloInstruction::Create(HloOpcode::kCustomCall, Shape(xla::F32, {2}));
  // WhileLoopBackendConfig is a real XLA backend config message.
  xla::WhileLoopBackendConfig config;
  config.mutable_known_trip_count()->set_n(7);
  ASSERT_TRUE(SetBackendConfig(config, instruction.get()).ok());
  EXPECT_NE(instruction->backend_config().find("7"), std::string::npos);
  xla::WhileLoopBackendConfig parsed;
  ASSERT_TRUE(ParseBackendConfig(*instruction, &parsed).ok());
  EXPECT_EQ(parsed.known_trip_count().n(), 7);
}

TEST(BackendConfig, EmptyIsClearedAndOk) {
  auto instruction = HloInstruction::Create(HloOpcode::kWhile, Shape(xla::F32, {}));
  xla::WhileLoopBackendConfig parsed;
  parsed.mutable_known_trip_count()->set_n(3);
  EXPECT_TRUE(ParseBackendConfig(*instruction, &parsed).ok());
  EXPECT_FALSE(parsed.has_known_trip_count());
}

TEST(BackendConfig, MalformedJsonNamesInstruction) {
  auto instruction = HloInstruction::Create(HloOpcode::kWhile, Shape(xla::F32, {}));
  instruction->set_name("loop");
  instruction->set_backend_config("{\"known_trip_count\": {\"n\": ");
  xla::WhileLoopBackendConfig parsed;
  absl::Status status = ParseBackendConfig(*instruction, &parsed);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("loop"), absl::string_view::npos);
}

TEST(BackendConfig, UnknownFieldsAreIgnored) {
  auto instruction = HloInstruction::Create(HloOpcode::kWhile, Shape(xla::F32, {}));
  instruction->set_backend_config(R"({"known_trip_count":{"n":"4"},"new_field":1})");
  xla::WhileLoopBackendConfig parsed;
  ASSERT_TRUE(ParseBackendConfig(*instruction, &parsed).ok());
  EXPECT_EQ(parsed.known_trip_count().n(), 4);
}

}  // namespace
}  // namespace hloc
