// Deterministic mutations of HLO text and HloModuleProto bytes for the
// mutation run (mutation_test.cc). Each mutant is a function of (source,
// seed) alone, so a failure is reproduced from its seed.
//
// Text mutants: byte flips, token swaps, truncations, deleted or duplicated
// lines, number edits (0, -1, huge, out of range), shape edits (dimensions
// added, dropped or changed; element types swapped) and opcode swaps.
// Proto mutants: byte flips and truncations of the serialized bytes, and
// structured edits of the message (an instruction's opcode, shape, operand
// ids, dimensions, tuple index, parameter number, callees or literal; roots,
// entry ids, aliasing), which reach the reader's checks behind the wire format.
#ifndef HLOC_TESTS_MUTATION_MUTATORS_H_
#define HLOC_TESTS_MUTATION_MUTATORS_H_

#include <cstdint>
#include <string>

#include "hlo/hlo.pb.h"

namespace hloc::mutation {

struct Mutant {
  std::string bytes;  // HLO text or a serialized HloModuleProto
  std::string how;    // "number-edit at 120: 4 -> -1", for reports
};

Mutant MutateText(const std::string& text, uint64_t seed);
Mutant MutateProto(const xla::HloModuleProto& proto, uint64_t seed);

}  // namespace hloc::mutation

#endif  // HLOC_TESTS_MUTATION_MUTATORS_H_
