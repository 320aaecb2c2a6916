// ProgramReport's shared lines (see program_report.h).
#include "backend/common/program_report.h"

#include "absl/strings/str_cat.h"

namespace hloc {
namespace backend {

void ProgramReport::AppendSharedLines(std::string* out) const {
  for (const std::string& s : interpreter_ops) absl::StrAppend(out, "  interpreter ", s, "\n");
  for (const std::string& s : aliased_outputs) absl::StrAppend(out, "  aliased ", s, "\n");
  for (const std::string& s : alias_refusals) absl::StrAppend(out, "  not aliased ", s, "\n");
  if (update_kernels > 0 || loop_states_reused > 0 || loop_results_in_place > 0 ||
      elementwise_in_place > 0) {
    absl::StrAppend(out, "  in place: ", updates_in_place, " of ", update_kernels,
                    " update kernels, ", loop_states_reused, " loop states, ",
                    loop_results_in_place, " loop results, ", elementwise_in_place,
                    " elementwise outputs (", shared_bytes, " B shared)\n");
  }
}

}  // namespace backend
}  // namespace hloc
