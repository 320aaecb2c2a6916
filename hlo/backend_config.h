// backend_config is kept on each instruction exactly as written. Code that
// needs its content parses it on demand into a proto message with protobuf's
// JSON support (XLA writes backend configs as JSON of proto messages).
#ifndef HLOC_HLO_BACKEND_CONFIG_H_
#define HLOC_HLO_BACKEND_CONFIG_H_

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "hlo/instruction.h"

namespace hloc {

// Parses `instruction`'s backend_config JSON into `config`. An empty
// backend_config leaves `config` cleared and is not an error. Unknown JSON
// fields are ignored (XLA's configs grow fields between versions).
absl::Status ParseBackendConfig(const HloInstruction& instruction,
                                google::protobuf::Message* config);

// Serializes `config` to JSON and stores it as the instruction's backend_config.
absl::Status SetBackendConfig(const google::protobuf::Message& config,
                              HloInstruction* instruction);

}  // namespace hloc

#endif  // HLOC_HLO_BACKEND_CONFIG_H_
