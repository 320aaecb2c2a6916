// Loading and saving modules in every file form hloc accepts: HLO text
// (.hlo, .txt, or anything that reads as text), and binary protos (.pb):
// HloModuleProto, HloProto (XLA's --xla_dump_hlo_as_proto) and HloSnapshot.
#ifndef HLOC_HLO_LOADER_H_
#define HLOC_HLO_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "hlo/module.h"
#include "hlo/proto_io.h"

namespace hloc {

// Files bigger than this are refused before reading (protobuf cannot parse
// more than 2 GiB either).
inline constexpr int64_t kMaxModuleFileBytes = int64_t{2} << 30;

// Text for .hlo/.txt; the proto kinds, tried in turn, for .pb; other
// extensions are sniffed (a binary-looking file is tried as a proto).
// Errors name the file.
absl::StatusOr<std::unique_ptr<HloModule>> LoadModuleFromFile(const std::string& path);

// A module from memory: binary-looking bytes are tried as HloModuleProto,
// HloProto and HloSnapshot in turn, anything else is parsed as HLO text.
// Errors name `origin` (a file name, or "<bytes>").
absl::StatusOr<std::unique_ptr<HloModule>> LoadModuleFromBytes(absl::string_view contents,
                                                               const std::string& origin);

// An HloSnapshot file: module, arguments and, when present, the result.
absl::StatusOr<LoadedSnapshot> LoadSnapshotFromFile(const std::string& path);

// .pb: a binary HloModuleProto; anything else: PrintModule's text.
absl::Status SaveModuleToFile(const HloModule& module, const std::string& path);

}  // namespace hloc

#endif  // HLOC_HLO_LOADER_H_
