// Hand-written modules for the expanders' tests: each uses one op an
// expander replaces, with the shapes, element types, layouts and attribute
// corners worth checking (feature dimension first/last, one-element
// features, f16/bf16/f64, windows in padding, ties in select, batches of
// matrices, every triangular-solve option, scans forward and reverse with
// several inputs and carries, the "Qr", "ProductOfElementaryHouseholder-
// Reflectors" and "Eigh" custom calls in every supported type). Inputs are the seeded random
// arguments of hlo/evaluator/random_arguments.h; modules that need
// well-conditioned inputs (positive variances, positive definite or
// diagonally dominant matrices) make them from those arguments themselves.
//
// The same cases run through the interpreter before and after expansion
// (passes/expanders/*_test.cc) and through the host backend with no
// interpreter fallback (tests/expanders/).
#ifndef HLOC_PASSES_EXPANDERS_EXPANDER_TEST_CASES_H_
#define HLOC_PASSES_EXPANDERS_EXPANDER_TEST_CASES_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/evaluator/compare.h"
#include "hlo/module.h"
#include "hlo/opcode.h"
#include "passes/pass.h"

namespace hloc {
namespace expanders {

struct ExpanderCase {
  std::string name;       // A gtest-friendly name.
  HloOpcode opcode;       // The op the module uses and the expander removes.
  std::string hlo;        // HLO text.
  // Expanded vs the interpreter's reference: the expansions compute in the
  // element type (f32 for f16/bf16) where the interpreter uses double.
  Tolerance tolerance;
};

// gtest prints a parameter by its name.
inline void PrintTo(const ExpanderCase& c, std::ostream* os) { *os << c.name; }

const std::vector<ExpanderCase>& ExpanderCases();
// The cases for one opcode.
std::vector<ExpanderCase> ExpanderCasesFor(HloOpcode opcode);

// The expander that removes `opcode` (nullptr for other opcodes); for
// kCustomCall, the linear-algebra custom calls' expanders (Qr, Eigh), the
// only custom calls the cases use.
std::unique_ptr<HloPass> ExpanderFor(HloOpcode opcode);

// Parses the case, evaluates it on random arguments from `seed`, expands it
// with ExpanderFor(opcode), verifies, checks that no `opcode` is left,
// evaluates again and compares within the case's tolerance. Returns the
// expanded module, or what went wrong.
absl::StatusOr<std::unique_ptr<HloModule>> ExpandAndCompare(const ExpanderCase& c,
                                                            uint64_t seed = 1);

// Instructions of `opcode` in every computation of `module`.
int64_t CountEverywhere(const HloModule& module, HloOpcode opcode);

}  // namespace expanders
}  // namespace hloc

#endif  // HLOC_PASSES_EXPANDERS_EXPANDER_TEST_CASES_H_
