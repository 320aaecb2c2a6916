// hloc compare A B: compare two result files element by element.
#include <cstdio>

#include "hlo/evaluator/compare.h"
#include "hlo/status_macros.h"
#include "tools/command.h"
#include "tools/literal_files.h"

namespace hloc::tools {
namespace {

absl::Status RunCompare(const Args& args) {
  HLOC_ASSIGN_OR_RETURN(Literal expected, ReadResultLiteral(args.positional[0]));
  HLOC_ASSIGN_OR_RETURN(Literal actual, ReadResultLiteral(args.positional[1]));
  Tolerance tolerance;
  if (args.Has("rtol")) {
    HLOC_ASSIGN_OR_RETURN(tolerance.rtol, args.GetDouble("rtol", 0));
  }
  if (args.Has("atol")) {
    HLOC_ASSIGN_OR_RETURN(tolerance.atol, args.GetDouble("atol", 0));
  }
  ComparisonReport report = CompareLiterals(expected, actual, tolerance);
  std::printf("%s\n", report.ToString().c_str());
  if (!report.ok) return absl::FailedPreconditionError("results differ");
  return absl::OkStatus();
}

}  // namespace

Command CompareCommand() {
  return {"compare", "compare two result files (NaN-aware, per-type tolerances)",
          "usage: hloc compare EXPECTED.pb ACTUAL.pb [--rtol=R] [--atol=A]\n"
          "  Each file is an HloSnapshot with a result (as `hloc run --output` and JAX dumps\n"
          "  write) or a LiteralProto. Elements match when |a-e| <= atol + rtol*|e|; NaN\n"
          "  matches NaN; defaults depend on the element type (f32 1e-5/1e-6, bf16\n"
          "  1e-2/1e-3, integers exact). Prints the worst element and its index; exit 1 on\n"
          "  mismatch.\n",
          {{"rtol", false}, {"atol", false}}, 2, 2, RunCompare};
}

}  // namespace hloc::tools
