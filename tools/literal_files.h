// Result files of `hloc run --output` and inputs of `hloc compare`: an
// HloSnapshot (module, arguments, result), or a bare LiteralProto.
#ifndef HLOC_TOOLS_LITERAL_FILES_H_
#define HLOC_TOOLS_LITERAL_FILES_H_

#include <string>

#include "absl/status/statusor.h"
#include "hlo/proto_io.h"

namespace hloc::tools {

// The result literal stored in `path`: an HloSnapshot's result, else the file
// read as a LiteralProto.
absl::StatusOr<Literal> ReadResultLiteral(const std::string& path);

absl::Status WriteSnapshot(const LoadedSnapshot& snapshot, const std::string& path);

// One line per array in `literal` (tuple elements flattened): shape, min, max,
// mean over finite values, NaN count, and a 64-bit checksum of the bytes.
std::string SummarizeLiteral(const Literal& literal);

}  // namespace hloc::tools

#endif  // HLOC_TOOLS_LITERAL_FILES_H_
