// Collectives, replica-id and partition-id as runtime collective thunks
// (runtime/collective_thunks.h): what the program builder decodes once from
// the instruction, whatever the target.
//
//   op                      spec
//   all-reduce              groups, element type, reduction, one leaf per operand
//   all-gather              groups, rows before the gathered dimension, block size
//   reduce-scatter          groups, reduction, rows before the scattered dimension
//   all-to-all              array form: rows before the split dimension, block size;
//                           tuple form: one operand per group member
//   ragged-all-to-all       groups, rows of input and output, row bytes, the
//                           index arrays' entries and width (s32 / s64)
//   collective-permute      (source, target) device pairs
//   collective-broadcast    groups (rank 0 of each group sends)
//   replica-id, partition-id  num_partitions
//
// Reductions: a to_apply that is one add / multiply / minimum / maximum /
// and / or of its two scalar parameters maps to the communicator's reduction
// kinds. Any other to_apply is a compile error naming the instruction (no
// generated reduction kernel yet). all-reduce-start, all-gather-start and
// collective-permute-start decode as their synchronous forms (the thunk
// runs at the start; ProgramBuilder::BindCollective binds the results).
// The async-start wrappers are not lowered (op_lowering.h says where they
// go).
#ifndef HLOC_BACKEND_COMMON_COLLECTIVE_LOWERING_H_
#define HLOC_BACKEND_COMMON_COLLECTIVE_LOWERING_H_

#include "absl/status/statusor.h"
#include "backend/common/op_lowering.h"
#include "hlo/collective_groups.h"
#include "hlo/instruction.h"
#include "runtime/collective_thunks.h"

namespace hloc {
namespace backend {

// `hlo`'s spec on `mesh`; errors name the instruction.
absl::StatusOr<runtime::CollectiveSpec> DecodeCollective(const HloInstruction& hlo,
                                                         const DeviceMesh& mesh);

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_COLLECTIVE_LOWERING_H_
