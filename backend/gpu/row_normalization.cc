// Deciding whether a computation is a row normalization (see
// row_normalization.h).
#include "backend/gpu/row_normalization.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace gpu {
namespace {

absl::Status Refuse(const HloInstruction* hlo, absl::string_view why) {
  if (hlo == nullptr) return absl::FailedPreconditionError(why);
  return absl::FailedPreconditionError(absl::StrCat("%", hlo->name(), ": ", why));
}

std::vector<int64_t> WithoutOnes(const std::vector<int64_t>& dims) {
  std::vector<int64_t> kept;
  for (int64_t d : dims) {
    if (d != 1) kept.push_back(d);
  }
  return kept;
}

bool IsNormalizableType(PrimitiveType type) {
  return type == xla::F32 || type == xla::BF16 || type == xla::F16;
}

class Analysis {
 public:
  Analysis(const HloComputation& computation, const RowNormalizationLimits& limits)
      : computation_(computation), limits_(limits) {}

  absl::StatusOr<RowNormalizationPlan> Run() {
    if (computation_.root() == nullptr) return Refuse(nullptr, "no root");
    const std::vector<HloInstruction*> order = computation_.MakeInstructionPostOrder();
    for (const HloInstruction* hlo : order) {
      if (hlo->opcode() == HloOpcode::kReduce) {
        absl::Status s = AddReduction(*hlo);
        if (!s.ok()) return s;
      }
    }
    if (plan_.reductions.empty()) return Refuse(nullptr, "no reduction");
    if (static_cast<int64_t>(plan_.reductions.size()) > limits_.max_reductions) {
      return Refuse(plan_.reductions.back(),
                    absl::StrCat("more than ", limits_.max_reductions, " reductions"));
    }
    // Values that depend on a reduction, in post order.
    for (const HloInstruction* hlo : order) {
      bool dependent = hlo->opcode() == HloOpcode::kReduce;
      for (const HloInstruction* operand : hlo->operands()) {
        dependent = dependent || dependent_.contains(operand);
      }
      if (!dependent) continue;
      dependent_.insert(hlo);
      absl::Status s = CheckDependent(*hlo);
      if (!s.ok()) return s;
    }
    const HloInstruction* root = computation_.root();
    std::vector<const HloInstruction*> outputs;
    if (root->opcode() == HloOpcode::kTuple) {
      outputs.assign(root->operands().begin(), root->operands().end());
    } else {
      outputs.push_back(root);
    }
    for (const HloInstruction* output : outputs) {
      if (!output->shape().IsArray()) return Refuse(output, "an output that is not an array");
      if (!IsRow(*output) && !IsPerRow(*output)) {
        return Refuse(output, "an output that is neither row-shaped nor one value per row");
      }
    }
    if (!plan_.chained && !plan_.broadcasts_back) {
      return Refuse(plan_.reductions[0],
                    "a plain reduction (no result is broadcast back along the row)");
    }
    return plan_;
  }

 private:
  absl::Status AddReduction(const HloInstruction& reduce) {
    if (reduce.operand_count() != 2 || reduce.shape().IsTuple()) {
      return Refuse(&reduce, "a variadic reduction");
    }
    const Shape& input = reduce.operand(0)->shape();
    if (!IsNormalizableType(input.element_type())) {
      return Refuse(&reduce, absl::StrCat("reduces ", PrimitiveTypeName(input.element_type()),
                                          " (f32, bf16 or f16 only)"));
    }
    std::vector<int64_t> reduced = reduce.dimensions();
    std::sort(reduced.begin(), reduced.end());
    const int64_t rank = input.rank();
    const int64_t k = static_cast<int64_t>(reduced.size());
    for (int64_t i = 0; i < k; ++i) {
      if (reduced[i] != rank - k + i) {
        return Refuse(&reduce, absl::StrCat("reduces dimensions {", absl::StrJoin(reduced, ","),
                                            "}, not the trailing ones"));
      }
    }
    if (k == 0) return Refuse(&reduce, "reduces no dimension");
    if (plan_.reductions.empty()) {
      plan_.row_shape = input.dimensions();
      plan_.outer_dims.assign(input.dimensions().begin(), input.dimensions().end() - k);
      plan_.row_dims.assign(input.dimensions().end() - k, input.dimensions().end());
      for (int64_t d : plan_.outer_dims) plan_.rows *= d;
      for (int64_t d : plan_.row_dims) {
        plan_.row_length *= d;
        if (plan_.row_length > limits_.max_row_length) break;
      }
      if (plan_.row_length > limits_.max_row_length) {
        return Refuse(&reduce, absl::StrCat("rows longer than ", limits_.max_row_length,
                                            " elements"));
      }
      if (plan_.row_length < 2) return Refuse(&reduce, "rows of one element");
      if (plan_.rows < 1) return Refuse(&reduce, "no rows");
    } else if (input.dimensions() != plan_.row_shape ||
               static_cast<int64_t>(plan_.row_dims.size()) != k) {
      return Refuse(&reduce, absl::StrCat("reduces another row shape than %",
                                          plan_.reductions[0]->name()));
    }
    plan_.reductions.push_back(&reduce);
    return absl::OkStatus();
  }

