// Elemental forms of the ops whose one output element needs an inner loop
// over many operand elements: reduce, reduce-window, dot and convolution
// (sum over a window of products), and gather (an index lookup per element).
// Each output element is computed on its own, accumulating in row-major order
// of the reduced / contracted / window dimensions; kernel emitters can reuse
// these generators anywhere an element of such an op is needed.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/llvm/elemental_ir_emitter.h"

namespace hloc {
namespace codegen {
namespace {

bool Contains(absl::Span<const int64_t> list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

absl::Status Malformed(const HloInstruction& hlo, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("instruction %", hlo.name(), " (",
                                                 HloOpcodeName(hlo.opcode()), "): ", what));
}

// The type products are summed in: float for f16/bf16/f32, double for f64,
// and the result type itself for integers (wrapping) and pred.
PrimitiveType AccumulationType(PrimitiveType result) {
  if (result == xla::F16 || result == xla::BF16) return xla::F32;
  return result;
}

}  // namespace

// ---------------------------------------------------------------- reduce

bool ElementalIrEmitter::SumsInDouble(const HloInstruction& reduce) {
  if (reduce.opcode() != HloOpcode::kReduce || reduce.operand_count() != 2) return false;
  const PrimitiveType type = reduce.operand(0)->shape().element_type();
  if (type != xla::F16 && type != xla::BF16 && type != xla::F32 && type != xla::F64) return false;
  const HloComputation* reducer = reduce.to_apply();
  if (reducer == nullptr || reducer->num_parameters() != 2) return false;
  const HloInstruction* root = reducer->root();
  if (root == nullptr || root->opcode() != HloOpcode::kAdd || !root->shape().IsArray() ||
      root->shape().rank() != 0 || root->shape().element_type() != type) {
    return false;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  return a->opcode() == HloOpcode::kParameter && b->opcode() == HloOpcode::kParameter &&
         a->parameter_number() != b->parameter_number() && a->shape().element_type() == type &&
         b->shape().element_type() == type;
}

llvm::Value* ElementalIrEmitter::WidenForSum(llvm::Value* value, PrimitiveType type) {
  llvm::Value* x = ToCompute(value, type);
  return type == xla::F64 ? x : b_->CreateFPExt(x, b_->getDoubleTy());
}

llvm::Value* ElementalIrEmitter::NarrowSum(llvm::Value* sum, PrimitiveType type) {
  if (type == xla::F64) return sum;
  return FromCompute(b_->CreateFPTrunc(sum, b_->getFloatTy()), type);
}

absl::StatusOr<ElementGenerator> ElementalIrEmitter::MakeReduceGenerator(
    const HloInstruction& hlo, std::vector<ElementGenerator> operands) {
  const int64_t n = hlo.operand_count() / 2;
  if (n < 1 || hlo.operand_count() != 2 * n) return Malformed(hlo, "odd operand count");
  const Shape& in = hlo.operand(0)->shape();
  for (int64_t d : hlo.dimensions()) {
    if (d < 0 || d >= in.rank()) return Malformed(hlo, "reduce dimension out of range");
  }
  return ElementGenerator([this, &hlo, operands, n](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    const Shape& in = hlo.operand(0)->shape();
    std::vector<int64_t> reduced(hlo.dimensions().begin(), hlo.dimensions().end());
    std::sort(reduced.begin(), reduced.end());
    std::vector<int64_t> sizes;
    for (int64_t d : reduced) sizes.push_back(in.dimensions(d));
    std::vector<llvm::AllocaInst*> accumulators;
    const IrIndex scalar{{}, Int64(0)};
    const bool wide = SumsInDouble(hlo);
    const PrimitiveType in_type = in.element_type();
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<llvm::Type*> type = ValueType(hlo.operand(i)->shape().element_type());
      if (!type.ok()) return type.status();
      accumulators.push_back(EntryAlloca(wide ? b_->getDoubleTy() : *type, "acc"));
      absl::StatusOr<llvm::Value*> init = operands[n + i](scalar);
      if (!init.ok()) return init.status();
      b_->CreateStore(wide ? WidenForSum(*init, in_type) : *init, accumulators.back());
    }
    absl::Status status = EmitLoopNest("reduce", sizes, [&](const std::vector<llvm::Value*>& ivs) -> absl::Status {
      IrIndex input_index;
      size_t kept = 0, r = 0;
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (r < reduced.size() && reduced[r] == d) {
          input_index.dims.push_back(ivs[r++]);
        } else {
          input_index.dims.push_back(index.dims[kept++]);
        }
      }
      std::vector<llvm::Value*> args;
      for (int64_t i = 0; i < n; ++i) {
        args.push_back(b_->CreateLoad(accumulators[i]->getAllocatedType(), accumulators[i]));
      }
      for (int64_t i = 0; i < n; ++i) {
        absl::StatusOr<llvm::Value*> v = operands[i](input_index);
        if (!v.ok()) return v.status();
        args.push_back(*v);
      }
      if (wide) {
        b_->CreateStore(b_->CreateFAdd(args[0], WidenForSum(args[1], in_type)), accumulators[0]);
        return absl::OkStatus();
      }
      absl::StatusOr<std::vector<llvm::Value*>> next = EmitScalarComputation(*hlo.to_apply(), args);
      if (!next.ok()) return next.status();
      if (static_cast<int64_t>(next->size()) != n) return Malformed(hlo, "reducer arity");
      for (int64_t i = 0; i < n; ++i) b_->CreateStore((*next)[i], accumulators[i]);
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
    if (wide) return NarrowSum(b_->CreateLoad(b_->getDoubleTy(), accumulators[0]), in_type);
    if (n == 1) return b_->CreateLoad(accumulators[0]->getAllocatedType(), accumulators[0]);
    absl::StatusOr<llvm::Type*> type = ShapeValueType(hlo.shape());
    if (!type.ok()) return type.status();
    llvm::Value* result = llvm::UndefValue::get(*type);
    for (int64_t i = 0; i < n; ++i) {
      result = b_->CreateInsertValue(
          result, b_->CreateLoad(accumulators[i]->getAllocatedType(), accumulators[i]),
          {static_cast<unsigned>(i)});
    }
    return result;
  });
}

// ---------------------------------------------------------------- reduce-window

absl::StatusOr<ElementGenerator> ElementalIrEmitter::MakeReduceWindowGenerator(
    const HloInstruction& hlo, std::vector<ElementGenerator> operands) {
  const int64_t n = hlo.operand_count() / 2;
  if (n < 1 || hlo.operand_count() != 2 * n) return Malformed(hlo, "odd operand count");
  const Shape& in = hlo.operand(0)->shape();
  if (hlo.attrs().window->dimensions_size() != in.rank()) {
    return Malformed(hlo, "window rank differs from operand rank");
  }
  return ElementGenerator([this, &hlo, operands, n](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    const Shape& in = hlo.operand(0)->shape();
    const xla::Window& window = hlo.attrs().window;
    std::vector<int64_t> sizes;
    for (const auto& d : window.dimensions()) sizes.push_back(d.size());
    std::vector<llvm::AllocaInst*> accumulators;
    const IrIndex scalar{{}, Int64(0)};
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<llvm::Type*> type = ValueType(hlo.operand(i)->shape().element_type());
      if (!type.ok()) return type.status();
      accumulators.push_back(EntryAlloca(*type, "acc"));
      absl::StatusOr<llvm::Value*> init = operands[n + i](scalar);
      if (!init.ok()) return init.status();
      b_->CreateStore(*init, accumulators.back());
    }
    absl::Status status = EmitLoopNest("window", sizes, [&](const std::vector<llvm::Value*>& ivs) -> absl::Status {
      // Window positions that land in padding or between dilated elements
      // contribute nothing.
      llvm::Value* inside = b_->getTrue();
      IrIndex input_index;
      for (int64_t d = 0; d < in.rank(); ++d) {
        const auto& w = window.dimensions(d);
        llvm::Value* pos = b_->CreateSub(
            b_->CreateAdd(b_->CreateMul(index.dims[d], Int64(w.stride())),
                          b_->CreateMul(ivs[d], Int64(std::max<int64_t>(w.window_dilation(), 1)))),
            Int64(w.padding_low()));
        const int64_t base = std::max<int64_t>(w.base_dilation(), 1);
        if (base != 1) {
          inside = b_->CreateAnd(inside, b_->CreateICmpEQ(b_->CreateSRem(pos, Int64(base)), Int64(0)));
          pos = b_->CreateSDiv(pos, Int64(base));
        }
        inside = b_->CreateAnd(inside, b_->CreateICmpSGE(pos, Int64(0)));
        inside = b_->CreateAnd(inside, b_->CreateICmpSLT(pos, Int64(in.dimensions(d))));
        input_index.dims.push_back(pos);
      }
      return EmitIf(inside, [&]() -> absl::Status {
        std::vector<llvm::Value*> args;
        for (int64_t i = 0; i < n; ++i) {
          args.push_back(b_->CreateLoad(accumulators[i]->getAllocatedType(), accumulators[i]));
        }
        for (int64_t i = 0; i < n; ++i) {
          absl::StatusOr<llvm::Value*> v = operands[i](input_index);
          if (!v.ok()) return v.status();
          args.push_back(*v);
        }
        absl::StatusOr<std::vector<llvm::Value*>> next =
            EmitScalarComputation(*hlo.to_apply(), args);
        if (!next.ok()) return next.status();
        if (static_cast<int64_t>(next->size()) != n) return Malformed(hlo, "reducer arity");
        for (int64_t i = 0; i < n; ++i) b_->CreateStore((*next)[i], accumulators[i]);
        return absl::OkStatus();
      });
    });
    if (!status.ok()) return status;
    if (n == 1) return b_->CreateLoad(accumulators[0]->getAllocatedType(), accumulators[0]);
    absl::StatusOr<llvm::Type*> type = ShapeValueType(hlo.shape());
    if (!type.ok()) return type.status();
    llvm::Value* result = llvm::UndefValue::get(*type);
    for (int64_t i = 0; i < n; ++i) {
      result = b_->CreateInsertValue(
          result, b_->CreateLoad(accumulators[i]->getAllocatedType(), accumulators[i]),
          {static_cast<unsigned>(i)});
    }
    return result;
  });
}

// ---------------------------------------------------------------- dot

absl::StatusOr<ElementGenerator> ElementalIrEmitter::MakeDotGenerator(
    const HloInstruction& hlo, std::vector<ElementGenerator> operands) {
  if (hlo.operand_count() != 2) {
    // Valid HLO (a sparse dot), just not one this emitter implements.
    return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(),
                                                 " (dot) with sparsity operands has no "
                                                 "elemental implementation"));
  }
  const xla::DotDimensionNumbers& dn = hlo.attrs().dot_dimension_numbers;
  const Shape& lhs = hlo.operand(0)->shape();
  const Shape& rhs = hlo.operand(1)->shape();
  if (dn.lhs_contracting_dimensions_size() != dn.rhs_contracting_dimensions_size() ||
      dn.lhs_batch_dimensions_size() != dn.rhs_batch_dimensions_size()) {
    return Malformed(hlo, "dimension numbers differ in length");
  }
  for (int i = 0; i < dn.lhs_contracting_dimensions_size(); ++i) {
    const int64_t l = dn.lhs_contracting_dimensions(i), r = dn.rhs_contracting_dimensions(i);
    if (l < 0 || l >= lhs.rank() || r < 0 || r >= rhs.rank() ||
        lhs.dimensions(l) != rhs.dimensions(r)) {
      return Malformed(hlo, "contracting dimensions do not match");
    }
  }
  return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    const xla::DotDimensionNumbers& dn = hlo.attrs().dot_dimension_numbers;
    const Shape& lhs = hlo.operand(0)->shape();
    const Shape& rhs = hlo.operand(1)->shape();
    const PrimitiveType out_type = hlo.shape().element_type();
    const PrimitiveType acc_type = AccumulationType(out_type);
    absl::StatusOr<llvm::Type*> acc_llvm = ValueType(acc_type);
    if (!acc_llvm.ok()) return acc_llvm.status();
    // Result dimensions: batch, lhs free, rhs free (each in ascending order).
    const int64_t nb = dn.lhs_batch_dimensions_size();
    std::vector<llvm::Value*> lhs_dims(lhs.rank(), nullptr), rhs_dims(rhs.rank(), nullptr);
    size_t pos = 0;
    for (int64_t i = 0; i < nb; ++i) {
      lhs_dims[dn.lhs_batch_dimensions(i)] = index.dims[pos];
      rhs_dims[dn.rhs_batch_dimensions(i)] = index.dims[pos];
      ++pos;
    }
    for (int64_t d = 0; d < lhs.rank(); ++d) {
      if (!Contains(dn.lhs_batch_dimensions(), d) && !Contains(dn.lhs_contracting_dimensions(), d)) {
        lhs_dims[d] = index.dims[pos++];
      }
    }
    for (int64_t d = 0; d < rhs.rank(); ++d) {
      if (!Contains(dn.rhs_batch_dimensions(), d) && !Contains(dn.rhs_contracting_dimensions(), d)) {
        rhs_dims[d] = index.dims[pos++];
      }
    }
    std::vector<int64_t> sizes;
    for (int64_t d : dn.lhs_contracting_dimensions()) sizes.push_back(lhs.dimensions(d));
    llvm::AllocaInst* acc = EntryAlloca(*acc_llvm, "dot.acc");
    absl::StatusOr<llvm::Value*> zero = ConstantOf(acc_type, 0);
    if (!zero.ok()) return zero.status();
    b_->CreateStore(*zero, acc);
    absl::Status status = EmitLoopNest("dot", sizes, [&](const std::vector<llvm::Value*>& ivs) -> absl::Status {
      IrIndex li{lhs_dims, nullptr}, ri{rhs_dims, nullptr};
      for (size_t k = 0; k < ivs.size(); ++k) {
        li.dims[dn.lhs_contracting_dimensions(k)] = ivs[k];
        ri.dims[dn.rhs_contracting_dimensions(k)] = ivs[k];
      }
      return EmitMultiplyAccumulate(operands[0], li, lhs.element_type(), operands[1], ri,
                                    rhs.element_type(), acc_type, *acc_llvm, acc);
    });
    if (!status.ok()) return status;
    return EmitConvert(acc_type, out_type, b_->CreateLoad(*acc_llvm, acc));
  });
}

