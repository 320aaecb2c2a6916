// Helpers for the evaluator's tests: run HLO text on literals written as
// text, and compare results through their printed form (exact, NaN-safe).
#ifndef HLOC_HLO_EVALUATOR_EVALUATOR_TEST_UTIL_H_
#define HLOC_HLO_EVALUATOR_EVALUATOR_TEST_UTIL_H_

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace testing_util {

// A literal from a shape and a value in HLO text ("f32[2]", "{1, 2}").
inline Literal L(absl::string_view shape_text, absl::string_view value_text) {
  absl::StatusOr<Shape> shape = ParseShape(shape_text);
  EXPECT_TRUE(shape.ok()) << shape.status();
  if (!shape.ok()) return Literal();
  absl::StatusOr<Literal> literal = ParseLiteral(value_text, *shape);
  EXPECT_TRUE(literal.ok()) << literal.status() << " for " << value_text;
  if (!literal.ok()) return Literal();
  return *std::move(literal);
}

// Parses `text` (a whole module) and evaluates it.
inline absl::StatusOr<Literal> Eval(absl::string_view text, std::vector<Literal> args = {},
                                    EvaluatorOptions options = {}) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  return Evaluate(**module, args, options);
}

// Evaluates a one-instruction entry: `body` is the ROOT line's right-hand
// side using parameters p0, p1, ... declared with `param_shapes`.
inline absl::StatusOr<Literal> EvalOp(absl::string_view result_shape, absl::string_view op,
                                      std::vector<std::pair<std::string, Literal>> params,
                                      absl::string_view extra_computations = "") {
  std::string text = absl::StrCat("HloModule m\n", extra_computations, "\nENTRY e {\n");
  std::vector<Literal> args;
  for (size_t i = 0; i < params.size(); ++i) {
    absl::StrAppend(&text, "  p", i, " = ", params[i].first, " parameter(", i, ")\n");
    args.push_back(std::move(params[i].second));
  }
  absl::StrAppend(&text, "  ROOT r = ", result_shape, " ", op, "\n}\n");
  return Eval(text, std::move(args));
}

// Printed value of a literal result (or the error).
inline std::string Str(const absl::StatusOr<Literal>& r) {
  if (!r.ok()) return absl::StrCat("ERROR: ", r.status().ToString());
  return r->ToString();
}

}  // namespace testing_util
}  // namespace hloc

#endif  // HLOC_HLO_EVALUATOR_EVALUATOR_TEST_UTIL_H_
