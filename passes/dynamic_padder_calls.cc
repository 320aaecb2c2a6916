// DynamicPadder: while loops and conditionals (dynamic_padder.h, "Loops and
// branches"). Each gets padded copies of its computations: the copy's
// parameter is (the original parameter at its bound, its sizes...) and a
// body's or branch's root (its result at the bound, the result's sizes...,
// its size checks as (value, limit) pairs), padded by a ComputationPadder
// of its own that starts from the parameter's sizes.
//
//   while(init)                      while((init, n, 0, 0))
//     body: (f32[<=8], s32[])   ->     body': ((f32[8], s32[]), s32[], s32[], s32[])
//                                        -> (result, size, first failing check)
//   result                           get-tuple-element(_, 0), its size element 1,
//                                    the check pair checked by the entry
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "passes/dynamic_padder_internal.h"

namespace hloc {
namespace dynamic_padder_internal {

HloInstruction* ComputationPadder::WithSizes(ExpansionBuilder& b, HloInstruction* value,
                                             const std::vector<DynamicDim>& dims,
                                             const std::vector<HloInstruction*>& tail) {
  if (dims.empty() && tail.empty()) return value;
  std::vector<HloInstruction*> parts = {value};
  for (const DynamicDim& dim : dims) parts.push_back(SizeAt(b, value, dim));
  parts.insert(parts.end(), tail.begin(), tail.end());
  return b.Tuple(parts);
}

absl::StatusOr<ComputationPadder::PaddedCallee> ComputationPadder::PadCallee(
    ExpansionBuilder& b, const HloInstruction& caller, const HloComputation& callee,
    bool tuple_parameter) {
  if (callee.num_parameters() != 1) {
    return Refuse(caller, absl::StrCat("calls ", callee.name(), " with ",
                                       callee.num_parameters(), " parameters"));
  }
  const Shape declared_parameter = callee.parameter(0)->shape();
  const std::vector<DynamicDim> in = DynamicDims(declared_parameter);
  if (HasUnbounded(in) || HasUnbounded(DynamicDims(callee.root()->shape()))) {
    return Refuse(caller, absl::StrCat(callee.name(), " has an unbounded dynamic dimension"));
  }
  PaddedCallee padded;
  padded.computation = b.NewComputation(absl::StrCat(callee.name(), ".padded"));
  ExpansionBuilder c = b.ForComputation(padded.computation);
  Shape parameter = declared_parameter;
  MakeStatic(&parameter);
  const bool wrapped = tuple_parameter || !in.empty();
  if (wrapped) {
    std::vector<Shape> parts = {parameter};
    parts.resize(1 + in.size(), Shape::Scalar(xla::S32));
    parameter = Shape::Tuple(std::move(parts));
  }
  padded.parameter = c.Parameter(0, parameter, "padded");
  HloInstruction* value = wrapped ? c.GetTupleElement(padded.parameter, 0) : padded.parameter;
  std::vector<HloInstruction*> sizes;
  for (size_t j = 0; j < in.size(); ++j) {
    sizes.push_back(c.GetTupleElement(padded.parameter, 1 + j));
  }
  HloInstruction* root = c.Inline(callee, {value});
  HLOC_RETURN_IF_ERROR(c.status());
  padded.computation->set_root(root);
  padded.padder = std::make_unique<ComputationPadder>(padded.computation);
  padded.padder->SetSizes(value, in, sizes);
  HLOC_RETURN_IF_ERROR(padded.padder->PadInstructions());
  return padded;
}

absl::Status ComputationPadder::FinishCallee(PaddedCallee& callee,
                                             const std::vector<DynamicDim>& dims,
                                             const std::vector<HloInstruction*>& tail) {
  if (dims.empty() && tail.empty()) return absl::OkStatus();
  ExpansionBuilder r(callee.computation, callee.computation->root());
  HloInstruction* root = callee.padder->WithSizes(r, callee.computation->root(), dims, tail);
  HLOC_RETURN_IF_ERROR(r.status());
  callee.computation->set_root(root);
  return absl::OkStatus();
}

absl::Status ComputationPadder::ReplaceByPadded(ExpansionBuilder& b, HloInstruction* i,
                                                const Shape& declared, HloInstruction* padded,
                                                bool wrapped,
                                                const std::vector<std::string>& check_messages) {
  const std::vector<DynamicDim> dims = DynamicDims(declared);
  HloInstruction* value = wrapped ? b.GetTupleElement(padded, 0) : padded;
  std::vector<HloInstruction*> sizes;
  for (size_t j = 0; j < dims.size(); ++j) sizes.push_back(b.GetTupleElement(padded, 1 + j));
  const int64_t first_check = 1 + static_cast<int64_t>(dims.size());
  for (size_t c = 0; c < check_messages.size(); ++c) {
    AddCheck(b, b.GetTupleElement(padded, first_check + 2 * c),
             b.GetTupleElement(padded, first_check + 2 * c + 1), check_messages[c]);
  }
  HLOC_RETURN_IF_ERROR(b.status());
  SetSizes(value, dims, sizes);
  HLOC_RETURN_IF_ERROR(i->ReplaceAllUsesWith(value));
  dead_.push_back(i);
  return absl::OkStatus();
}

// Whether a size check's (value, limit) pair passes: 0 <= value <= limit.
HloInstruction* Passes(ExpansionBuilder& b, HloInstruction* value, HloInstruction* limit) {
  return b.Binary(HloOpcode::kAnd,
                  b.Compare(value, b.IndexScalar(xla::S32, 0), ComparisonDirection::kGe),
                  b.Compare(value, limit, ComparisonDirection::kLe));
}

// Appends `count` s32 scalars to the tuple shape of `parameter`.
void AppendScalars(HloInstruction* parameter, size_t count) {
  std::vector<Shape> parts = parameter->shape().tuple_shapes();
  parts.resize(parts.size() + count, Shape::Scalar(xla::S32));
  *parameter->mutable_shape() = Shape::Tuple(std::move(parts));
}

// A while whose carried value holds runtime-sized arrays carries their
// sizes too: (value, sizes..., check pairs...) through a padded condition
// and body; the body returns the sizes its result has. A size check in the
// body is carried as a (value, limit) pair that keeps the first failing
// one, and checked after the loop. A size check in the condition ends the
// loop when it fails and is checked after it, on the loop's result.
absl::Status ComputationPadder::VisitWhile(HloInstruction* i, const Shape& declared) {
  ExpansionBuilder b(computation_, i);
  const std::vector<DynamicDim> dims = DynamicDims(declared);
  if (HasUnbounded(dims)) return Refuse(*i, "carries an unbounded dynamic dimension");
  const HloComputation& condition_callee = *i->called_computations()[0];
  HLOC_ASSIGN_OR_RETURN(PaddedCallee condition, PadCallee(b, *i, condition_callee, true));
  HLOC_ASSIGN_OR_RETURN(PaddedCallee body, PadCallee(b, *i, *i->called_computations()[1], true));
  const std::vector<std::string> messages = body.padder->checks();
  const std::vector<HloInstruction*>& values = body.padder->check_values();
  AppendScalars(body.parameter, values.size());
  AppendScalars(condition.parameter, values.size());
  // A size check in the condition: a failing one ends the loop, and a
  // second copy of the condition, run on the loop's result, reports it.
  const std::vector<std::string> condition_messages = condition.padder->checks();
  std::optional<PaddedCallee> condition_checks;
  if (!condition_messages.empty()) {
    ExpansionBuilder g(condition.computation, condition.computation->root());
    HloInstruction* go = condition.computation->root();
    const std::vector<HloInstruction*>& pairs = condition.padder->check_values();
    for (size_t k = 0; k + 1 < pairs.size(); k += 2) {
      go = g.Binary(HloOpcode::kAnd, go, Passes(g, pairs[k], pairs[k + 1]));
    }
    HLOC_RETURN_IF_ERROR(g.status());
    condition.computation->set_root(go);
    HLOC_ASSIGN_OR_RETURN(condition_checks, PadCallee(b, *i, condition_callee, true));
    AppendScalars(condition_checks->parameter, values.size());
    ExpansionBuilder r(condition_checks->computation, condition_checks->computation->root());
    HloInstruction* checks = r.Tuple(condition_checks->padder->check_values());
    HLOC_RETURN_IF_ERROR(r.status());
    condition_checks->computation->set_root(checks);
  }
  ExpansionBuilder c(body.computation, body.computation->root());
  std::vector<HloInstruction*> carried;
  const int64_t first_check = 1 + static_cast<int64_t>(dims.size());
  for (size_t k = 0; k < messages.size(); ++k) {
    HloInstruction* old_value = c.GetTupleElement(body.parameter, first_check + 2 * k);
    HloInstruction* old_limit = c.GetTupleElement(body.parameter, first_check + 2 * k + 1);
    HloInstruction* passed = Passes(c, old_value, old_limit);
    carried.push_back(c.Select(passed, values[2 * k], old_value));
    carried.push_back(c.Select(passed, values[2 * k + 1], old_limit));
  }
  HLOC_RETURN_IF_ERROR(c.status());
  HLOC_RETURN_IF_ERROR(FinishCallee(body, dims, carried));
  std::vector<HloInstruction*> passing(values.size(), b.IndexScalar(xla::S32, 0));
  HloInstruction* init = i->operand(0);
  std::vector<HloInstruction*> parts = {init};
  for (const DynamicDim& dim : dims) parts.push_back(SizeAt(b, init, dim));
  parts.insert(parts.end(), passing.begin(), passing.end());
  HloInstruction* loop = b.Build(
      HloOpcode::kWhile, {b.Tuple(parts)},
      [&](HloInstruction& built) {
        *built.mutable_attrs() = i->attrs();
        built.AppendCalledComputation(condition.computation);
        built.AppendCalledComputation(body.computation);
      },
      Shape(), "padded");
  HLOC_RETURN_IF_ERROR(b.status());
  HLOC_RETURN_IF_ERROR(ReplaceByPadded(b, i, declared, loop, /*wrapped=*/true, messages));
  // The condition's checks after the body's: a body check that failed did
  // so in an earlier iteration than any condition check.
  if (condition_checks.has_value()) {
    HloInstruction* checks = b.Inline(*condition_checks->computation, {loop});
    for (size_t k = 0; k < condition_messages.size(); ++k) {
      AddCheck(b, b.GetTupleElement(checks, 2 * k), b.GetTupleElement(checks, 2 * k + 1),
               absl::StrCat(condition_messages[k], " (in the condition of %", i->name(), ")"));
    }
  }
  return b.status();
}

// A conditional: each branch operand with its sizes, each branch padded to
// return its result's sizes and one (value, limit) pair per size check of
// any branch ((0, 0), which passes, for the other branches' checks).
absl::Status ComputationPadder::VisitConditional(HloInstruction* i, const Shape& declared) {
  ExpansionBuilder b(computation_, i);
  const std::vector<HloComputation*> callees = i->called_computations();
  if (i->operand_count() != static_cast<int64_t>(callees.size()) + 1) {
    return Refuse(*i, "operands do not match its branches");
  }
  std::vector<HloInstruction*> operands = {i->operand(0)};
  std::vector<PaddedCallee> branches;
  std::vector<std::string> messages;
  for (size_t k = 0; k < callees.size(); ++k) {
    HLOC_ASSIGN_OR_RETURN(PaddedCallee branch, PadCallee(b, *i, *callees[k], false));
    const std::vector<std::string>& checks = branch.padder->checks();
    messages.insert(messages.end(), checks.begin(), checks.end());
    branches.push_back(std::move(branch));
    const std::vector<DynamicDim> dims = DynamicDims(callees[k]->parameter(0)->shape());
    operands.push_back(WithSizes(b, i->operand(1 + k), dims));
  }
  const std::vector<DynamicDim> out = DynamicDims(declared);
  size_t first = 0;
  for (PaddedCallee& branch : branches) {
    ExpansionBuilder c(branch.computation, branch.computation->root());
    const std::vector<HloInstruction*>& values = branch.padder->check_values();
    std::vector<HloInstruction*> tail(2 * messages.size(), nullptr);
    for (HloInstruction*& slot : tail) slot = c.IndexScalar(xla::S32, 0);
    for (size_t v = 0; v < values.size(); ++v) tail[2 * first + v] = values[v];
    first += values.size() / 2;
    HLOC_RETURN_IF_ERROR(c.status());
    HLOC_RETURN_IF_ERROR(FinishCallee(branch, out, tail));
  }
  HloInstruction* conditional = b.Build(
      HloOpcode::kConditional, operands,
      [&](HloInstruction& built) {
        *built.mutable_attrs() = i->attrs();
        for (const PaddedCallee& branch : branches) {
          built.AppendCalledComputation(branch.computation);
        }
      },
      Shape(), "padded");
  HLOC_RETURN_IF_ERROR(b.status());
  return ReplaceByPadded(b, i, declared, conditional, !out.empty() || !messages.empty(),
                         messages);
}

}  // namespace dynamic_padder_internal
}  // namespace hloc
