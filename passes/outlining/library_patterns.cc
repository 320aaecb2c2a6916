// The table of library patterns: the families in a fixed order (table order
// breaks ties between overlapping matches of equal priority and size).
#include "passes/outlining/library_patterns.h"

#include "absl/strings/str_cat.h"

namespace hloc {

std::string NumericsContract::ToString() const {
  switch (kind) {
    case Kind::kBitIdentical:
      return "bit-identical";
    case Kind::kWithinUlp:
      return absl::StrCat("within ", ulp, " ulp", note.empty() ? "" : ": ", note);
    case Kind::kReformulation:
      return absl::StrCat("reformulation", note.empty() ? "" : ": ", note);
  }
  return "";
}

std::vector<LibraryPattern> DefaultLibraryPatterns() {
  std::vector<LibraryPattern> table;
  AppendGemmPatterns(&table);
  AppendConvolutionPatterns(&table);
  AppendNormalizationPatterns(&table);
  return table;
}

}  // namespace hloc
