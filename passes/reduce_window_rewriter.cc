#include "passes/reduce_window_rewriter.h"

#include <cstdint>
#include <optional>
#include <vector>

#include "hlo/status_macros.h"
#include "passes/expanders/expansion_builder.h"

namespace hloc {
namespace {

using expanders::ExpansionBuilder;

// What one window dimension becomes.
struct Tiling {
  int64_t padded = 0;   // the dimension's size after the window's padding
  int64_t windows = 0;  // the result's size along it
  int64_t size = 1;     // elements per window (1: a strided pick)
  int64_t stride = 1;
  // One past the last padded element a window reads: the slice's limit.
  int64_t limit() const { return (windows - 1) * stride + size; }
};

// The tiling of every dimension of `rw`, or nothing when some windows
// overlap, dilate, reverse or pad negatively, or a shape is dynamic or empty.
std::optional<std::vector<Tiling>> NonOverlappingTiling(const HloInstruction& rw) {
  if (rw.opcode() != HloOpcode::kReduceWindow || rw.to_apply() == nullptr ||
      rw.operand_count() < 2 || rw.operand_count() % 2 != 0 ||
      !rw.control_predecessors().empty() || !rw.control_successors().empty()) {
    return std::nullopt;
  }
  const int64_t inputs = rw.operand_count() / 2;
  const Shape& x = rw.operand(0)->shape();
  for (int64_t k = 0; k < inputs; ++k) {
    const Shape& input = rw.operand(k)->shape();
    if (!input.IsArray() || !input.is_static() || !input.SameDimensions(x)) return std::nullopt;
  }
  if (x.element_count() == 0) return std::nullopt;
  const xla::Window& window = rw.attrs().window;
  if (window.dimensions_size() != x.rank()) return std::nullopt;
  std::vector<Tiling> tiling(x.rank());
  for (int64_t d = 0; d < x.rank(); ++d) {
    const xla::WindowDimension& w = window.dimensions(d);
    if (w.size() < 1 || w.stride() < 1 || w.padding_low() < 0 || w.padding_high() < 0 ||
        w.base_dilation() > 1) {
      return std::nullopt;
    }
    if (w.size() > 1 && (w.stride() != w.size() || w.window_dilation() > 1 ||
                         w.window_reversal())) {
      return std::nullopt;
    }
    Tiling& t = tiling[d];
    t.padded = x.dimensions(d) + w.padding_low() + w.padding_high();
    if (t.padded < w.size()) return std::nullopt;
    t.windows = (t.padded - w.size()) / w.stride() + 1;
    t.size = w.size();
    t.stride = w.stride();
  }
  return tiling;
}

absl::Status Rewrite(HloInstruction* rw, const std::vector<Tiling>& tiling) {
  const int64_t inputs = rw->operand_count() / 2;
  const xla::Window& window = rw->attrs().window;
  const int64_t rank = static_cast<int64_t>(tiling.size());
  bool padded = false, sliced = false;
  std::vector<int64_t> split_dims, reduced;
  for (int64_t d = 0; d < rank; ++d) {
    const Tiling& t = tiling[d];
    padded |= window.dimensions(d).padding_low() > 0 || window.dimensions(d).padding_high() > 0;
    sliced |= t.limit() != t.padded || (t.size == 1 && t.stride > 1);
    split_dims.push_back(t.windows);
    if (t.size > 1) {
      reduced.push_back(static_cast<int64_t>(split_dims.size()));
      split_dims.push_back(t.size);
    }
  }
  ExpansionBuilder b(rw->parent(), rw);
  std::vector<HloInstruction*> operands;
  for (int64_t k = 0; k < inputs; ++k) {
    HloInstruction* value = rw->operand(k);
    HloInstruction* init = rw->operand(inputs + k);
    if (padded) {
      xla::PaddingConfig config;
      for (int64_t d = 0; d < rank; ++d) {
        xla::PaddingConfig::PaddingConfigDimension* p = config.add_dimensions();
        p->set_edge_padding_low(window.dimensions(d).padding_low());
        p->set_edge_padding_high(window.dimensions(d).padding_high());
      }
      value = b.Build(HloOpcode::kPad, {value, init}, [&](HloInstruction& pad) {
        pad.mutable_attrs()->padding_config = config;
      });
    }
    if (sliced) {
      value = b.Build(HloOpcode::kSlice, {value}, [&](HloInstruction& slice) {
        HloAttributes* a = slice.mutable_attrs();
        for (const Tiling& t : tiling) {
          a->slice_starts.push_back(0);
          a->slice_strides.push_back(t.size == 1 ? t.stride : 1);
          a->slice_limits.push_back(t.limit());
        }
      });
    }
    operands.push_back(b.Reshape(value, split_dims));
  }
  for (int64_t k = 0; k < inputs; ++k) operands.push_back(rw->operand(inputs + k));
  HloInstruction* reduce = b.Build(HloOpcode::kReduce, operands, [&](HloInstruction& r) {
    r.mutable_attrs()->dimensions = reduced;
    r.AppendCalledComputation(rw->to_apply());
  });
  HLOC_RETURN_IF_ERROR(b.status());
  return expanders::ReplaceInstruction(rw, reduce);
}

}  // namespace

absl::StatusOr<bool> ReduceWindowRewriter::Run(HloModule& module) {
  bool changed = false;
  for (HloComputation* computation : module.computations()) {
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      if (i->opcode() != HloOpcode::kReduceWindow) continue;
      std::optional<std::vector<Tiling>> tiling = NonOverlappingTiling(*i);
      if (!tiling.has_value()) continue;
      HLOC_RETURN_IF_ERROR(Rewrite(i, *tiling));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
