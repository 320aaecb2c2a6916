// The DynamicPadder's internals (dynamic_padder.h says what the pass does),
// shared by its files and nothing else:
//
//   dynamic_padder.cc           the pass: entry parameters, the per-opcode
//                               rules, the entry root
//   dynamic_padder_calls.cc     while loops and conditionals: padded copies
//                               of their computations, sizes and checks
//                               carried in and out
//   dynamic_padder_contract.cc  the contract on the module (written and read
//                               there), arguments padded, results cut
#ifndef HLOC_PASSES_DYNAMIC_PADDER_INTERNAL_H_
#define HLOC_PASSES_DYNAMIC_PADDER_INTERNAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/dynamic_custom_calls.h"
#include "hlo/instruction.h"
#include "hlo/shape.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace dynamic_padder_internal {

using expanders::ExpansionBuilder;

// Per dimension, the s32 scalar holding its runtime size; null: the bound.
using Sizes = std::vector<HloInstruction*>;
// A tuple-valued instruction's sized array leaves, by their index path
// ({1} the second element, {0, 2} the third element of the first).
using LeafSizes = std::map<std::vector<int64_t>, Sizes>;

// `shape` with every dimension static (tuples: every leaf).
void MakeStatic(Shape* shape);
// Whether an instruction of `computation` has a dynamic shape or is a
// set- or get-dimension-size.
bool HasDynamicShape(const HloComputation& computation);
bool AnySize(const Sizes& sizes);
// The Unimplemented error naming `i` and why the pass cannot rewrite it.
absl::Status Refuse(const HloInstruction& i, absl::string_view why);

// One dynamic dimension of a (possibly tuple) shape: the array leaf at
// `path`, its dimension and bound.
struct DynamicDim {
  std::vector<int64_t> path;
  int64_t dimension;
  int64_t bound;
};
// Every dynamic dimension of `shape`, in leaf then dimension order.
std::vector<DynamicDim> DynamicDims(const Shape& shape);
bool HasUnbounded(const std::vector<DynamicDim>& dims);

// Pads one computation: the entry (RunEntry), or a copy of a loop body,
// loop condition or branch made by PadCallee, whose parameter's sizes come
// in beside it.
class ComputationPadder {
 public:
  explicit ComputationPadder(HloComputation* computation) : computation_(computation) {}

  // The entry: parameters, instructions, then the root (result, sizes,
  // checks).
  absl::Status RunEntry();
  // Every instruction, in post order (sizes of parameters set beforehand).
  absl::Status PadInstructions();
  const std::vector<std::string>& checks() const { return check_messages_; }
  // Two per check: the value and the limit it must not exceed.
  const std::vector<HloInstruction*>& check_values() const { return checks_; }
  // The entry parameters' shapes before the pass; empty when none was dynamic.
  const std::vector<Shape>& declared_parameters() const { return declared_parameters_; }

 private:
  Sizes& SizesOf(const HloInstruction* i) {
    Sizes& s = sizes_[i];
    if (s.empty() && i->shape().IsArray()) s.assign(i->shape().rank(), nullptr);
    return s;
  }
  // x with the elements at index >= size along `dimension` replaced by `fill`.
  HloInstruction* Mask(ExpansionBuilder& b, HloInstruction* x, int64_t dimension,
                       HloInstruction* size, HloInstruction* fill) {
    const std::vector<int64_t>& dims = x->shape().dimensions();
    HloInstruction* iota = b.Iota(xla::S32, dims, dimension);
    HloInstruction* valid = b.Compare(iota, b.Splat(size, dims), ComparisonDirection::kLt);
    return b.Select(valid, x, b.Splat(fill, dims));
  }
  HloInstruction* SizeOrBound(ExpansionBuilder& b, HloInstruction* x, int64_t d) {
    HloInstruction* s = SizesOf(x)[d];
    return s != nullptr ? s : b.IndexScalar(xla::S32, x->shape().dimensions(d));
  }
  // Whether `i` (an array or a tuple) has a runtime-sized dimension.
  bool Sized(const HloInstruction* i) const {
    if (auto it = sizes_.find(i); it != sizes_.end() && AnySize(it->second)) return true;
    auto it = leaf_sizes_.find(i);
    return it != leaf_sizes_.end() && !it->second.empty();
  }
  // The sizes of the array leaf at `path` in `value` (all null: the bound).
  Sizes SizesAt(const HloInstruction* value, const std::vector<int64_t>& path) {
    if (path.empty()) return SizesOf(value);
    if (auto it = leaf_sizes_.find(value); it != leaf_sizes_.end()) {
      if (auto leaf = it->second.find(path); leaf != it->second.end()) return leaf->second;
    }
    const Shape* shape = &value->shape();
    for (int64_t k : path) shape = &shape->tuple_shapes(k);
    return Sizes(shape->IsArray() ? shape->rank() : 0, nullptr);
  }
  // Records the sized leaves of `from` (an array or a tuple) as the element
  // `index` of the tuple-valued `to`.
  void AddElementSizes(const HloInstruction* from, int64_t index, LeafSizes* to) {
    if (from->shape().IsArray()) {
      const Sizes& s = SizesOf(from);
      if (AnySize(s)) (*to)[{index}] = s;
      return;
    }
    auto it = leaf_sizes_.find(from);
    if (it == leaf_sizes_.end()) return;
    for (const auto& [path, s] : it->second) {
      std::vector<int64_t> nested = {index};
      nested.insert(nested.end(), path.begin(), path.end());
      (*to)[nested] = s;
    }
  }
  void AddCheck(ExpansionBuilder& b, HloInstruction* value, HloInstruction* limit,
                std::string message) {
    checks_.push_back(value);
    checks_.push_back(limit);
    check_messages_.push_back(std::move(message));
    (void)b;
  }

