#include "hlo/backend_config.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace hloc {

absl::Status ParseBackendConfig(const HloInstruction& instruction,
                                google::protobuf::Message* config) {
  config->Clear();
  const std::string& json = instruction.backend_config();
  if (json.empty()) return absl::OkStatus();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  auto status = google::protobuf::util::JsonStringToMessage(json, config, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("backend_config of ", instruction.name(),
                                                   " is not a valid ", config->GetTypeName(),
                                                   ": ", status.message().as_string()));
  }
  return absl::OkStatus();
}

absl::Status SetBackendConfig(const google::protobuf::Message& config,
                              HloInstruction* instruction) {
  std::string json;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = false;
  auto status = google::protobuf::util::MessageToJsonString(config, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrCat("cannot serialize ", config.GetTypeName(),
                                            " to JSON: ", status.message().as_string()));
  }
  instruction->set_backend_config(std::move(json));
  return absl::OkStatus();
}

}  // namespace hloc
