// Pieces shared by proto_io.cc (modules, computations, ids),
// proto_io_instruction.cc (one instruction's fields) and the fast reader
// (proto_fast_*.cc, which falls back on InstructionFromProto). Not a public
// API.
#ifndef HLOC_HLO_PROTO_IO_INTERNAL_H_
#define HLOC_HLO_PROTO_IO_INTERNAL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "hlo/hlo.pb.h"
#include "hlo/instruction.h"

namespace hloc {
namespace proto_io_internal {

// Copies every set field of `from` whose number is not in `skip` into `to`,
// plus `from`'s unknown fields (fields of newer XLA versions).
void CopyFieldsExcept(const google::protobuf::Message& from,
                      const absl::flat_hash_set<int>& skip, google::protobuf::Message* to);

// Builds the instruction `proto` describes, minus its graph edges: operands
// (already created, in order) are attached, called computations are given in
// the proto's order, control edges and the parent are left to the caller.
// Everything the IR does not model is kept in the carried proto fields.
absl::StatusOr<std::unique_ptr<HloInstruction>> InstructionFromProto(
    const xla::HloInstructionProto& proto, absl::Span<HloInstruction* const> operands,
    absl::Span<HloComputation* const> called_computations);

// Writes everything of `instruction` except id, operand_ids,
// control_predecessor_ids and called_computation_ids. With `use_carried`
// false the carried fields are ignored (used to find what a re-export would
// lose); with `write_literal` false constants get an empty literal.
void InstructionFieldsToProto(const HloInstruction& instruction, bool use_carried,
                              bool write_literal, xla::HloInstructionProto* proto);

// The first enum field (at any depth of `message`) holding a number its enum
// does not define, as "field = number"; empty when there is none. Such a
// number has no name for the text form to print, so loaders refuse it.
std::string UnknownEnumValue(const google::protobuf::Message& message);

// The comparison type XLA assumes for operands of `type`.
ComparisonType DefaultComparisonType(PrimitiveType type);

// How many computations an opcode calls, where the IR relies on it: -1 for
// "at least one", 0 when not checked.
int ExpectedCalledCount(HloOpcode opcode);

// The called computations in the proto's order (XLA writes a while's body
// before its condition; the IR keeps condition first).
std::vector<HloComputation*> CalledComputationsInProtoOrder(const HloInstruction& instruction);

}  // namespace proto_io_internal
}  // namespace hloc

#endif  // HLOC_HLO_PROTO_IO_INTERNAL_H_
