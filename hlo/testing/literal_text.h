// Literals written as HLO text in tests: "f32[3] {1, -0, nan}", a shape, a
// space, then the values as the HLO parser reads a constant's.
#ifndef HLOC_HLO_TESTING_LITERAL_TEXT_H_
#define HLOC_HLO_TESTING_LITERAL_TEXT_H_

#include "absl/strings/string_view.h"
#include "hlo/literal.h"

namespace hloc {
namespace testdata {

// The literal; a test failure (and an empty literal) when `text` does not
// parse.
Literal ParseLiteralText(absl::string_view text);

}  // namespace testdata
}  // namespace hloc

#endif  // HLOC_HLO_TESTING_LITERAL_TEXT_H_
