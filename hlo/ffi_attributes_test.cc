#include "hlo/ffi_attributes.h"

#include "gtest/gtest.h"

namespace hloc {
namespace {

TEST(FfiAttributesTest, ReadsScalarsOfEveryKind) {
  absl::StatusOr<FfiAttributes> a = FfiAttributes::Parse(
      "{diag = 78 : ui8, high = 4 : i32, left = true, low = -1 : i32, tol = 1.5e-3 : f32}");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a->Character("diag"), 'N');
  EXPECT_EQ(*a->Integer("high"), 4);
  EXPECT_EQ(*a->Integer("low"), -1);
  EXPECT_TRUE(*a->Bool("left"));
  EXPECT_TRUE(a->Has("tol"));
  EXPECT_FALSE(a->Has("uplo"));
}

TEST(FfiAttributesTest, EmptyFormsHaveNoAttributes) {
  for (const char* text : {"", "{}", " { } "}) {
    absl::StatusOr<FfiAttributes> a = FfiAttributes::Parse(text);
    ASSERT_TRUE(a.ok()) << text << ": " << a.status();
    EXPECT_FALSE(a->Has("mode"));
  }
}

TEST(FfiAttributesTest, ErrorsSayWhatAndWhere) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"{mode = }", "expected a scalar value for mode"},
      {"{mode 65}", "expected '=' after mode"},
      {"{mode = 65 : ui8", "expected ',' or '}'"},
      {"{mode = \"A\"}", "expected a scalar value for mode"},
      {"{mode = 65, mode = 66}", "appears twice"},
      {"{mode = 65} x", "the end after '}'"},
      {"mode = 65", "expected '{'"},
      {"{mode = abc}", "a number or true/false for mode"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<FfiAttributes> a = FfiAttributes::Parse(c.text);
    ASSERT_FALSE(a.ok()) << c.text;
    EXPECT_NE(a.status().message().find(c.message), std::string::npos)
        << c.text << ": " << a.status().message();
  }
}

TEST(FfiAttributesTest, TypedGettersRefuseOtherKinds) {
  absl::StatusOr<FfiAttributes> a = FfiAttributes::Parse("{flag = true, code = 300 : i32}");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->Integer("flag").ok());
  EXPECT_FALSE(a->Bool("code").ok());
  EXPECT_FALSE(a->Character("code").ok());  // Not a printable character.
  EXPECT_NE(a->Integer("missing").status().message().find("missing"), std::string::npos);
}

}  // namespace
}  // namespace hloc
