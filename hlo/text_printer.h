// Canonical HLO text: what `hloc print` writes. Parsing the output gives back a
// structurally equal module (print(parse(print(m))) == print(m)).
#ifndef HLOC_HLO_TEXT_PRINTER_H_
#define HLOC_HLO_TEXT_PRINTER_H_

#include <string>

#include "absl/strings/string_view.h"

#include "hlo/module.h"

namespace hloc {

struct PrintOptions {
  bool print_layouts = true;
  bool print_metadata = true;
  // Operand shapes before operand names ("add(f32[2]{0} %a, ...)"), as XLA does.
  bool print_operand_shapes = true;
  // Large constants are always printed in full; XLA's "{...}" elision loses data.
};

std::string PrintModule(const HloModule& module, const PrintOptions& options = {});
std::string PrintComputation(const HloComputation& computation, const PrintOptions& options = {});
std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options = {});

// A computation's or instruction's name as printed: characters outside
// [A-Za-z0-9_.-], and the '-' of "->", become '_'; an empty name is "_".
// Two names that print the same cannot both be read back, so the verifier
// keeps printed names unique.
std::string PrintedName(absl::string_view name);

}  // namespace hloc

#endif  // HLOC_HLO_TEXT_PRINTER_H_
