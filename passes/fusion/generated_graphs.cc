// Builds the generated scaling modules (see generated_graphs.h).
#include "passes/fusion/generated_graphs.h"

namespace hloc {
namespace {

constexpr int64_t kWidth = 16;

class LayerBuilder {
 public:
  explicit LayerBuilder(HloComputation* c) : c_(c) {}

  HloInstruction* Add(HloOpcode opcode, const Shape& shape,
                      std::initializer_list<HloInstruction*> operands) {
    return c_->AddInstruction(HloInstruction::Create(opcode, shape, operands));
  }
  HloInstruction* Scalar(float value) {
    Literal literal = Literal::Scalar(xla::F32, value);
    return c_->AddInstruction(HloInstruction::CreateConstant(std::move(literal)));
  }
  HloInstruction* Broadcast(HloInstruction* operand, const Shape& shape,
                            std::vector<int64_t> dims) {
    return c_->AddInstruction(HloInstruction::CreateBroadcast(shape, operand, std::move(dims)));
  }

  // One layer on x: f32[W,W] -> f32[W,W], with its weight parameter w.
  HloInstruction* Layer(HloInstruction* x, HloInstruction* w, HloComputation* add_reducer) {
    const Shape matrix(xla::F32, {kWidth, kWidth});
    const Shape row(xla::F32, {kWidth});
    HloInstruction* dot = Add(HloOpcode::kDot, matrix, {x, w});
    xla::DotDimensionNumbers* dnums = dot->mutable_attrs()->dot_dimension_numbers.mutable_value();
    dnums->add_lhs_contracting_dimensions(1);
    dnums->add_rhs_contracting_dimensions(0);
    HloInstruction* bias = Broadcast(Scalar(0.1f), matrix, {});
    HloInstruction* biased = Add(HloOpcode::kAdd, matrix, {dot, bias});
    HloInstruction* zeros = Broadcast(Scalar(0.0f), matrix, {});
    HloInstruction* relu = Add(HloOpcode::kMaximum, matrix, {biased, zeros});
    HloInstruction* e = Add(HloOpcode::kExp, matrix, {relu});
    HloInstruction* sum = Add(HloOpcode::kReduce, row, {e, Scalar(0.0f)});
    sum->mutable_attrs()->dimensions = {1};
    sum->AppendCalledComputation(add_reducer);
    HloInstruction* sum_b = Broadcast(sum, matrix, {0});
    HloInstruction* normalized = Add(HloOpcode::kDivide, matrix, {e, sum_b});
    HloInstruction* t = Add(HloOpcode::kTranspose, matrix, {normalized});
    t->mutable_attrs()->dimensions = {1, 0};
    HloInstruction* gated = Add(HloOpcode::kMultiply, matrix, {t, x});
    return Add(HloOpcode::kAdd, matrix, {gated, normalized});
  }

 private:
  HloComputation* c_;
};

}  // namespace

std::unique_ptr<HloModule> MakeLayeredModule(int64_t instructions) {
  auto module = std::make_unique<HloModule>("generated_layers");
  auto reducer = std::make_unique<HloComputation>("add_f32");
  {
    const Shape scalar = Shape::Scalar(xla::F32);
    HloInstruction* a = reducer->AddInstruction(HloInstruction::CreateParameter(0, scalar, "a"));
    HloInstruction* b = reducer->AddInstruction(HloInstruction::CreateParameter(1, scalar, "b"));
    reducer->set_root(
        reducer->AddInstruction(HloInstruction::Create(HloOpcode::kAdd, scalar, {a, b})));
  }
  HloComputation* add_reducer = module->AddComputation(std::move(reducer));
  auto entry = std::make_unique<HloComputation>("main");
  HloInstruction* x = entry->AddInstruction(
      HloInstruction::CreateParameter(0, Shape(xla::F32, {kWidth, kWidth}), "x"));
  LayerBuilder builder(entry.get());
  int64_t layer = 0;
  while (entry->instruction_count() < instructions || entry->instruction_count() < 2) {
    HloInstruction* w = entry->AddInstruction(HloInstruction::CreateParameter(
        ++layer, Shape(xla::F32, {kWidth, kWidth}), "w"));
    x = builder.Layer(x, w, add_reducer);
  }
  entry->set_root(x);
  module->AddEntryComputation(std::move(entry));
  return module;
}

}  // namespace hloc