  // The runtime size of `dim` of `value` (its bound when not tracked).
  HloInstruction* SizeAt(ExpansionBuilder& b, const HloInstruction* value, const DynamicDim& dim) {
    HloInstruction* s = SizesAt(value, dim.path)[dim.dimension];
    return s != nullptr ? s : b.IndexScalar(xla::S32, dim.bound);
  }
  // Records `sizes[j]` as the size of dims[j] of `value`.
  void SetSizes(const HloInstruction* value, const std::vector<DynamicDim>& dims,
                const std::vector<HloInstruction*>& sizes) {
    for (size_t j = 0; j < dims.size(); ++j) {
      const DynamicDim& dim = dims[j];
      Sizes* leaf;
      if (dim.path.empty()) {
        leaf = &SizesOf(value);
      } else {
        leaf = &leaf_sizes_[value][dim.path];
        if (leaf->empty()) {
          const Shape* shape = &value->shape();
          for (int64_t k : dim.path) shape = &shape->tuple_shapes(k);
          leaf->assign(shape->rank(), nullptr);
        }
      }
      (*leaf)[dim.dimension] = sizes[j];
    }
  }

  // A reduction's `sizes` as those of each of its `results` (a tuple's
  // elements when variadic, else `out`).
  void SetSizesOfEveryResult(const HloInstruction* i, int64_t results, const Sizes& sizes,
                             Sizes* out) {
    if (!i->shape().IsTuple()) {
      *out = sizes;
      return;
    }
    out->clear();
    if (!AnySize(sizes)) return;
    LeafSizes& leaves = leaf_sizes_[i];
    for (int64_t k = 0; k < results; ++k) leaves[{k}] = sizes;
  }

  // Dimension `d` of `i`'s result takes the size `size` of one of its
  // operands: `*slot` keeps the first such size; a second, different one
  // must equal it at run time (the interpreter refuses operands of
  // different runtime sizes), a check.
  void Unify(ExpansionBuilder& b, const HloInstruction& i, int64_t d, HloInstruction* size,
             HloInstruction** slot) {
    if (size == nullptr || size == *slot) return;
    if (*slot == nullptr) {
      *slot = size;
      return;
    }
    AddCheck(b, b.Binary(HloOpcode::kSubtract, *slot, size), b.IndexScalar(xla::S32, 0),
             absl::StrCat("instruction %", i.name(), " (", HloOpcodeName(i.opcode()),
                          "): operands have different runtime sizes in dimension ", d));
  }

  // Every operand's size of each dimension but `skip` where `sizes` has a
  // runtime size must equal it, a static operand's being its bound (sort
  // and concatenate take operands of one runtime shape): checks.
  void RequireEqualSizes(ExpansionBuilder& b, const HloInstruction& i, const Sizes& sizes,
                         int64_t skip = -1) {
    for (const HloInstruction* operand : i.operands()) {
      const Sizes s = SizesOf(operand);
      const int64_t rank = static_cast<int64_t>(std::min(sizes.size(), s.size()));
      for (int64_t d = 0; d < rank; ++d) {
        if (d == skip || sizes[d] == nullptr || s[d] == sizes[d]) continue;
        HloInstruction* own =
            s[d] != nullptr ? s[d] : b.IndexScalar(xla::S32, operand->shape().dimensions(d));
        AddCheck(b, b.Binary(HloOpcode::kSubtract, sizes[d], own), b.IndexScalar(xla::S32, 0),
                 absl::StrCat("instruction %", i.name(), " (", HloOpcodeName(i.opcode()),
                              "): operands have different runtime sizes in dimension ", d));
      }
    }
  }

