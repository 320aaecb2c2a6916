// Printers for the structured values of HLO text (shardings, metadata,
// windows, ...), shared by the instruction printer in text_printer.cc. Each
// writes exactly the syntax hlo/text_parser reads back. Not part of hloc's API.
#ifndef HLOC_HLO_TEXT_PRINTER_INTERNAL_H_
#define HLOC_HLO_TEXT_PRINTER_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "hlo/computation.h"
#include "hlo/hlo.pb.h"
#include "hlo/instruction.h"

namespace hloc {
namespace text_internal {

// "name" when it lexes as a bare name, else "%name" (names of other
// characters have them replaced by '_' so the text still parses).
void AppendBareName(absl::string_view name, std::string* out);
// "%name", with the same replacement.
void AppendPercentName(absl::string_view name, std::string* out);
// A double-quoted, C-escaped string.
void AppendQuoted(absl::string_view value, std::string* out);
// A balanced {...} block as is (it parses back verbatim), else quoted.
void AppendStringOrBraced(absl::string_view value, std::string* out);

// "{1,2,3}"
template <typename Container>
void AppendIntList(const Container& values, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (auto v : values) {
    if (!first) out->push_back(',');
    first = false;
    out->append(std::to_string(static_cast<int64_t>(v)));
  }
  out->push_back('}');
}

void AppendProgramShapeLayout(const ProgramShape& program_shape, std::string* out);
void AppendSharding(const xla::OpSharding& sharding, std::string* out);
void AppendMetadata(const xla::OpMetadata& metadata, std::string* out);
void AppendFrontendAttributes(const xla::FrontendAttributes& attributes, std::string* out);
void AppendWindow(const xla::Window& window, std::string* out);
void AppendDimLabels(const xla::ConvolutionDimensionNumbers& dnums, std::string* out);
void AppendPaddingConfig(const xla::PaddingConfig& padding, std::string* out);
void AppendReplicaGroups(const HloAttributes& attrs, std::string* out);
void AppendOutputOperandAliasing(const std::vector<OutputOperandAlias>& aliasing, std::string* out);
void AppendResultAccuracy(const xla::ResultAccuracy& accuracy, std::string* out);
void AppendStatistics(const xla::StatisticsViz& statistics, std::string* out);
void AppendOriginalValue(const xla::OriginalValueProto& value, const Shape& shape,
                         std::string* out);
void AppendSparsity(const xla::SparsityConfig& sparsity, std::string* out);
void AppendStackFrameIndex(const xla::StackFrameIndexProto& index, std::string* out);

}  // namespace text_internal
}  // namespace hloc

#endif  // HLOC_HLO_TEXT_PRINTER_INTERNAL_H_