  bool IsRow(const HloInstruction& hlo) const {
    return hlo.shape().IsArray() && hlo.shape().dimensions() == plan_.row_shape;
  }
  bool IsPerRow(const HloInstruction& hlo) const {
    return hlo.shape().IsArray() && IsPerRowShape(plan_, hlo.shape().dimensions());
  }

  // A broadcast of a per-row operand whose dimensions of size > 1 land, in
  // order and with their sizes, on `limit` leading dimensions of the result:
  // it reads the element of the same row.
  bool BroadcastKeepsRows(const HloInstruction& broadcast, int64_t limit) const {
    const Shape& operand = broadcast.operand(0)->shape();
    const std::vector<int64_t>& dims = broadcast.dimensions();
    if (static_cast<int64_t>(dims.size()) != operand.rank()) return false;
    int64_t last = -1;
    for (int64_t i = 0; i < operand.rank(); ++i) {
      const int64_t to = dims[i];
      if (to < 0 || to >= broadcast.shape().rank()) return false;
      if (broadcast.shape().dimensions(to) != operand.dimensions(i)) return false;
      if (operand.dimensions(i) == 1) continue;
      if (to >= limit || to <= last) return false;
      last = to;
    }
    return true;
  }

  absl::Status CheckDependent(const HloInstruction& hlo) {
    switch (hlo.opcode()) {
      case HloOpcode::kReduce:
        if (dependent_.contains(hlo.operand(1))) {
          return Refuse(&hlo, "an init value computed from a reduction");
        }
        if (dependent_.contains(hlo.operand(0))) plan_.chained = true;
        return absl::OkStatus();
      case HloOpcode::kTuple:
        if (&hlo != computation_.root()) {
          return Refuse(&hlo, "a tuple of reduction results that is not the root");
        }
        return absl::OkStatus();
      case HloOpcode::kReshape:
      case HloOpcode::kBitcast:
        if (!IsPerRow(*hlo.operand(0)) || !IsPerRow(hlo)) {
          return Refuse(&hlo, "reshapes a value computed from a reduction, not per row");
        }
        return absl::OkStatus();
      case HloOpcode::kBroadcast:
        if (!IsPerRow(*hlo.operand(0))) {
          return Refuse(&hlo, "broadcasts a value computed from a reduction, not per row");
        }
        if (IsRow(hlo) &&
            BroadcastKeepsRows(hlo, static_cast<int64_t>(plan_.outer_dims.size()))) {
          plan_.broadcasts_back = true;
          return absl::OkStatus();
        }
        if (IsPerRow(hlo) && BroadcastKeepsRows(hlo, hlo.shape().rank())) {
          return absl::OkStatus();
        }
        return Refuse(&hlo, "broadcasts a per-row value other than along the row");
      default: break;
    }
    if (hlo.IsElementwise()) {
      if (IsRow(hlo)) {
        plan_.broadcasts_back = true;
        return absl::OkStatus();
      }
      if (IsPerRow(hlo)) return absl::OkStatus();
      return Refuse(&hlo, "elementwise on a reduction result, neither row-shaped nor per row");
    }
    return Refuse(&hlo, absl::StrCat("uses a reduction result in a ", HloOpcodeName(hlo.opcode()),
                                     " (only broadcasts back along the row, reshapes and "
                                     "elementwise ops may)"));
  }

  const HloComputation& computation_;
  const RowNormalizationLimits& limits_;
  RowNormalizationPlan plan_;
  absl::flat_hash_set<const HloInstruction*> dependent_;
};

}  // namespace

bool IsPerRowShape(const RowNormalizationPlan& plan, const std::vector<int64_t>& dims) {
  return WithoutOnes(dims) == WithoutOnes(plan.outer_dims);
}

absl::StatusOr<RowNormalizationPlan> AnalyzeRowNormalization(
    const HloComputation& computation, const RowNormalizationLimits& limits) {
  Analysis analysis(computation, limits);
  return analysis.Run();
}

}  // namespace gpu
}  // namespace hloc
