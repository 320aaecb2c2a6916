// DeclaredResult (see declared_result.h): the contract is decoded and
// applied by passes/dynamic_padder.cc, next to the code that writes it.
#include "backend/common/declared_result.h"

#include <string>
#include <utility>
#include <vector>

#include "hlo/status_macros.h"

namespace hloc {
namespace backend {

absl::StatusOr<DeclaredResult> DeclaredResult::ForModule(const HloModule& module) {
  DeclaredResult declared;
  HLOC_ASSIGN_OR_RETURN(declared.contract_, FindDynamicResultContract(module));
  return declared;
}

const std::vector<Shape>& DeclaredResult::declared_parameters() const {
  static const std::vector<Shape>* none = new std::vector<Shape>();
  return contract_.has_value() ? contract_->parameters : *none;
}

const std::vector<std::string>& DeclaredResult::declared_parameter_names() const {
  static const std::vector<std::string>* none = new std::vector<std::string>();
  return contract_.has_value() ? contract_->parameter_names : *none;
}

absl::StatusOr<std::vector<Literal>> DeclaredResult::PadArguments(
    absl::Span<const Literal> arguments) const {
  if (!dynamic_parameters()) {
    return absl::InternalError("PadArguments: the module has no dynamic entry parameter");
  }
  return PadDynamicArguments(arguments, *contract_);
}

absl::StatusOr<Literal> DeclaredResult::FromRun(Literal result) const {
  if (!contract_.has_value()) return result;
  return ShrinkDynamicResult(result, *contract_);
}

}  // namespace backend
}  // namespace hloc
