// Literals from HLO text for tests (see literal_text.h).
#include "hlo/testing/literal_text.h"

#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace testdata {

Literal ParseLiteralText(absl::string_view text) {
  const size_t space = text.find(' ');
  absl::StatusOr<Shape> shape = ParseShape(text.substr(0, space));
  EXPECT_TRUE(shape.ok()) << shape.status();
  if (!shape.ok()) return Literal();
  absl::StatusOr<Literal> literal = ParseLiteral(text.substr(space + 1), *shape);
  EXPECT_TRUE(literal.ok()) << literal.status() << " in " << text;
  return literal.ok() ? *std::move(literal) : Literal();
}

}  // namespace testdata
}  // namespace hloc
