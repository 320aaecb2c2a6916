// The linear-algebra custom calls' decoding: result shapes inferred from
// operands (and so checked by the verifier), and the Eigh config in both
// places XLA puts it (backend_config, the legacy opaque string) and in
// XLA's own "%d,%d,%d,%f" spelling.
#include "hlo/linalg_custom_calls.h"

#include <string>

#include "gtest/gtest.h"
#include "hlo/shape_inference.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"

namespace hloc {
namespace {

// The ROOT of a one-parameter module whose root line is `root`.
std::unique_ptr<HloModule> Parse(const std::string& parameters, const std::string& root) {
  absl::StatusOr<std::unique_ptr<HloModule>> module =
      ParseHloModule("HloModule m\nENTRY e {\n" + parameters + "\n  ROOT r = " + root + "\n}\n");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

TEST(LinalgCustomCallsTest, InfersResultShapes) {
  struct Case {
    std::string parameters, root, inferred;
  } cases[] = {
      {"a = f32[2,5,3] parameter(0)",
       "(f32[2,5,3], f32[2,3]) custom-call(a), custom_call_target=\"Qr\"",
       "(f32[2,5,3], f32[2,3])"},
      {"a = c64[3,4] parameter(0)", "(c64[3,4], c64[3]) custom-call(a), custom_call_target=\"Qr\"",
       "(c64[3,4], c64[3])"},
      {"a = f64[6,4] parameter(0)\n  t = f64[2] parameter(1)",
       "f64[6,4] custom-call(a, t), "
       "custom_call_target=\"ProductOfElementaryHouseholderReflectors\"",
       "f64[6,4]"},
      {"a = c128[2,3,3] parameter(0)",
       "(c128[2,3,3], f64[2,3]) custom-call(a), custom_call_target=\"Eigh\", "
       "backend_config=\"1,1,100,0.000001\"",
       "(c128[2,3,3], f64[2,3])"},
  };
  for (const Case& c : cases) {
    std::unique_ptr<HloModule> module = Parse(c.parameters, c.root);
    ASSERT_NE(module, nullptr);
    absl::StatusOr<Shape> shape = InferShape(*module->entry()->root());
    ASSERT_TRUE(shape.ok()) << shape.status();
    EXPECT_EQ(shape->ToString(false), c.inferred);
    EXPECT_TRUE(VerifyModule(*module).ok()) << c.root;
  }
}

TEST(LinalgCustomCallsTest, MalformedCallsAreVerifierErrors) {
  std::unique_ptr<HloModule> module = Parse(
      "a = f32[4,3] parameter(0)", "(f32[4,3], f32[4]) custom-call(a), custom_call_target=\"Qr\"");
  ASSERT_NE(module, nullptr);
  absl::Status status = VerifyModule(*module);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("(f32[4,3], f32[3])"), std::string::npos) << status;
}

TEST(LinalgCustomCallsTest, ParsesEighConfigFromEitherPlace) {
  std::unique_ptr<HloModule> module =
      Parse("a = f32[3,3] parameter(0)",
            "(f32[3,3], f32[3]) custom-call(a), custom_call_target=\"Eigh\", "
            "backend_config=\"0,1,15,0.000001\"");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<EighConfig> config = ParseEighConfig(*module->entry()->root());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->lower);
  EXPECT_TRUE(config->sort);
  EXPECT_EQ(config->max_iter, 15);
  EXPECT_DOUBLE_EQ(config->tol, 1e-6);

  module = Parse("a = f32[3,3] parameter(0)",
                 "(f32[3,3], f32[3]) custom-call(a), custom_call_target=\"Eigh\", "
                 "opaque=\"1,0,100,1e-3\"");
  ASSERT_NE(module, nullptr);
  config = ParseEighConfig(*module->entry()->root());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->lower);
  EXPECT_FALSE(config->sort);
  EXPECT_DOUBLE_EQ(config->tol, 1e-3);

  for (const char* bad : {"", "1,1,100", "1,1,x,1e-6", "1,1,-1,1e-6"}) {
    module = Parse("a = f32[3,3] parameter(0)",
                   std::string("(f32[3,3], f32[3]) custom-call(a), custom_call_target=\"Eigh\", "
                               "backend_config=\"") +
                       bad + "\"");
    ASSERT_NE(module, nullptr);
    EXPECT_FALSE(ParseEighConfig(*module->entry()->root()).ok()) << bad;
    EXPECT_FALSE(VerifyModule(*module).ok()) << bad;
  }
}

}  // namespace
}  // namespace hloc