absl::Status ElementalIrEmitter::EmitMultiplyAccumulate(
    const ElementGenerator& lhs, const IrIndex& li, PrimitiveType lhs_type,
    const ElementGenerator& rhs, const IrIndex& ri, PrimitiveType rhs_type,
    PrimitiveType acc_type, llvm::Type* acc_llvm, llvm::Value* acc) {
  absl::StatusOr<llvm::Value*> a = lhs(li);
  if (!a.ok()) return a.status();
  absl::StatusOr<llvm::Value*> c = rhs(ri);
  if (!c.ok()) return c.status();
  absl::StatusOr<llvm::Value*> x = EmitConvert(lhs_type, acc_type, *a);
  if (!x.ok()) return x.status();
  absl::StatusOr<llvm::Value*> y = EmitConvert(rhs_type, acc_type, *c);
  if (!y.ok()) return y.status();
  llvm::Value* sum = b_->CreateLoad(acc_llvm, acc);
  llvm::Value* next;
  if (acc_type == xla::PRED) {
    next = b_->CreateOr(sum, b_->CreateAnd(*x, *y));
  } else if (IsComplex(acc_type)) {
    next = ComplexMultiplyAdd(sum, *x, *y);
  } else if (acc_llvm->isFloatingPointTy()) {
    next = b_->CreateFAdd(sum, b_->CreateFMul(*x, *y));
  } else {
    next = b_->CreateAdd(sum, b_->CreateMul(*x, *y));
  }
  b_->CreateStore(next, acc);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- convolution

absl::StatusOr<ElementGenerator> ElementalIrEmitter::MakeConvolutionGenerator(
    const HloInstruction& hlo, std::vector<ElementGenerator> operands) {
  const xla::ConvolutionDimensionNumbers& dn = hlo.attrs().convolution_dimension_numbers;
  const Shape& input = hlo.operand(0)->shape();
  const Shape& kernel = hlo.operand(1)->shape();
  const int64_t spatial = dn.input_spatial_dimensions_size();
  if (dn.kernel_spatial_dimensions_size() != spatial ||
      dn.output_spatial_dimensions_size() != spatial ||
      hlo.attrs().window->dimensions_size() != spatial || input.rank() != spatial + 2 ||
      kernel.rank() != spatial + 2) {
    return Malformed(hlo, "convolution ranks do not match the dimension numbers");
  }
  const int64_t groups = hlo.attrs().feature_group_count;
  const int64_t batch_groups = hlo.attrs().batch_group_count;
  if (groups < 1 || batch_groups < 1) return Malformed(hlo, "group counts must be positive");
  const int64_t in_features = input.dimensions(dn.input_feature_dimension());
  const int64_t kernel_in_features = kernel.dimensions(dn.kernel_input_feature_dimension());
  if (in_features != kernel_in_features * groups) {
    return Malformed(hlo, "input features are not kernel input features times feature_group_count");
  }
  return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    const xla::ConvolutionDimensionNumbers& dn = hlo.attrs().convolution_dimension_numbers;
    const xla::Window& window = hlo.attrs().window;
    const Shape& input = hlo.operand(0)->shape();
    const Shape& kernel = hlo.operand(1)->shape();
    const int64_t spatial = dn.input_spatial_dimensions_size();
    const int64_t groups = hlo.attrs().feature_group_count;
    const int64_t batch_groups = hlo.attrs().batch_group_count;
    const int64_t kernel_in_features = kernel.dimensions(dn.kernel_input_feature_dimension());
    const int64_t out_features = hlo.shape().dimensions(dn.output_feature_dimension());
    const int64_t out_batch = hlo.shape().dimensions(dn.output_batch_dimension());
    const PrimitiveType out_type = hlo.shape().element_type();
    const PrimitiveType acc_type = AccumulationType(out_type);
    absl::StatusOr<llvm::Type*> acc_llvm = ValueType(acc_type);
    if (!acc_llvm.ok()) return acc_llvm.status();

    llvm::Value* batch = index.dims[dn.output_batch_dimension()];
    llvm::Value* feature = index.dims[dn.output_feature_dimension()];
    // Feature groups: output feature f reads input features of group
    // f / (out_features / groups). Batch groups: it reads input batch
    // (f / (out_features / batch_groups)) * out_batch + b.
    llvm::Value* feature_base = Int64(0);
    if (groups > 1) {
      llvm::Value* group = b_->CreateUDiv(feature, Int64(out_features / groups));
      feature_base = b_->CreateMul(group, Int64(kernel_in_features));
    }
    llvm::Value* input_batch = batch;
    if (batch_groups > 1) {
      llvm::Value* group = b_->CreateUDiv(feature, Int64(out_features / batch_groups));
      input_batch = b_->CreateAdd(b_->CreateMul(group, Int64(out_batch)), batch);
    }
    std::vector<int64_t> sizes;
    for (int64_t s = 0; s < spatial; ++s) sizes.push_back(kernel.dimensions(dn.kernel_spatial_dimensions(s)));
    sizes.push_back(kernel_in_features);
    llvm::AllocaInst* acc = EntryAlloca(*acc_llvm, "conv.acc");
    absl::StatusOr<llvm::Value*> zero = ConstantOf(acc_type, 0);
    if (!zero.ok()) return zero.status();
    b_->CreateStore(*zero, acc);
    absl::Status status = EmitLoopNest("conv", sizes, [&](const std::vector<llvm::Value*>& ivs) -> absl::Status {
      IrIndex in_index, k_index;
      in_index.dims.assign(input.rank(), nullptr);
      k_index.dims.assign(kernel.rank(), nullptr);
      in_index.dims[dn.input_batch_dimension()] = input_batch;
      in_index.dims[dn.input_feature_dimension()] = b_->CreateAdd(feature_base, ivs[spatial]);
      k_index.dims[dn.kernel_input_feature_dimension()] = ivs[spatial];
      k_index.dims[dn.kernel_output_feature_dimension()] = feature;
      llvm::Value* inside = b_->getTrue();
      for (int64_t s = 0; s < spatial; ++s) {
        const auto& w = window.dimensions(s);
        const int64_t ksize = kernel.dimensions(dn.kernel_spatial_dimensions(s));
        llvm::Value* k = ivs[s];
        k_index.dims[dn.kernel_spatial_dimensions(s)] =
            w.window_reversal() ? b_->CreateSub(Int64(ksize - 1), k) : k;
        llvm::Value* pos = b_->CreateSub(
            b_->CreateAdd(b_->CreateMul(index.dims[dn.output_spatial_dimensions(s)], Int64(std::max<int64_t>(w.stride(), 1))),
                          b_->CreateMul(k, Int64(std::max<int64_t>(w.window_dilation(), 1)))),
            Int64(w.padding_low()));
        const int64_t base = std::max<int64_t>(w.base_dilation(), 1);
        if (base != 1) {
          inside = b_->CreateAnd(inside, b_->CreateICmpEQ(b_->CreateSRem(pos, Int64(base)), Int64(0)));
          pos = b_->CreateSDiv(pos, Int64(base));
        }
        inside = b_->CreateAnd(inside, b_->CreateICmpSGE(pos, Int64(0)));
        inside = b_->CreateAnd(inside, b_->CreateICmpSLT(pos, Int64(input.dimensions(dn.input_spatial_dimensions(s)))));
        in_index.dims[dn.input_spatial_dimensions(s)] = pos;
      }
      return EmitIf(inside, [&]() -> absl::Status {
        return EmitMultiplyAccumulate(operands[0], in_index, input.element_type(), operands[1],
                                      k_index, kernel.element_type(), acc_type, *acc_llvm, acc);
      });
    });
    if (!status.ok()) return status;
    return EmitConvert(acc_type, out_type, b_->CreateLoad(*acc_llvm, acc));
  });
}

