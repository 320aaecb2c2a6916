// File front door: reads a file, decides which of hloc's input forms it is,
// and hands it to the text parser or the proto reader.
//
// Binary protos carry no type tag, and protobuf's parser happily reads one
// message type's bytes as another, so a .pb file is tried as each of
// HloModuleProto, HloProto and HloSnapshot in turn; the first that parses
// and converts to a valid module wins.
#include "hlo/loader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "hlo/hlo.pb.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"

namespace hloc {
namespace {

absl::Status FileError(const std::string& path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

absl::Status WithPath(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  if (!S_ISREG(info.st_mode)) return FileError(path, "not a regular file");
  if (info.st_size > kMaxModuleFileBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": file is ", info.st_size, " bytes, more than the ", kMaxModuleFileBytes,
        " hloc reads"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open"));
  std::string contents(static_cast<size_t>(info.st_size), '\0');
  in.read(&contents[0], static_cast<std::streamsize>(contents.size()));
  if (in.gcount() != static_cast<std::streamsize>(contents.size())) {
    return absl::DataLossError(absl::StrCat(path, ": short read"));
  }
  return contents;
}

bool LooksLikeText(absl::string_view contents) {
  const size_t n = std::min<size_t>(contents.size(), 4096);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = contents[i];
    if (c < 0x09 || (c > 0x0d && c < 0x20) || c == 0x7f) return false;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<HloModule>> ParseText(const std::string& path,
                                                     absl::string_view contents) {
  ParseOptions options;
  options.filename = path;
  return ParseHloModule(contents, options);
}

bool ParseBinary(absl::string_view contents, google::protobuf::MessageLite* message) {
  return ParseProtoQuietly(contents, message);
}

// Tries the three proto kinds; the error of the first kind whose bytes
// parsed is the most useful one to report.
absl::StatusOr<std::unique_ptr<HloModule>> ParseProto(const std::string& path,
                                                      absl::string_view contents) {
  // The fast readers give exactly what the attempts below give when those
  // succeed, so try them in the same order first; the attempts then only
  // run to word the error.
  if (auto m = ModuleFromProtoBytes(contents); m.ok()) return m;
  if (auto m = ModuleFromHloProtoBytes(contents); m.ok()) return m;
  if (auto s = SnapshotFromProtoBytes(contents); s.ok()) return std::move(s->module);
  std::optional<absl::Status> first_error;
  auto attempt = [&](const char* kind, auto convert) -> std::unique_ptr<HloModule> {
    absl::StatusOr<std::unique_ptr<HloModule>> module = convert();
    if (module.ok()) return *std::move(module);
    if (!first_error) {
      first_error = absl::Status(module.status().code(),
                                 absl::StrCat("as ", kind, ": ", module.status().message()));
    }
    return nullptr;
  };
  xla::HloModuleProto module_proto;
  if (ParseBinary(contents, &module_proto) && module_proto.computations_size() > 0) {
    if (auto m = attempt("HloModuleProto", [&] { return ModuleFromProto(module_proto); })) return m;
  }
  xla::HloProto hlo_proto;
  if (ParseBinary(contents, &hlo_proto) && hlo_proto.has_hlo_module()) {
    if (auto m = attempt("HloProto", [&] { return ModuleFromProto(hlo_proto.hlo_module()); })) {
      return m;
    }
  }
  xla::HloSnapshot snapshot;
  if (ParseBinary(contents, &snapshot) && snapshot.hlo().has_hlo_module()) {
    if (auto m = attempt("HloSnapshot",
                         [&] { return ModuleFromProto(snapshot.hlo().hlo_module()); })) {
      return m;
    }
  }
  if (first_error) return WithPath(path, *first_error);
  return FileError(path, "is not a valid HloModuleProto, HloProto or HloSnapshot");
}

}  // namespace

absl::StatusOr<std::unique_ptr<HloModule>> LoadModuleFromFile(const std::string& path) {
  auto contents = ReadFile(path);
  if (!contents.ok()) return contents.status();
  if (absl::EndsWith(path, ".hlo") || absl::EndsWith(path, ".txt")) {
    return ParseText(path, *contents);
  }
  if (absl::EndsWith(path, ".pb")) return ParseProto(path, *contents);
  return LoadModuleFromBytes(*contents, path);
}

absl::StatusOr<std::unique_ptr<HloModule>> LoadModuleFromBytes(absl::string_view contents,
                                                               const std::string& origin) {
  if (!LooksLikeText(contents)) return ParseProto(origin, contents);
  return ParseText(origin, contents);
}

absl::StatusOr<LoadedSnapshot> LoadSnapshotFromFile(const std::string& path) {
  auto contents = ReadFile(path);
  if (!contents.ok()) return contents.status();
  auto loaded = SnapshotFromProtoBytes(*contents);
  if (!loaded.ok()) {
    if (absl::IsDataLoss(loaded.status())) {
      return FileError(path, "is not a valid HloSnapshot (protobuf parse failed)");
    }
    return WithPath(path, loaded.status());
  }
  return loaded;
}

absl::Status SaveModuleToFile(const HloModule& module, const std::string& path) {
  std::string bytes;
  if (absl::EndsWith(path, ".pb")) {
    auto proto = ModuleToProto(module);
    if (!proto.ok()) return WithPath(path, proto.status());
    if (proto->ByteSizeLong() > static_cast<size_t>(INT32_MAX)) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": module is too large for a binary proto"));
    }
    // Deterministic (sorted map entries), so saving a module twice gives the
    // same bytes.
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!proto->SerializeToCodedStream(&coded)) {
      return FileError(path, "proto serialization failed");
    }
    coded.Trim();  // Gives back the unused tail of `bytes`.
  } else {
    bytes = PrintModule(module);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open for writing"));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

}  // namespace hloc
