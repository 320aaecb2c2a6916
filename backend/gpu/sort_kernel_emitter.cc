// Sort and top-k kernels (see gpu_kernel_emitter.h): one thread block per
// row (all indices but the sorted dimension; blocks stride over rows). The
// block sorts a permutation of the row's positions, padded to a power of two
// P, with a bitonic network: log2(P) * (log2(P) + 1) / 2 stages of P/2
// compare-exchanges, a barrier after each. Positions past the row's end
// order after every real element. Elements are read from the inputs at the
// positions being compared; the comparator computation (sort) or the total
// order of the element type (topk) decides, and equal elements order by
// position, so the result is the stable order the interpreter produces.
// Finally every output element is copied from its input at the sorted
// position (topk: the first k, and the positions as indices).
//
// The permutation lives in shared memory when P s32 positions fit
// ("sort-shared"), else in a scratch buffer, P per block ("sort-global":
// slower, but any length). When the row's elements fit in shared memory
// beside the positions, they are read into it once and every comparison
// reads them there ("sort-shared-cached"); otherwise comparisons read the
// inputs (through the cache) at the compared positions.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "backend/gpu/gpu_kernel_emitter.h"
#include "backend/gpu/nvptx_ir.h"
#include "backend/llvm/array_leaves.h"

namespace hloc {
namespace gpu {
namespace {

constexpr int64_t kMaxSharedPositions = 8192;  // 32 KiB of s32.
constexpr int64_t kMaxGlobalBlocks = 256;      // Scratch: P positions per block.
constexpr int64_t kMaxScratchBytes = int64_t{256} << 20;
constexpr int64_t kMaxSharedBytes = 40 * 1024;  // Positions and cached elements.

bool IsTopK(const HloInstruction& hlo) {
  return hlo.opcode() == HloOpcode::kTopK ||
         (hlo.opcode() == HloOpcode::kCustomCall && hlo.attrs().custom_call_target == "TopK");
}

absl::Status Unimplemented(const HloInstruction& hlo, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(), " (",
                                               HloOpcodeName(hlo.opcode()),
                                               "): no GPU sort kernel: ", why));
}

// A signed integer whose order is the element type's total order (floats:
// -NaN < -inf < ... < -0 < +0 < ... < inf < NaN), and whether to compare it
// unsigned.
llvm::Value* OrderKey(llvm::IRBuilder<>& b, llvm::Value* value, PrimitiveType type,
                      bool* is_unsigned) {
  *is_unsigned = false;
  switch (type) {
    case xla::F16:
    case xla::BF16:
    case xla::F32:
    case xla::F64: {
      const unsigned bits = type == xla::F64 ? 64 : type == xla::F32 ? 32 : 16;
      llvm::Type* int_type = b.getIntNTy(bits);
      llvm::Value* v = value->getType()->isIntegerTy() ? value : b.CreateBitCast(value, int_type);
      llvm::Value* flipped = b.CreateXor(v, llvm::ConstantInt::get(int_type, llvm::APInt::getSignedMaxValue(bits)));
      return b.CreateSelect(b.CreateICmpSLT(v, llvm::ConstantInt::get(int_type, 0)), flipped, v);
    }
    case xla::PRED:
    case xla::U8:
    case xla::U16:
    case xla::U32:
    case xla::U64:
      *is_unsigned = true;
      return value;
    default:
      return value;
  }
}

}  // namespace