// ---------------------------------------------------------------- gather

absl::StatusOr<ElementGenerator> ElementalIrEmitter::MakeGatherGenerator(
    const HloInstruction& hlo, std::vector<ElementGenerator> operands) {
  const xla::GatherDimensionNumbers& dn = hlo.attrs().gather_dimension_numbers;
  const Shape& operand = hlo.operand(0)->shape();
  const Shape& indices = hlo.operand(1)->shape();
  const std::vector<int64_t>& slice_sizes = hlo.attrs().gather_slice_sizes;
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) {
    return Malformed(hlo, "slice_sizes rank differs from operand rank");
  }
  const int64_t vector_dim = dn.index_vector_dim();
  if (vector_dim < 0 || vector_dim > indices.rank()) return Malformed(hlo, "index_vector_dim");
  const int64_t length = vector_dim < indices.rank() ? indices.dimensions(vector_dim) : 1;
  if (length != dn.start_index_map_size()) return Malformed(hlo, "start_index_map length");
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.dimensions(d)) {
      return Malformed(hlo, "slice size out of range");
    }
  }
  for (int64_t d : dn.start_index_map()) {
    if (d < 0 || d >= operand.rank()) return Malformed(hlo, "start_index_map entry out of range");
  }
  return ElementGenerator([this, &hlo, operands](const IrIndex& index) -> absl::StatusOr<llvm::Value*> {
    const xla::GatherDimensionNumbers& dn = hlo.attrs().gather_dimension_numbers;
    const Shape& operand = hlo.operand(0)->shape();
    const Shape& indices = hlo.operand(1)->shape();
    const std::vector<int64_t>& slice_sizes = hlo.attrs().gather_slice_sizes;
    const int64_t vector_dim = dn.index_vector_dim();
    const int64_t out_rank = hlo.shape().rank();
    // Batch positions: result dims that are not offset dims, matched in order
    // with the indices' dims other than index_vector_dim.
    std::vector<llvm::Value*> batch;
    for (int64_t d = 0; d < out_rank; ++d) {
      if (!Contains(dn.offset_dims(), d)) batch.push_back(index.dims[d]);
    }
    std::vector<int64_t> index_batch_dims;
    for (int64_t d = 0; d < indices.rank(); ++d) {
      if (d != vector_dim) index_batch_dims.push_back(d);
    }
    if (batch.size() != index_batch_dims.size()) {
      return Malformed(hlo, "result batch rank does not match the indices");
    }
    std::vector<llvm::Value*> start(operand.rank(), Int64(0));
    for (int64_t k = 0; k < dn.start_index_map_size(); ++k) {
      IrIndex at;
      at.dims.assign(indices.rank(), nullptr);
      for (size_t j = 0; j < index_batch_dims.size(); ++j) at.dims[index_batch_dims[j]] = batch[j];
      if (vector_dim < indices.rank()) at.dims[vector_dim] = Int64(k);
      absl::StatusOr<llvm::Value*> v =
          LoadIndexScalar(operands[1], indices.element_type(), at);
      if (!v.ok()) return v.status();
      start[dn.start_index_map(k)] = *v;
    }
    for (int64_t i = 0; i < dn.operand_batching_dims_size(); ++i) {
      const int64_t index_dim = dn.start_indices_batching_dims(i);
      auto it = std::find(index_batch_dims.begin(), index_batch_dims.end(), index_dim);
      if (it == index_batch_dims.end()) return Malformed(hlo, "bad batching dimension");
      start[dn.operand_batching_dims(i)] = batch[it - index_batch_dims.begin()];
    }
    IrIndex operand_index;
    size_t offset = 0;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      llvm::Value* hi = Int64(operand.dimensions(d) - slice_sizes[d]);
      llvm::Value* s = b_->CreateSelect(b_->CreateICmpSLT(start[d], Int64(0)), Int64(0), start[d]);
      s = b_->CreateSelect(b_->CreateICmpSGT(s, hi), hi, s);
      if (!Contains(dn.collapsed_slice_dims(), d) && !Contains(dn.operand_batching_dims(), d)) {
        if (offset >= static_cast<size_t>(dn.offset_dims_size())) {
          return Malformed(hlo, "offset_dims does not match the uncollapsed slice dimensions");
        }
        s = b_->CreateAdd(s, index.dims[dn.offset_dims(offset++)]);
      }
      operand_index.dims.push_back(s);
    }
    return operands[0](operand_index);
  });
}

}  // namespace codegen
}  // namespace hloc