  // Rewrites one instruction; `out` gets its result's sizes.
  absl::Status Visit(HloInstruction* i, const Shape& declared, Sizes* out);
  absl::Status VisitReduce(HloInstruction* i, Sizes* out);
  absl::Status VisitDot(HloInstruction* i, Sizes* out);
  absl::Status VisitReduceWindow(HloInstruction* i, Sizes* out);
  absl::Status VisitConvolution(HloInstruction* i, Sizes* out);
  absl::Status VisitReshape(HloInstruction* i, const Shape& declared, Sizes* out);
  absl::Status VisitSlice(HloInstruction* i, const Shape& declared, Sizes* out);
  absl::Status VisitGather(HloInstruction* i, Sizes* out);
  absl::Status VisitDynamicSlicing(HloInstruction* i, Sizes* out);
  absl::Status VisitScatter(HloInstruction* i, Sizes* out);
  absl::StatusOr<HloInstruction*> IndexLimits(ExpansionBuilder& b, const HloInstruction& i,
                                              const std::vector<HloInstruction*>& limits,
                                              const Shape& ishape, int64_t index_vector_dim);
  absl::Status ReplaceBySizedCopy(ExpansionBuilder& b, HloInstruction* i, HloInstruction* x,
                                  const Sizes& sizes);
  HloInstruction* RuntimeLimit(ExpansionBuilder& b, const HloInstruction& i, HloInstruction* x,
                               int64_t d, int64_t window, PrimitiveType index_type);
  absl::Status VisitReverse(HloInstruction* i, Sizes* out);
  absl::Status VisitDynamicCustomCall(HloInstruction* i, DynamicCustomCall call,
                                      const Shape& declared, Sizes* out);
  absl::Status VisitSort(HloInstruction* i, Sizes* out);
  absl::Status VisitTupleOps(HloInstruction* i, Sizes* out);
  absl::Status VisitWhile(HloInstruction* i, const Shape& declared);
  absl::Status VisitConditional(HloInstruction* i, const Shape& declared);
  // A padded copy of a loop's or branch's computation (one parameter): it
  // takes `parameter`, which is (the parameter at its bound, its sizes...)
  // when the parameter is dynamic or `tuple_parameter`, and `padder` holds
  // the sizes and checks made inside.
  struct PaddedCallee {
    HloComputation* computation = nullptr;
    HloInstruction* parameter = nullptr;
    std::unique_ptr<ComputationPadder> padder;
  };
  absl::StatusOr<PaddedCallee> PadCallee(ExpansionBuilder& b, const HloInstruction& caller,
                                         const HloComputation& callee, bool tuple_parameter);
  // Makes the copy return (its result, the result's sizes at `dims`...,
  // `tail`...), or its result alone when both are empty.
  absl::Status FinishCallee(PaddedCallee& callee, const std::vector<DynamicDim>& dims,
                            const std::vector<HloInstruction*>& tail);
  // `value` followed by its sizes at `dims` and `tail`, as one tuple
  // (`value` alone when there are none).
  HloInstruction* WithSizes(ExpansionBuilder& b, HloInstruction* value,
                            const std::vector<DynamicDim>& dims,
                            const std::vector<HloInstruction*>& tail = {});
  // `padded` (a while or conditional built from padded callees, returning
  // (value, sizes..., check pairs...) when `wrapped`) standing for `i` (of
  // declared shape `declared`): its value, sizes recorded, checks added.
  absl::Status ReplaceByPadded(ExpansionBuilder& b, HloInstruction* i, const Shape& declared,
                               HloInstruction* padded, bool wrapped,
                               const std::vector<std::string>& check_messages);
  absl::Status FinishRoot(const Shape& declared);
  // Each dynamic entry parameter at its bound, its sizes new trailing s32
  // parameters.
  absl::Status PadParameters();
  absl::Status AddSizeParameters(HloInstruction* p, const Shape& shape,
                                 std::vector<int64_t>* path, int64_t* next_number);

  HloComputation* computation_;
  std::vector<Shape> declared_parameters_;
  absl::flat_hash_map<const HloInstruction*, Sizes> sizes_;
  absl::flat_hash_map<const HloInstruction*, LeafSizes> leaf_sizes_;
  std::vector<HloInstruction*> checks_;
  std::vector<std::string> check_messages_;
  std::vector<HloInstruction*> dead_;
};

// kDynamicResultAttribute's text for a module whose entry result was
// `declared`, whose entry parameters were `parameters` (named `names`; empty
// when none was dynamic) and whose padded entry makes `checks`.
std::string EncodeDynamicResultContract(const Shape& declared,
                                        const std::vector<std::string>& names,
                                        const std::vector<Shape>& parameters,
                                        const std::vector<std::string>& checks);

}  // namespace dynamic_padder_internal
}  // namespace hloc

#endif  // HLOC_PASSES_DYNAMIC_PADDER_INTERNAL_H_