absl::StatusOr<std::optional<EmittedGpuKernel>> TryEmitSortKernel(
    const HloComputation& computation, const std::string& name, llvm::Module* module,
    const codegen::MathLowering* math, const GpuTarget& target) {
  const HloInstruction& op = *computation.root();
  const bool topk = IsTopK(op);
  if (op.opcode() != HloOpcode::kSort && !topk) return std::optional<EmittedGpuKernel>();
  if (op.operand_count() < 1) return Unimplemented(op, "no operands");
  std::vector<const Shape*> buffer_shapes;
  for (const HloInstruction* operand : op.operands()) {
    if (operand->opcode() != HloOpcode::kParameter || !operand->shape().IsArray()) {
      return Unimplemented(op, "operands must be array parameters (a one-op computation)");
    }
    if (!operand->shape().SameDimensions(op.operand(0)->shape())) {
      return Unimplemented(op, "operands differ in shape");
    }
    buffer_shapes.push_back(&operand->shape());
  }
  if (computation.num_parameters() != op.operand_count()) {
    return Unimplemented(op, "parameters are not the operands");
  }
  for (int64_t i = 0; i < op.operand_count(); ++i) {
    if (op.operand(i)->parameter_number() != i) {
      return Unimplemented(op, "parameters are not the operands in order");
    }
  }
  const Shape& shape = op.operand(0)->shape();
  const int64_t rank = shape.rank();
  int64_t dim = rank - 1, k = 0;
  bool largest = true;
  std::vector<const Shape*> outputs;
  if (topk) {
    if (op.operand_count() != 1 || !op.shape().IsTuple() || op.shape().tuple_shapes_size() != 2 ||
        rank < 1) {
      return Unimplemented(op, "topk takes one operand of rank >= 1 and returns two arrays");
    }
    const Shape& values = op.shape().tuple_shapes(0);
    const Shape& indices = op.shape().tuple_shapes(1);
    if (!values.IsArray() || !indices.IsArray() || values.rank() != rank ||
        values.element_type() != shape.element_type() ||
        !IsInteger(indices.element_type()) || ElementCount(indices) != ElementCount(values)) {
      return Unimplemented(op, "unexpected topk result shapes");
    }
    k = values.dimensions(rank - 1);
    if (op.opcode() == HloOpcode::kTopK) largest = op.attrs().largest;
    if (k < 0 || k > shape.dimensions(rank - 1)) return Unimplemented(op, "k out of range");
    for (int64_t d = 0; d + 1 < rank; ++d) {
      if (values.dimensions(d) != shape.dimensions(d)) return Unimplemented(op, "batch dims differ");
    }
    outputs = {&values, &indices};
  } else {
    if (op.dimensions().size() != 1 || op.to_apply() == nullptr) {
      return Unimplemented(op, "sort needs one dimension and a comparator");
    }
    dim = op.dimensions(0);
    if (dim < 0 || dim >= rank) return Unimplemented(op, "sort dimension out of range");
    for (const ArrayLeaf& leaf : ArrayLeaves(op.shape())) outputs.push_back(leaf.shape);
    if (static_cast<int64_t>(outputs.size()) != op.operand_count()) {
      return Unimplemented(op, "sort results do not match its operands");
    }
  }
  const int64_t n = shape.dimensions(dim);
  if (n > (int64_t{1} << 28)) return Unimplemented(op, "rows longer than 2^28");
  int64_t stride = 1;
  for (int64_t d = dim + 1; d < rank; ++d) stride *= shape.dimensions(d);
  const int64_t rows = n == 0 ? 0 : ElementCount(shape) / n;
  int64_t padded = 1;
  while (padded < n) padded *= 2;
  const bool shared = padded <= kMaxSharedPositions;
  const int64_t threads = std::min<int64_t>(target.max_threads_per_block >= 1024 ? 1024 : 256,
                                            std::max<int64_t>(32, padded / 2));
  // Global: at most kMaxScratchBytes of positions unless one row needs more.
  const int64_t global_blocks =
      std::clamp<int64_t>(kMaxScratchBytes / (padded * 4), 1, kMaxGlobalBlocks);
  const int64_t blocks =
      rows == 0 ? 0 : std::min<int64_t>(rows, shared ? (int64_t{1} << 20) : global_blocks);

  for (const Shape* output : outputs) buffer_shapes.push_back(output);
  const int64_t num_inputs = op.operand_count();
  llvm::Function* kernel =
      CreateKernelFunction(module, name, buffer_shapes, num_inputs, /*outputs_read=*/false,
                           /*scratch=*/!shared && blocks > 0);
  llvm::LLVMContext& context = module->getContext();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", kernel));
  codegen::ElementalIrEmitter e(&b, module, math);

  EmittedGpuKernel result;
  result.strategy = absl::StrCat(topk ? "topk-" : "sort-", shared ? "shared" : "global");
  result.num_buffers = static_cast<int64_t>(kernel->arg_size());
  result.num_inputs = num_inputs;
  result.launch.grid[0] = blocks;
  result.launch.block[0] = threads;
  if (blocks == 0) {
    b.CreateRetVoid();
    AnnotateKernel(kernel, result.launch);
    return std::optional<EmittedGpuKernel>(result);
  }
  if (!shared) result.scratch_bytes = blocks * padded * 4;

  std::vector<llvm::Type*> value_types;
  for (int64_t i = 0; i < num_inputs; ++i) {
    absl::StatusOr<llvm::Type*> t = e.ValueType(op.operand(i)->shape().element_type());
    if (!t.ok()) return t.status();
    value_types.push_back(*t);
  }
  for (const Shape* output : outputs) {
    absl::StatusOr<llvm::Type*> t = e.ValueType(output->element_type());
    if (!t.ok()) return t.status();
  }

  llvm::Type* i32 = b.getInt32Ty();
  auto c32 = [&](int64_t v) { return llvm::ConstantInt::get(i32, v); };
  llvm::Value* tid = ReadSpecialRegister(b, SpecialRegister::kThreadIdX);
  llvm::Value* bid = ToIndex(b, ReadSpecialRegister(b, SpecialRegister::kBlockIdX));
  llvm::Value* positions = nullptr;  // i32 array of `padded` entries.
  if (shared) {
    positions = AddSharedArray(module, i32, padded, absl::StrCat(name, "_positions"));
  } else {
    positions = b.CreateInBoundsGEP(i32, kernel->getArg(kernel->arg_size() - 1),
                                    b.CreateMul(bid, e.Int64(padded)), "positions");
  }
  // With room for them, the row's elements are cached in shared memory too
  // (by position), so comparisons read no global memory.
  std::vector<llvm::Value*> cached;
  if (shared) {
    int64_t bytes = padded * 4;
    for (int64_t i = 0; i < num_inputs; ++i) {
      bytes += padded * std::max(1, ByteWidth(op.operand(i)->shape().element_type()));
    }
    if (bytes <= kMaxSharedBytes) {
      for (int64_t i = 0; i < num_inputs; ++i) {
        cached.push_back(
            AddSharedArray(module, value_types[i], padded, absl::StrCat(name, "_values", i)));
      }
      result.strategy = absl::StrCat(topk ? "topk-" : "sort-", "shared-cached");
    }
  }
  auto position_at = [&](llvm::Value* i) { return b.CreateInBoundsGEP(i32, positions, ToIndex(b, i)); };
  int log_padded = 0;
  while ((int64_t{1} << log_padded) < padded) ++log_padded;

  absl::Status status = EmitStridedLoop(
      e, "row", bid, e.Int64(rows), e.Int64(blocks), [&](llvm::Value* row) -> absl::Status {
        llvm::Value* outer = b.CreateUDiv(row, e.Int64(stride));
        llvm::Value* inner = b.CreateURem(row, e.Int64(stride));
        llvm::Value* base =
            b.CreateAdd(b.CreateMul(outer, e.Int64(stride * n)), inner, "row_base");
        auto global_element = [&](int64_t operand, llvm::Value* position) {
          llvm::Value* linear =
              b.CreateAdd(base, b.CreateMul(ToIndex(b, position), e.Int64(stride)));
          return e.EmitArrayLoad(kernel->getArg(operand), op.operand(operand)->shape(),
                                 codegen::IrIndex{{}, linear});
        };
        auto element = [&](int64_t operand, llvm::Value* position) -> absl::StatusOr<llvm::Value*> {
          if (cached.empty()) return global_element(operand, position);
          llvm::Type* type = value_types[operand];
          return static_cast<llvm::Value*>(b.CreateLoad(
              type, b.CreateInBoundsGEP(type, cached[operand], ToIndex(b, position))));
        };
        // x strictly before y: the comparator (or the element order) says
        // so, or neither is before the other and x comes first in the row.
        auto before = [&](llvm::Value* x, llvm::Value* y) -> absl::StatusOr<llvm::Value*> {
          auto less = [&](llvm::Value* p, llvm::Value* q) -> absl::StatusOr<llvm::Value*> {
            if (topk) {
              absl::StatusOr<llvm::Value*> vp = element(0, p);
              if (!vp.ok()) return vp.status();
              absl::StatusOr<llvm::Value*> vq = element(0, q);
              if (!vq.ok()) return vq.status();
              bool is_unsigned = false;
              llvm::Value* kp = OrderKey(b, *vp, shape.element_type(), &is_unsigned);
              llvm::Value* kq = OrderKey(b, *vq, shape.element_type(), &is_unsigned);
              if (largest) std::swap(kp, kq);
              return is_unsigned ? b.CreateICmpULT(kp, kq) : b.CreateICmpSLT(kp, kq);
            }
            std::vector<llvm::Value*> args;
            for (int64_t i = 0; i < num_inputs; ++i) {
              absl::StatusOr<llvm::Value*> vp = element(i, p);
              if (!vp.ok()) return vp.status();
              absl::StatusOr<llvm::Value*> vq = element(i, q);
              if (!vq.ok()) return vq.status();
              args.push_back(*vp);
              args.push_back(*vq);
            }
            absl::StatusOr<std::vector<llvm::Value*>> r = e.EmitScalarComputation(*op.to_apply(), args);
            if (!r.ok()) return r.status();
            if (r->size() != 1 || !(*r)[0]->getType()->isIntegerTy()) {
              return Unimplemented(op, "the comparator does not return a pred");
            }
            return b.CreateICmpNE((*r)[0], llvm::ConstantInt::get((*r)[0]->getType(), 0));
          };
          llvm::Value* x_real = b.CreateICmpSLT(x, c32(n));
          llvm::Value* y_real = b.CreateICmpSLT(y, c32(n));
          return e.EmitIfThenElse(
              b.CreateAnd(x_real, y_real),
              [&]() -> absl::StatusOr<llvm::Value*> {
                absl::StatusOr<llvm::Value*> xy = less(x, y);
                if (!xy.ok()) return xy;
                return e.EmitIfThenElse(
                    *xy, [&]() -> absl::StatusOr<llvm::Value*> { return b.getTrue(); },
                    [&]() -> absl::StatusOr<llvm::Value*> {
                      absl::StatusOr<llvm::Value*> yx = less(y, x);
                      if (!yx.ok()) return yx;
                      return b.CreateAnd(b.CreateNot(*yx), b.CreateICmpSLT(x, y));
                    });
              },
              // Padding sorts last: x is before y when only x is real.
              [&]() -> absl::StatusOr<llvm::Value*> { return x_real; });
        };

        absl::Status s = EmitStridedLoop(
            e, "init", tid, c32(padded), c32(threads), [&](llvm::Value* i) -> absl::Status {
              b.CreateStore(i, position_at(i));
              if (cached.empty()) return absl::OkStatus();
              // The row's elements, read once, coalesced when stride is 1.
              return e.EmitIf(b.CreateICmpSLT(i, c32(n)), [&]() -> absl::Status {
                for (int64_t operand = 0; operand < num_inputs; ++operand) {
                  absl::StatusOr<llvm::Value*> v = global_element(operand, i);
                  if (!v.ok()) return v.status();
                  llvm::Type* type = value_types[operand];
                  b.CreateStore(*v, b.CreateInBoundsGEP(type, cached[operand], ToIndex(b, i)));
                }
                return absl::OkStatus();
              });
            });
        if (!s.ok()) return s;
        EmitBarrier(b);
        // Stage (k, j) for k = 2^kl, j = 2^jl, kl = 1..log2(P), jl = kl-1..0.
        s = e.EmitLoop("merge", e.Int64(1), e.Int64(log_padded + 1), [&](llvm::Value* kl64) {
          llvm::Value* kl = b.CreateTrunc(kl64, i32);
          return e.EmitLoop("step", e.Int64(0), kl64, [&](llvm::Value* t64) -> absl::Status {
            llvm::Value* jl = b.CreateSub(b.CreateSub(kl, c32(1)), b.CreateTrunc(t64, i32));
            llvm::Value* j = b.CreateShl(c32(1), jl);
            llvm::Value* kk = b.CreateShl(c32(1), kl);
            absl::Status pairs = EmitStridedLoop(
                e, "pair", tid, c32(padded / 2), c32(threads), [&](llvm::Value* p) -> absl::Status {
                  llvm::Value* i = b.CreateOr(b.CreateShl(b.CreateLShr(p, jl), b.CreateAdd(jl, c32(1))),
                                              b.CreateAnd(p, b.CreateSub(j, c32(1))));
                  llvm::Value* l = b.CreateOr(i, j);
                  llvm::Value* at_i = position_at(i);
                  llvm::Value* at_l = position_at(l);
                  llvm::Value* pi = b.CreateLoad(i32, at_i);
                  llvm::Value* pl = b.CreateLoad(i32, at_l);
                  llvm::Value* ascending = b.CreateICmpEQ(b.CreateAnd(i, kk), c32(0));
                  // Ascending pairs swap when l's element belongs before i's.
                  llvm::Value* x = b.CreateSelect(ascending, pl, pi);
                  llvm::Value* y = b.CreateSelect(ascending, pi, pl);
                  absl::StatusOr<llvm::Value*> swap = before(x, y);
                  if (!swap.ok()) return swap.status();
                  return e.EmitIf(*swap, [&]() -> absl::Status {
                    b.CreateStore(pl, at_i);
                    b.CreateStore(pi, at_l);
                    return absl::OkStatus();
                  });
                });
            if (!pairs.ok()) return pairs;
            EmitBarrier(b);
            return absl::OkStatus();
          });
        });
        if (!s.ok()) return s;
        // Outputs from the sorted positions.
        s = EmitStridedLoop(
            e, "out", tid, c32(topk ? k : n), c32(threads), [&](llvm::Value* jv) -> absl::Status {
              llvm::Value* position = b.CreateLoad(i32, position_at(jv));
              if (topk) {
                llvm::Value* at = b.CreateAdd(b.CreateMul(row, e.Int64(k)), ToIndex(b, jv));
                absl::StatusOr<llvm::Value*> v = element(0, position);
                if (!v.ok()) return v.status();
                absl::Status st = e.EmitArrayStore(kernel->getArg(num_inputs), *outputs[0],
                                                   codegen::IrIndex{{}, at}, *v);
                if (!st.ok()) return st;
                absl::StatusOr<llvm::Type*> index_type = e.ValueType(outputs[1]->element_type());
                if (!index_type.ok()) return index_type.status();
                llvm::Value* index = b.CreateSExtOrTrunc(position, *index_type);
                return e.EmitArrayStore(kernel->getArg(num_inputs + 1), *outputs[1],
                                        codegen::IrIndex{{}, at}, index);
              }
              llvm::Value* at = b.CreateAdd(base, b.CreateMul(ToIndex(b, jv), e.Int64(stride)));
              for (int64_t i = 0; i < num_inputs; ++i) {
                absl::StatusOr<llvm::Value*> v = element(i, position);
                if (!v.ok()) return v.status();
                absl::Status st = e.EmitArrayStore(kernel->getArg(num_inputs + i), *outputs[i],
                                                   codegen::IrIndex{{}, at}, *v);
                if (!st.ok()) return st;
              }
              return absl::OkStatus();
            });
        if (!s.ok()) return s;
        // The next row reuses the positions.
        EmitBarrier(b);
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  b.CreateRetVoid();
  AnnotateKernel(kernel, result.launch);
  return std::optional<EmittedGpuKernel>(result);
}

}  // namespace gpu
}  // namespace hloc
