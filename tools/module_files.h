// Reading and writing module files for the command line: text (possibly several
// modules split by "// -----"), binary HloModuleProto / HloProto / HloSnapshot.
#ifndef HLOC_TOOLS_MODULE_FILES_H_
#define HLOC_TOOLS_MODULE_FILES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/module.h"

namespace hloc::tools {

enum class FileFormat { kText, kProto };

// By extension: .pb / .proto / .binpb are protos, everything else text.
FileFormat FormatFromPath(const std::string& path);
// "text" or "proto" (or "" to decide by path).
absl::StatusOr<FileFormat> FormatFromFlag(const std::string& flag, const std::string& path);

// Every module in the file (one for protos).
absl::StatusOr<std::vector<std::unique_ptr<HloModule>>> LoadModules(const std::string& path);
// Exactly one module; an error when a text file holds several.
absl::StatusOr<std::unique_ptr<HloModule>> LoadSingleModule(const std::string& path);

// Commands that optimize, compile, run or analyze a module take only modules
// the verifier accepts; these load as above, then verify every module.
absl::StatusOr<std::vector<std::unique_ptr<HloModule>>> LoadVerifiedModules(
    const std::string& path);
absl::StatusOr<std::unique_ptr<HloModule>> LoadSingleVerifiedModule(const std::string& path);
// The verifier on one module loaded from `path`; a failure reads
// "PATH: module NAME fails verification: <the verifier's message>".
absl::Status VerifyLoadedModule(const HloModule& module, const std::string& path);

absl::Status WriteModule(const HloModule& module, const std::string& path, FileFormat format);

}  // namespace hloc::tools

#endif  // HLOC_TOOLS_MODULE_FILES_H_
