// Malformed HLO text through the whole front end (parse, then verify): each
// case must come back as an error Status whose message names the fault — never
// a crash, hang or huge allocation (this test also runs under --config=asan).
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/text_parser.h"
#include "hlo/verifier.h"

namespace hloc {
namespace {

struct BadCase {
  const char* name;
  std::string text;
  const char* expected;  // A substring of the error message (case-insensitive).
};

// The module body around one instruction line.
std::string Entry(const std::string& body) {
  return absl::StrCat("HloModule m\nENTRY e {\n", body, "\n}\n");
}

std::vector<BadCase> Cases() {
  std::vector<BadCase> cases = {
      // Lexical and syntactic faults.
      {"empty", "", "expected"},
      {"only_header", "HloModule m", "expected"},
      {"missing_brace", "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n", "expected"},
      {"unterminated_comment", "HloModule m /* forever", "comment"},
      {"unterminated_string", Entry("  ROOT p = f32[] parameter(0), metadata={op_name=\"x}"), "string"},
      {"bad_type", Entry("  ROOT p = f33[] parameter(0)"), "f33"},
      {"missing_shape", Entry("  ROOT p = parameter(0)"), "expected"},
      {"unknown_opcode", Entry("  ROOT p = f32[] frobnicate()"), "frobnicate"},
      {"unknown_attribute", Entry("  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p), colour=red"), "colour"},
      {"undefined_operand", Entry("  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, q)"), "q"},
      {"duplicate_name", Entry("  p = f32[2] parameter(0)\n  p = f32[2] parameter(1)\n  ROOT a = f32[2] add(p, p)"), "p"},
      {"negative_dimension", Entry("  ROOT p = f32[-2] parameter(0)"), "expected"},
      {"dimension_overflow", Entry("  ROOT p = f32[99999999999999999999] parameter(0)"), "99999999999999999999"},
      {"element_count_overflow", Entry("  ROOT p = f32[4294967296,4294967296,4294967296] parameter(0)"), "64"},
      {"bad_layout", Entry("  ROOT p = f32[2,3]{0,0} parameter(0)"), "layout"},
      {"layout_rank", Entry("  ROOT p = f32[2,3]{0} parameter(0)"), "layout"},
      {"bad_parameter_number", Entry("  ROOT p = f32[] parameter(x)"), "expected"},
      {"unclosed_paren", Entry("  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, p"), "expected"},
      {"constant_too_few", Entry("  ROOT c = f32[3] constant({1, 2})"), "constant"},
      {"constant_too_many", Entry("  ROOT c = f32[2] constant({1, 2, 3})"), "constant"},
      {"constant_bad_number", Entry("  ROOT c = f32[2] constant({1, 2x})"), "expected"},
      {"constant_nesting", Entry("  ROOT c = f32[2,2] constant({1, 2, 3, 4})"), "constant"},
      {"constant_int_range", Entry("  ROOT c = s8[1] constant({300})"), "300"},
      {"constant_huge", Entry("  ROOT c = f32[100000000000] constant({1})"), "constant"},
      {"deep_nesting", Entry(absl::StrCat("  ROOT c = f32[1] constant(", std::string(100000, '{'), "1", std::string(100000, '}'), ")")), "nest"},
      {"deep_tuple_shape", Entry(absl::StrCat("  ROOT p = ", std::string(100000, '('), "f32[]", std::string(100000, ')'), " parameter(0)")), "nest"},
      {"bad_slice", Entry("  p = f32[4] parameter(0)\n  ROOT s = f32[2] slice(p), slice={[0:2:x]}"), "expected"},
      {"bad_window", Entry("  p = f32[4] parameter(0)\n  ROOT s = f32[2] negate(p), window={size=2x}"), "expected"},
      {"bad_direction", Entry("  p = f32[4] parameter(0)\n  ROOT c = pred[4] compare(p, p), direction=SIDEWAYS"), "SIDEWAYS"},
      {"unknown_computation", Entry("  p = f32[4] parameter(0)\n  ROOT c = f32[4] call(p), to_apply=nowhere"), "nowhere"},
      {"bad_fusion_kind", "HloModule m\nf {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = f32[] fusion(p), kind=kSideways, calls=f\n}\n", "kSideways"},
      {"garbage_after_module", Entry("  ROOT p = f32[] parameter(0)") + "junk", "junk"},
      {"bad_dim_labels", Entry("  a = f32[1,2,2,1] parameter(0)\n  b = f32[1,1,1,1] parameter(1)\n  ROOT c = f32[1,2,2,1] convolution(a, b), window={size=1x1}, dim_labels=b01f_01io->zz"), "dim_labels"},
      {"nul_byte", std::string("HloModule m\nENTRY e {\n  ROOT p = f32[] param\0eter(0)\n}\n", 45), "expected"},
      // Verifier faults (syntax fine, semantics wrong).
      {"shape_mismatch_add", Entry("  a = f32[2] parameter(0)\n  b = f32[3] parameter(1)\n  ROOT c = f32[2] add(a, b)"), "c"},
      {"wrong_result_shape", Entry("  a = f32[2] parameter(0)\n  ROOT n = f32[3] negate(a)"), "n"},
      {"wrong_element_type", Entry("  a = f32[2] parameter(0)\n  ROOT n = s32[2] negate(a)"), "n"},
      {"wrong_arity", Entry("  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a, a)"), "n"},
      {"compare_not_pred", Entry("  a = f32[2] parameter(0)\n  ROOT c = f32[2] compare(a, a), direction=EQ"), "c"},
      {"broadcast_bad_dims", Entry("  a = f32[2] parameter(0)\n  ROOT b = f32[3,4] broadcast(a), dimensions={0}"), "b"},
      {"reshape_count", Entry("  a = f32[2,3] parameter(0)\n  ROOT r = f32[5] reshape(a)"), "r"},
      {"transpose_not_permutation", Entry("  a = f32[2,3] parameter(0)\n  ROOT t = f32[3,2] transpose(a), dimensions={0,0}"), "t"},
      {"slice_out_of_range", Entry("  a = f32[4] parameter(0)\n  ROOT s = f32[4] slice(a), slice={[2:6]}"), "s"},
      {"concat_mismatch", Entry("  a = f32[2,3] parameter(0)\n  b = f32[2,4] parameter(1)\n  ROOT c = f32[4,3] concatenate(a, b), dimensions={0}"), "c"},
      {"dot_contracting_mismatch", Entry("  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"), "d"},
      {"gte_out_of_range", Entry("  a = (f32[2], f32[3]) parameter(0)\n  ROOT g = f32[2] get-tuple-element(a), index=5"), "g"},
      {"gte_of_array", Entry("  a = f32[2] parameter(0)\n  ROOT g = f32[2] get-tuple-element(a), index=0"), "g"},
      {"parameter_gap", Entry("  a = f32[2] parameter(0)\n  b = f32[2] parameter(2)\n  ROOT c = f32[2] add(a, b)"), "parameter"},
      {"parameter_duplicate", Entry("  a = f32[2] parameter(0)\n  b = f32[2] parameter(0)\n  ROOT c = f32[2] add(a, b)"), "parameter"},
      {"reduce_bad_computation", "HloModule m\nadd {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\nENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add\n}\n", "r"},
      {"while_body_mismatch", "HloModule m\ncond {\n  c = f32[] parameter(0)\n  ROOT t = pred[] constant(false)\n}\nbody {\n  b = f32[] parameter(0)\n  ROOT v = s32[] constant(0)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT w = f32[] while(p), condition=cond, body=body\n}\n", "w"},
      {"call_arity", "HloModule m\nf {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p, p), to_apply=f\n}\n", "c"},
      {"recursive_call", "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=e\n}\n", "e"},
      {"entry_layout_mismatch", "HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(p)\n}\n", "layout"},
      {"select_pred_type", Entry("  a = f32[2] parameter(0)\n  ROOT s = f32[2] select(a, a, a)"), "s"},
      {"invalid_concat_rank", Entry("  a = f32[2] parameter(0)\n  b = f32[2,1] parameter(1)\n  ROOT c = f32[4] concatenate(a, b), dimensions={0}"), "c"},
  };
  return cases;
}

ParseOptions BadFile() {
  ParseOptions options;
  options.filename = "bad.hlo";
  return options;
}

absl::Status ParseAndVerify(const std::string& text) {
  auto module = ParseHloModule(text, BadFile());
  if (!module.ok()) return module.status();
  return VerifyModule(**module);
}

TEST(BadTextInput, EveryCaseIsAClearError) {
  std::vector<BadCase> cases = Cases();
  ASSERT_GE(cases.size(), 50u);
  int failures = 0;
  for (const BadCase& c : cases) {
    absl::Status status = ParseAndVerify(c.text);
    std::string message(status.message());
    bool names_fault = absl::StrContains(absl::AsciiStrToLower(message),
                                         absl::AsciiStrToLower(c.expected));
    if (status.ok() || !names_fault) {
      ++failures;
      ADD_FAILURE() << c.name << ": " << (status.ok() ? "accepted" : message)
                    << " (wanted an error mentioning '" << c.expected << "')";
    }
  }
  std::printf("bad text inputs: %zu cases, %d not rejected clearly\n", cases.size(), failures);
}

TEST(BadTextInput, ParserErrorsCarryFileLineColumn) {
  auto module = ParseHloModule(Entry("  p = f32[2] parameter(0)\n  ROOT a = f32[2] add(p, q)"),
                               BadFile());
  ASSERT_FALSE(module.ok());
  EXPECT_TRUE(absl::StartsWith(module.status().message(), "bad.hlo:4:")) << module.status();
}

}  // namespace
}  // namespace hloc
