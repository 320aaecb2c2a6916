#include "tools/module_files.h"

#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/loader.h"
#include "hlo/proto_io.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"

namespace hloc::tools {
namespace {

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace

FileFormat FormatFromPath(const std::string& path) {
  for (const char* ext : {".pb", ".proto", ".binpb"}) {
    if (absl::EndsWith(path, ext)) return FileFormat::kProto;
  }
  return FileFormat::kText;
}

absl::StatusOr<FileFormat> FormatFromFlag(const std::string& flag, const std::string& path) {
  if (flag.empty()) return FormatFromPath(path);
  if (flag == "text") return FileFormat::kText;
  if (flag == "proto") return FileFormat::kProto;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format '", flag, "' (want text or proto)"));
}

absl::StatusOr<std::vector<std::unique_ptr<HloModule>>> LoadModules(const std::string& path) {
  std::vector<std::unique_ptr<HloModule>> modules;
  if (FormatFromPath(path) == FileFormat::kProto) {
    HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, LoadModuleFromFile(path));
    modules.push_back(std::move(module));
    return modules;
  }
  HLOC_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  ParseOptions options;
  options.filename = path;
  return ParseHloModules(text, options);
}

absl::StatusOr<std::unique_ptr<HloModule>> LoadSingleModule(const std::string& path) {
  HLOC_ASSIGN_OR_RETURN(auto modules, LoadModules(path));
  if (modules.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, " holds ", modules.size(), " modules; this command takes exactly one"));
  }
  return std::move(modules[0]);
}

absl::Status VerifyLoadedModule(const HloModule& module, const std::string& path) {
  absl::Status status = VerifyModule(module);
  if (status.ok()) return status;
  return absl::InvalidArgumentError(absl::StrCat(path, ": module ", module.name(),
                                                 " fails verification: ", status.message()));
}

absl::StatusOr<std::vector<std::unique_ptr<HloModule>>> LoadVerifiedModules(
    const std::string& path) {
  HLOC_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<HloModule>> modules, LoadModules(path));
  for (const std::unique_ptr<HloModule>& module : modules) {
    HLOC_RETURN_IF_ERROR(VerifyLoadedModule(*module, path));
  }
  return modules;
}

absl::StatusOr<std::unique_ptr<HloModule>> LoadSingleVerifiedModule(const std::string& path) {
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, LoadSingleModule(path));
  HLOC_RETURN_IF_ERROR(VerifyLoadedModule(*module, path));
  return module;
}

absl::Status WriteModule(const HloModule& module, const std::string& path, FileFormat format) {
  std::string bytes;
  if (format == FileFormat::kProto) {
    HLOC_ASSIGN_OR_RETURN(xla::HloModuleProto proto, ModuleToProto(module));
    if (!proto.SerializeToString(&bytes)) {
      return absl::InternalError("cannot serialize the module proto");
    }
  } else {
    bytes = PrintModule(module);
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::NotFoundError(absl::StrCat("cannot open ", path, " for writing"));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return absl::DataLossError(absl::StrCat("writing ", path, " failed"));
  return absl::OkStatus();
}

}  // namespace hloc::tools
