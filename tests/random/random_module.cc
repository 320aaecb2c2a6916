// Random valid HLO modules, grown through the IR (see random_module.h).
#include "tests/random/random_module.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "hlo/primitive_type.h"
#include "hlo/shape.h"
#include "hlo/shape_inference.h"

namespace hloc::random_hlo {
namespace {

using Dims = std::vector<int64_t>;

Shape ArrayShape(PrimitiveType type, Dims dims) {
  Shape shape(type, std::move(dims));
  shape.set_layout(Layout::RowMajor(shape.rank()));
  return shape;
}

int64_t ElementCount(const Dims& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>());
}

// f8/f4 kinds (IsNarrowFloat) count as floats too.
bool IsFloat(PrimitiveType type) { return IsFloatingPoint(type); }
bool IsComplexType(PrimitiveType type) { return type == xla::C64; }
bool IsUnsigned(PrimitiveType type) {
  return type == xla::U4 || type == xla::U8 || type == xla::U16 || type == xla::U32 ||
         type == xla::U64;
}
// Integer identities for max/min reductions: the type's own extremes where
// they are small, else +-1000 (no argument comes near it).
double LowestFor(PrimitiveType type) {
  if (IsUnsigned(type)) return 0;
  if (type == xla::S4) return -8;
  if (type == xla::S8) return -128;
  if (type == xla::S16) return -32768;
  return -1000;
}
double HighestFor(PrimitiveType type) {
  if (type == xla::S4) return 7;
  if (type == xla::U4) return 15;
  if (type == xla::U8) return 255;
  if (type == xla::S8) return 127;
  if (type == xla::S16) return 32767;
  if (type == xla::U16) return 65535;
  return 1000;
}

struct Value {
  HloInstruction* instruction;
  bool exact;
  const Shape& shape() const { return instruction->shape(); }
  PrimitiveType type() const { return shape().element_type(); }
  const Dims& dims() const { return shape().dimensions(); }
};

class Generator {
 public:
  Generator(uint64_t seed, const RandomModuleOptions& options)
      : rng_(seed), options_(options), module_(std::make_unique<HloModule>(
                                           absl::StrCat("random_", seed))) {}

  std::unique_ptr<HloModule> Build() {
    entry_ = std::make_unique<HloComputation>("main");
    const int initial = 1 + Below(2);
    for (int i = 0; i < initial; ++i) NewParameter(ArrayShape(RandomType(), RandomDims()));
    const int steps = 1 + Below(options_.max_instructions);
    for (int i = 0; i < steps; ++i) Step();
    // The root: the last value, or a tuple of the last and one other.
    HloInstruction* last = values_.back().instruction;
    if (values_.size() > 2 && Below(3) == 0) {
      HloInstruction* other = values_[Below(static_cast<int>(values_.size()) - 1)].instruction;
      entry_->set_root(entry_->AddInstruction(HloInstruction::CreateTuple({last, other})));
    } else {
      entry_->set_root(last);
    }
    module_->AddEntryComputation(std::move(entry_));
    return std::move(module_);
  }

 private:
  // ---- draws (hand-written so every standard library gives the same ones)
  int Below(int n) { return n <= 1 ? 0 : static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool Chance(int percent) { return Below(100) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& items) { return items[Below(static_cast<int>(items.size()))]; }

  PrimitiveType RandomType() {
    static const std::vector<PrimitiveType> kTypes = {xla::F32, xla::F32, xla::F32, xla::F64,
                                                      xla::F16, xla::BF16, xla::S32, xla::S32,
                                                      xla::S64, xla::U8, xla::S8, xla::S16,
                                                      xla::U16, xla::U32, xla::U64};
    static const std::vector<PrimitiveType> kNarrowTypes = {
        xla::S4,       xla::U4,         xla::F8E4M3FN, xla::F8E5M2,         xla::F8E4M3,
        xla::F8E3M4,   xla::F8E4M3FNUZ, xla::F8E5M2FNUZ, xla::F8E4M3B11FNUZ, xla::F4E2M1FN,
        xla::F8E8M0FNU};
    if (options_.narrow_types && Below(5) == 0) return Pick(kNarrowTypes);
    return Pick(kTypes);
  }
  Dims RandomDims() {
    Dims dims(Below(options_.max_rank + 1));
    for (int64_t& d : dims) d = 1 + Below(options_.max_dimension);
    return dims;
  }

  // ---- building
  HloInstruction* Add(std::unique_ptr<HloInstruction> instruction) {
    return entry_->AddInstruction(std::move(instruction));
  }
  Value Keep(HloInstruction* instruction, bool exact) {
    values_.push_back({instruction, exact});
    return values_.back();
  }
  Value NewParameter(const Shape& shape) {
    const int number = parameters_++;
    return Keep(Add(HloInstruction::CreateParameter(number, shape, absl::StrCat("p", number))),
                true);
  }
  HloInstruction* ScalarConstant(PrimitiveType type, double value) {
    return Add(HloInstruction::CreateConstant(Literal::Scalar(type, value)));
  }
  // A value of exactly `shape`: one from the pool, else a new parameter (while
  // there is room), else a broadcast constant.
  Value Operand(const Shape& shape, bool want_exact = false) {
    std::vector<Value> fits;
    for (const Value& v : values_) {
      if (v.shape() == shape && (v.exact || !want_exact)) fits.push_back(v);
    }
    if (!fits.empty() && !Chance(15)) return Pick(fits);
    if (parameters_ < options_.max_parameters) return NewParameter(shape);
    HloInstruction* scalar = ScalarConstant(shape.element_type(), 1 + Below(3));
    return Keep(Add(HloInstruction::CreateBroadcast(shape, scalar, {})), true);
  }
  Value AnyValue() { return Pick(values_); }
  Value ArrayValue(int min_rank) {
    std::vector<Value> fits;
    for (const Value& v : values_) {
      // Complex values only feed the complex ops (ComplexOp); the other op
      // kinds pick their opcodes for real and integer types.
      if (v.shape().IsArray() && v.shape().rank() >= min_rank && !IsComplexType(v.type())) {
        fits.push_back(v);
      }
    }
    if (fits.empty()) {
      Dims dims(min_rank + Below(2));
      for (int64_t& d : dims) d = 1 + Below(options_.max_dimension);
      return NewParameter(ArrayShape(RandomType(), dims));
    }
    return Pick(fits);
  }
  // A scalar computation (x, y) -> opcode(x, y) of `type`.
  HloComputation* ScalarComputation(HloOpcode opcode, PrimitiveType type) {
    auto computation = std::make_unique<HloComputation>(
        absl::StrCat(HloOpcodeName(opcode), "_", PrimitiveTypeName(type)));
    const Shape scalar = ArrayShape(type, {});
    HloInstruction* x = computation->AddInstruction(HloInstruction::CreateParameter(0, scalar, "x"));
    HloInstruction* y = computation->AddInstruction(HloInstruction::CreateParameter(1, scalar, "y"));
    computation->set_root(computation->AddInstruction(HloInstruction::Create(opcode, scalar, {x, y})));
    return module_->AddComputation(std::move(computation));
  }

  void Step() {
    // Drawn only with the option on: a seed's module is otherwise unchanged.
    if (options_.layouts && Chance(5)) {
      LayoutBitcast();
      return;
    }
    switch (Below(control_flow() ? 32 : 30)) {
      case 0: case 1: case 2: Unary(); break;
      case 3: case 4: case 5: Binary(); break;
      case 6: CompareAndSelect(); break;
      case 7: Convert(); break;
      case 8: Broadcast(); break;
      case 9: Reshape(); break;
      case 10: Transpose(); break;
      case 11: Slice(); break;
      case 12: Concatenate(); break;
      case 13: Pad(); break;
      case 14: Reverse(); break;
      case 15: Iota(); break;
      case 16: Constant(); break;
      case 17: Dot(); break;
      case 18: case 19: Reduce(); break;
      case 20: DynamicSlice(); break;
      case 21: DynamicUpdateSlice(); break;
      case 22: ReduceWindow(); break;
      case 23: Sort(); break;
      case 24: Clamp(); break;
      case 25: Gather(); break;
      case 26: Scatter(); break;
      case 27: Convolution(); break;
      case 28: SelectAndScatter(); break;
      case 29: ComplexOp(); break;
      // Control flow last, so that control_flow=false leaves it out.
      case 30: While(); break;
      case 31: Conditional(); break;
    }
  }
  bool control_flow() const { return options_.control_flow; }

  void Unary() {
    Value x = ArrayValue(0);
    const PrimitiveType type = x.type();
    // {opcode, keeps exactness}
    std::vector<std::pair<HloOpcode, bool>> ops;
    if (type == xla::PRED) {
      ops = {{HloOpcode::kNot, true}};
    } else if (IsNarrowFloat(type)) {
      // Exact or correctly rounded in f32, then rounded once.
      ops = {{HloOpcode::kNegate, true}, {HloOpcode::kAbs, true}, {HloOpcode::kFloor, true},
             {HloOpcode::kCeil, true},   {HloOpcode::kSign, true}, {HloOpcode::kSqrt, true},
             {HloOpcode::kRoundNearestEven, true}};
    } else if (IsFloat(type)) {
      ops = {{HloOpcode::kNegate, true}, {HloOpcode::kAbs, true},     {HloOpcode::kFloor, true},
             {HloOpcode::kCeil, true},   {HloOpcode::kSign, true},    {HloOpcode::kTanh, false},
             {HloOpcode::kExp, false},   {HloOpcode::kLog, false},    {HloOpcode::kSqrt, false},
             {HloOpcode::kSin, false},   {HloOpcode::kCos, false},    {HloOpcode::kLogistic, false},
             {HloOpcode::kRoundNearestEven, true}};
    } else {
      ops = {{HloOpcode::kNegate, true}, {HloOpcode::kAbs, true}, {HloOpcode::kNot, true},
             {HloOpcode::kSign, true}};
      if (IsUnsigned(type)) ops = {{HloOpcode::kNot, true}};  // sign and negate want signed
    }
    const auto& [opcode, keeps] = Pick(ops);
    Keep(Add(HloInstruction::Create(opcode, x.shape(), {x.instruction})), x.exact && keeps);
  }

  void Binary() {
    Value x = ArrayValue(0);
    const PrimitiveType type = x.type();
    Value y = Operand(x.shape());
    std::vector<std::pair<HloOpcode, bool>> ops;
    if (type == xla::PRED) {
      // Arithmetic on pred is one-bit unsigned arithmetic (XLA accepts it).
      ops = {{HloOpcode::kAnd, true},      {HloOpcode::kOr, true},
             {HloOpcode::kXor, true},      {HloOpcode::kAdd, true},
             {HloOpcode::kSubtract, true}, {HloOpcode::kMultiply, true},
             {HloOpcode::kDivide, true},   {HloOpcode::kRemainder, true},
             {HloOpcode::kMaximum, true},  {HloOpcode::kMinimum, true},
             {HloOpcode::kPower, true}};
    } else if (IsNarrowFloat(type)) {
      ops = {{HloOpcode::kAdd, true},      {HloOpcode::kSubtract, true},
             {HloOpcode::kMultiply, true}, {HloOpcode::kDivide, true},
             {HloOpcode::kMaximum, true},  {HloOpcode::kMinimum, true}};
    } else if (IsFloat(type)) {
      ops = {{HloOpcode::kAdd, false},     {HloOpcode::kSubtract, false},
             {HloOpcode::kMultiply, false}, {HloOpcode::kDivide, false},
             {HloOpcode::kMaximum, true},   {HloOpcode::kMinimum, true},
             {HloOpcode::kPower, false},    {HloOpcode::kAtan2, false}};
    } else {
      ops = {{HloOpcode::kAdd, true},      {HloOpcode::kSubtract, true},
             {HloOpcode::kMultiply, true}, {HloOpcode::kMaximum, true},
             {HloOpcode::kMinimum, true},  {HloOpcode::kAnd, true},
             {HloOpcode::kOr, true},       {HloOpcode::kXor, true},
             {HloOpcode::kDivide, true},   {HloOpcode::kRemainder, true},
             {HloOpcode::kShiftLeft, true}, {HloOpcode::kShiftRightLogical, true},
             {HloOpcode::kShiftRightArithmetic, true}};
    }
    const auto& [opcode, keeps] = Pick(ops);
    Keep(Add(HloInstruction::Create(opcode, x.shape(), {x.instruction, y.instruction})),
         keeps && x.exact && y.exact);
  }

  // compare(a, b) of exact values, then maybe select(compare, c, d).
  void CompareAndSelect() {
    std::vector<Value> exact;
    for (const Value& v : values_) {
      if (v.exact && v.shape().IsArray() && !IsComplexType(v.type())) exact.push_back(v);
    }
    Value a = exact.empty() ? NewParameter(ArrayShape(RandomType(), RandomDims())) : Pick(exact);
    Value b = Operand(a.shape(), /*want_exact=*/true);
    static const std::vector<ComparisonDirection> kDirections = {
        ComparisonDirection::kEq, ComparisonDirection::kNe, ComparisonDirection::kGe,
        ComparisonDirection::kGt, ComparisonDirection::kLe, ComparisonDirection::kLt};
    auto compare = HloInstruction::Create(HloOpcode::kCompare, ArrayShape(xla::PRED, a.dims()),
                                          {a.instruction, b.instruction});
    compare->mutable_attrs()->comparison_direction = Pick(kDirections);
    Value predicate = Keep(Add(std::move(compare)), true);
    if (Chance(60)) {
      const Shape shape = ArrayShape(Chance(50) ? RandomType() : a.type(), a.dims());
      Value on_true = Operand(shape);
      Value on_false = Operand(shape);
      Keep(Add(HloInstruction::Create(HloOpcode::kSelect, shape,
                                      {predicate.instruction, on_true.instruction,
                                       on_false.instruction})),
           on_true.exact && on_false.exact);
    }
  }

  void Convert() {
    Value x = ArrayValue(0);
    if (Chance(50) && BitcastConvert()) return;
    PrimitiveType to = RandomType();
    // Float -> integer only from exact values (small, and the same on every
    // backend); otherwise to a float type.
    if (IsFloat(x.type()) && !IsFloat(to) && !x.exact) to = xla::F32;
    if (IsNarrowFloat(to) && !x.exact) to = xla::F32;
    Keep(Add(HloInstruction::Create(HloOpcode::kConvert, ArrayShape(to, x.dims()),
                                    {x.instruction})),
         x.exact);
  }

  // bitcast-convert of exact integers to an integer type: the same bits,
  // the narrow parts of each element along a new minor dimension, or (when
  // the minor dimension is the width ratio) those parts joined into wide
  // elements. Floats stay out: NaN signs and payloads differ between
  // backends, and bit patterns expose them.
  bool BitcastConvert() {
    std::vector<Value> integers;
    for (const Value& v : values_) {
      const PrimitiveType t = v.type();
      if (v.exact && v.shape().IsArray() && t != xla::PRED && !IsFloat(t) &&
          !IsComplexType(t) && BitWidth(t) % 8 == 0) {
        integers.push_back(v);
      }
    }
    if (integers.empty()) return false;
    const Value x = Pick(integers);
    const PrimitiveType from = x.type();
    static const std::vector<PrimitiveType> kIntegers = {xla::S8,  xla::U8,  xla::S16, xla::U16,
                                                         xla::S32, xla::U32, xla::S64, xla::U64};
    Dims dims = x.dims();
    std::vector<PrimitiveType> wider;
    for (PrimitiveType t : kIntegers) {
      if (!dims.empty() && BitWidth(t) == BitWidth(from) * dims.back()) wider.push_back(t);
    }
    PrimitiveType to = !wider.empty() && Chance(60) ? Pick(wider) : Pick(kIntegers);
    if (BitWidth(to) > BitWidth(from)) {
      if (dims.empty() || BitWidth(to) != BitWidth(from) * dims.back()) return false;
      dims.pop_back();
    } else if (BitWidth(to) < BitWidth(from)) {
      if (static_cast<int>(dims.size()) >= options_.max_rank + 1) return false;
      dims.push_back(BitWidth(from) / BitWidth(to));
    }
    Keep(Add(HloInstruction::Create(HloOpcode::kBitcastConvert, ArrayShape(to, dims),
                                    {x.instruction})),
         true);
    return true;
  }

  void Broadcast() {
    Value x = ArrayValue(0);
    const Dims& in = x.dims();
    const int added = 1 + Below(2);
    if (static_cast<int>(in.size()) + added > options_.max_rank + 1) return;
    // Output rank in.size() + added; the operand's dims keep their order.
    const int rank = static_cast<int>(in.size()) + added;
    std::vector<bool> from_operand(rank, false);
    std::vector<int> positions(rank);
    std::iota(positions.begin(), positions.end(), 0);
    for (int i = 0; i < added; ++i) positions.erase(positions.begin() + Below(positions.size()));
    Dims out(rank), mapping;
    for (int p : positions) from_operand[p] = true;
    int next = 0;
    for (int i = 0; i < rank; ++i) {
      if (from_operand[i]) {
        out[i] = in[next++];
        mapping.push_back(i);
      } else {
        out[i] = 1 + Below(options_.max_dimension);
      }
    }
    Keep(Add(HloInstruction::CreateBroadcast(ArrayShape(x.type(), out), x.instruction, mapping)),
         x.exact);
  }

  void Reshape() {
    Value x = ArrayValue(0);
    int64_t left = ElementCount(x.dims());
    Dims out;
    while (left > 1 && static_cast<int>(out.size()) < options_.max_rank) {
      std::vector<int64_t> divisors;
      for (int64_t d = 1; d <= left; ++d) {
        if (left % d == 0) divisors.push_back(d);
      }
      const int64_t d = Pick(divisors);
      out.push_back(d);
      left /= d;
    }
    if (left > 1) out.push_back(left);
    if (Chance(20)) out.insert(out.begin() + Below(out.size() + 1), 1);
    Keep(Add(HloInstruction::Create(HloOpcode::kReshape, ArrayShape(x.type(), out),
                                    {x.instruction})),
         x.exact);
  }

  void Transpose() {
    Value x = ArrayValue(2);
    const Dims& in = x.dims();
    const std::vector<int64_t> permutation = Permutation(in.size());
    Dims out(in.size());
    for (size_t i = 0; i < in.size(); ++i) out[i] = in[permutation[i]];
    auto transpose = HloInstruction::Create(HloOpcode::kTranspose, ArrayShape(x.type(), out),
                                            {x.instruction});
    transpose->mutable_attrs()->dimensions = permutation;
    Keep(Add(std::move(transpose)), x.exact);
  }

  // A random permutation of 0..n-1.
  std::vector<int64_t> Permutation(size_t n) {
    std::vector<int64_t> permutation(n);
    std::iota(permutation.begin(), permutation.end(), 0);
    for (size_t i = permutation.size(); i > 1; --i) {
      std::swap(permutation[i - 1], permutation[Below(static_cast<int>(i))]);
    }
    return permutation;
  }
  // `shape` laid out with its dimensions in memory from major to minor in
  // `major_to_minor` order.
  static Shape WithLayout(Shape shape, const std::vector<int64_t>& major_to_minor) {
    Layout layout;
    layout.minor_to_major.assign(major_to_minor.rbegin(), major_to_minor.rend());
    shape.set_layout(std::move(layout));
    return shape;
  }

  // x copied into a random layout (or left row-major), bitcast to a random
  // permutation of its memory dimensions with the layout that keeps every
  // element in place (a transpose in disguise), then copied back to
  // row-major for the ops after it.
  void LayoutBitcast() {
    Value x = ArrayValue(2);
    const Dims& in = x.dims();
    HloInstruction* source = x.instruction;
    std::vector<int64_t> in_order(in.size());
    std::iota(in_order.begin(), in_order.end(), 0);
    if (Chance(50)) {
      in_order = Permutation(in.size());
      source = Add(HloInstruction::Create(
          HloOpcode::kCopy, WithLayout(ArrayShape(x.type(), in), in_order), {source}));
    }
    // Memory dimension k has in[in_order[k]] elements; result dimension i
    // is memory dimension q[i].
    const std::vector<int64_t> q = Permutation(in.size());
    Dims out(in.size());
    std::vector<int64_t> out_order(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      out[i] = in[in_order[q[i]]];
      out_order[q[i]] = static_cast<int64_t>(i);
    }
    HloInstruction* bitcast = Add(HloInstruction::Create(
        HloOpcode::kBitcast, WithLayout(ArrayShape(x.type(), out), out_order), {source}));
    Keep(Add(HloInstruction::Create(HloOpcode::kCopy, ArrayShape(x.type(), out), {bitcast})),
         x.exact);
  }

  void Slice() {
    Value x = ArrayValue(1);
    Dims out;
    std::vector<int64_t> starts, limits, strides;
    for (int64_t d : x.dims()) {
      const int64_t start = Below(static_cast<int>(d));
      const int64_t limit = start + 1 + Below(static_cast<int>(d - start));
      const int64_t stride = 1 + Below(2);
      starts.push_back(start);
      limits.push_back(limit);
      strides.push_back(stride);
      out.push_back((limit - start + stride - 1) / stride);
    }
    auto slice =
        HloInstruction::Create(HloOpcode::kSlice, ArrayShape(x.type(), out), {x.instruction});
    slice->mutable_attrs()->slice_starts = starts;
    slice->mutable_attrs()->slice_limits = limits;
    slice->mutable_attrs()->slice_strides = strides;
    Keep(Add(std::move(slice)), x.exact);
  }

  void Concatenate() {
    Value x = ArrayValue(1);
    const int dimension = Below(static_cast<int>(x.dims().size()));
    std::vector<Value> parts = {x};
    for (const Value& v : values_) {
      if (v.instruction == x.instruction || v.type() != x.type() ||
          v.dims().size() != x.dims().size()) {
        continue;
      }
      bool fits = true;
      for (size_t i = 0; i < v.dims().size(); ++i) {
        if (static_cast<int>(i) != dimension && v.dims()[i] != x.dims()[i]) fits = false;
      }
      if (fits && parts.size() < 3) parts.push_back(v);
    }
    if (parts.size() == 1) parts.push_back(x);
    Dims out = x.dims();
    out[dimension] = 0;
    std::vector<HloInstruction*> operands;
    bool exact = true;
    for (const Value& part : parts) {
      out[dimension] += part.dims()[dimension];
      operands.push_back(part.instruction);
      exact = exact && part.exact;
    }
    auto concatenate =
        HloInstruction::Create(HloOpcode::kConcatenate, ArrayShape(x.type(), out), operands);
    concatenate->mutable_attrs()->dimensions = {dimension};
    Keep(Add(std::move(concatenate)), exact);
  }

  void Pad() {
    Value x = ArrayValue(1);
    xla::PaddingConfig config;
    Dims out;
    for (int64_t d : x.dims()) {
      xla::PaddingConfig::PaddingConfigDimension* dim = config.add_dimensions();
      const int64_t interior = Below(2);
      const int64_t low = (d > 1 && Chance(20)) ? -1 : Below(3);
      const int64_t high = Below(3);
      dim->set_edge_padding_low(low);
      dim->set_edge_padding_high(high);
      dim->set_interior_padding(interior);
      out.push_back(low + high + d + interior * (d - 1));
    }
    HloInstruction* value = ScalarConstant(x.type(), IsUnsigned(x.type()) ? 3 : -2);
    auto pad = HloInstruction::Create(HloOpcode::kPad, ArrayShape(x.type(), out),
                                      {x.instruction, value});
    *pad->mutable_attrs()->padding_config.mutable_value() = config;
    Keep(Add(std::move(pad)), x.exact);
  }

  void Reverse() {
    Value x = ArrayValue(1);
    std::vector<int64_t> dims;
    for (size_t i = 0; i < x.dims().size(); ++i) {
      if (Chance(50)) dims.push_back(static_cast<int64_t>(i));
    }
    if (dims.empty()) dims.push_back(0);
    auto reverse =
        HloInstruction::Create(HloOpcode::kReverse, x.shape(), {x.instruction});
    reverse->mutable_attrs()->dimensions = dims;
    Keep(Add(std::move(reverse)), x.exact);
  }

  void Iota() {
    Dims dims = RandomDims();
    if (dims.empty()) dims.push_back(1 + Below(options_.max_dimension));
    auto iota = HloInstruction::Create(HloOpcode::kIota, ArrayShape(RandomType(), dims));
    iota->mutable_attrs()->iota_dimension = Below(static_cast<int>(dims.size()));
    Keep(Add(std::move(iota)), true);
  }

  void Constant() {
    const Shape shape = ArrayShape(RandomType(), RandomDims());
    Literal literal(shape);
    for (int64_t i = 0; i < literal.element_count(); ++i) {
      literal.SetFromDouble(i, IsUnsigned(shape.element_type()) ? Below(9) : Below(9) - 4);
    }
    Keep(Add(HloInstruction::CreateConstant(std::move(literal))), true);
  }

  // dot(x, y) contracting one dimension of x with y's first (after an
  // optional batch dimension shared by both).
  void Dot() {
    Value x = ArrayValue(1);
    if (x.type() == xla::PRED || IsUnsigned(x.type()) || IsNarrowFloat(x.type())) return;
    const Dims& in = x.dims();
    const bool batch = in.size() == 3 && Chance(50);
    const int64_t first_free = batch ? 1 : 0;
    const int64_t contracting = first_free + Below(static_cast<int>(in.size() - first_free));
    const int64_t n = 1 + Below(options_.max_dimension);
    Dims rhs_dims;
    if (batch) rhs_dims.push_back(in[0]);
    rhs_dims.push_back(in[contracting]);
    if (Chance(80)) rhs_dims.push_back(n);
    Value y = Operand(ArrayShape(x.type(), rhs_dims));
    Dims out;
    if (batch) out.push_back(in[0]);
    for (int64_t i = first_free; i < static_cast<int64_t>(in.size()); ++i) {
      if (i != contracting) out.push_back(in[i]);
    }
    if (rhs_dims.size() == static_cast<size_t>(batch ? 3 : 2)) out.push_back(n);
    auto dot = HloInstruction::Create(HloOpcode::kDot, ArrayShape(x.type(), out),
                                      {x.instruction, y.instruction});
    xla::DotDimensionNumbers* numbers = dot->mutable_attrs()->dot_dimension_numbers.mutable_value();
    numbers->add_lhs_contracting_dimensions(contracting);
    numbers->add_rhs_contracting_dimensions(batch ? 1 : 0);
    if (batch) {
      numbers->add_lhs_batch_dimensions(0);
      numbers->add_rhs_batch_dimensions(0);
    }
    Keep(Add(std::move(dot)), !IsFloat(x.type()));
  }

  void Reduce() {
    Value x = ArrayValue(1);
    const PrimitiveType type = x.type();
    std::vector<std::pair<HloOpcode, double>> ops;  // op, identity
    const double inf = std::numeric_limits<double>::infinity();
    if (type == xla::PRED) {
      ops = {{HloOpcode::kAnd, 1}, {HloOpcode::kOr, 0}};
    } else if (IsNarrowFloat(type)) {
      // max and min are exact in any order; 0 is no identity (and f8e8m0fnu
      // has no zero), but max and min may take the init value any number of
      // times.
      ops = {{HloOpcode::kMaximum, 0}, {HloOpcode::kMinimum, 0}};
    } else if (IsFloat(type)) {
      ops = {{HloOpcode::kAdd, 0}, {HloOpcode::kMaximum, -inf}, {HloOpcode::kMinimum, inf},
             {HloOpcode::kMultiply, 1}};
    } else {
      ops = {{HloOpcode::kAdd, 0}, {HloOpcode::kMaximum, LowestFor(type)},
             {HloOpcode::kMinimum, HighestFor(type)}, {HloOpcode::kMultiply, 1}};
    }
    const auto& [opcode, identity] = Pick(ops);
    std::vector<int64_t> reduced;
    Dims out;
    for (size_t i = 0; i < x.dims().size(); ++i) {
      if (Chance(50)) {
        reduced.push_back(static_cast<int64_t>(i));
      } else {
        out.push_back(x.dims()[i]);
      }
    }
    if (reduced.empty()) {
      reduced.push_back(0);
      out.erase(out.begin());
    }
    HloInstruction* init = ScalarConstant(type, identity);
    auto reduce = HloInstruction::Create(HloOpcode::kReduce, ArrayShape(type, out),
                                         {x.instruction, init});
    reduce->mutable_attrs()->dimensions = reduced;
    reduce->AppendCalledComputation(ScalarComputation(opcode, type));
    const bool exact = !IsFloat(type) || opcode == HloOpcode::kMaximum ||
                       opcode == HloOpcode::kMinimum;
    Keep(Add(std::move(reduce)), x.exact && exact);
  }

  // Start indices: s32 scalars, new parameters or constants (the random
  // arguments keep index parameters in range; out-of-range constants test
  // the clamping every backend must do).
  std::vector<HloInstruction*> StartIndices(size_t rank) {
    std::vector<HloInstruction*> starts;
    for (size_t i = 0; i < rank; ++i) {
      if (parameters_ < options_.max_parameters && Chance(50)) {
        starts.push_back(NewParameter(ArrayShape(xla::S32, {})).instruction);
      } else {
        starts.push_back(ScalarConstant(xla::S32, Below(8) - 2));
      }
    }
    return starts;
  }

  void DynamicSlice() {
    Value x = ArrayValue(1);
    Dims sizes;
    for (int64_t d : x.dims()) sizes.push_back(1 + Below(static_cast<int>(d)));
    std::vector<HloInstruction*> operands = {x.instruction};
    for (HloInstruction* start : StartIndices(x.dims().size())) operands.push_back(start);
    auto slice = HloInstruction::Create(HloOpcode::kDynamicSlice, ArrayShape(x.type(), sizes),
                                        operands);
    slice->mutable_attrs()->dynamic_slice_sizes = sizes;
    Keep(Add(std::move(slice)), x.exact);
  }

  void DynamicUpdateSlice() {
    Value x = ArrayValue(1);
    Dims sizes;
    for (int64_t d : x.dims()) sizes.push_back(1 + Below(static_cast<int>(d)));
    Value update = Operand(ArrayShape(x.type(), sizes));
    std::vector<HloInstruction*> operands = {x.instruction, update.instruction};
    for (HloInstruction* start : StartIndices(x.dims().size())) operands.push_back(start);
    Keep(Add(HloInstruction::Create(HloOpcode::kDynamicUpdateSlice, x.shape(), operands)),
         x.exact && update.exact);
  }

  // A window over `dims` for reduce-window and select-and-scatter: sizes
  // 1-3, strides 1-2, padding 0-1 on each side, no dilation; `windows` gets
  // the number of window positions along each dimension.
  xla::Window SmallWindow(const Dims& dims, Dims* windows) {
    xla::Window window;
    for (int64_t d : dims) {
      xla::WindowDimension* w = window.add_dimensions();
      const int64_t low = Below(2), high = Below(2);
      const int64_t size = 1 + Below(static_cast<int>(std::min<int64_t>(3, d + low + high)));
      const int64_t stride = 1 + Below(2);
      w->set_size(size);
      w->set_stride(stride);
      w->set_padding_low(low);
      w->set_padding_high(high);
      w->set_window_dilation(1);
      w->set_base_dilation(1);
      windows->push_back((d + low + high - size) / stride + 1);
    }
    return window;
  }

  // reduce-window with max (exact) or add, small windows, strides, padding.
  void ReduceWindow() {
    Value x = ArrayValue(1);
    if (x.type() == xla::PRED) return;
    // Narrow floats: max only (their sums are not drawn), and init 0 (see
    // Reduce).
    const bool max = Chance(50) || IsNarrowFloat(x.type());
    Dims out;
    const xla::Window window = SmallWindow(x.dims(), &out);
    const double inf = std::numeric_limits<double>::infinity();
    const double identity = !max || IsNarrowFloat(x.type())
                                ? 0
                                : (IsFloat(x.type()) ? -inf : LowestFor(x.type()));
    HloInstruction* init = ScalarConstant(x.type(), identity);
    auto reduce_window = HloInstruction::Create(HloOpcode::kReduceWindow,
                                                ArrayShape(x.type(), out), {x.instruction, init});
    *reduce_window->mutable_attrs()->window.mutable_value() = window;
    reduce_window->mutable_attrs()->has_window = true;
    reduce_window->AppendCalledComputation(
        ScalarComputation(max ? HloOpcode::kMaximum : HloOpcode::kAdd, x.type()));
    Keep(Add(std::move(reduce_window)), x.exact && (max || !IsFloat(x.type())));
  }

  // sort of one exact array along one dimension (ties and rounding cannot
  // reorder it differently on two backends).
  void Sort() {
    std::vector<Value> exact;
    for (const Value& v : values_) {
      if (v.exact && v.shape().IsArray() && v.shape().rank() >= 1 && v.type() != xla::PRED &&
          !IsComplexType(v.type())) {
        exact.push_back(v);
      }
    }
    if (exact.empty()) return;
    Value x = Pick(exact);
    auto comparator = std::make_unique<HloComputation>("compare_lt");
    const Shape scalar = ArrayShape(x.type(), {});
    HloInstruction* a = comparator->AddInstruction(HloInstruction::CreateParameter(0, scalar, "a"));
    HloInstruction* b = comparator->AddInstruction(HloInstruction::CreateParameter(1, scalar, "b"));
    auto less = HloInstruction::Create(HloOpcode::kCompare, ArrayShape(xla::PRED, {}), {a, b});
    less->mutable_attrs()->comparison_direction =
        Chance(50) ? ComparisonDirection::kLt : ComparisonDirection::kGt;
    comparator->set_root(comparator->AddInstruction(std::move(less)));
    auto sort = HloInstruction::Create(HloOpcode::kSort, x.shape(), {x.instruction});
    sort->mutable_attrs()->dimensions = {Below(static_cast<int>(x.dims().size()))};
    sort->mutable_attrs()->is_stable = true;
    sort->AppendCalledComputation(module_->AddComputation(std::move(comparator)));
    Keep(Add(std::move(sort)), true);
  }

  void Clamp() {
    Value x = ArrayValue(0);
    if (x.type() == xla::PRED) return;
    HloInstruction* low = ScalarConstant(x.type(), IsUnsigned(x.type()) ? 1 : -1);
    HloInstruction* high = ScalarConstant(x.type(), 2);
    if (x.shape().rank() > 0 && Chance(50)) {
      low = Add(HloInstruction::CreateBroadcast(x.shape(), low, {}));
      high = Add(HloInstruction::CreateBroadcast(x.shape(), high, {}));
    }
    Keep(Add(HloInstruction::Create(HloOpcode::kClamp, x.shape(),
                                    {low, x.instruction, high})),
         x.exact);
  }

  // ---- ops whose result shape shape inference computes (gather, scatter,
  // convolution): the instruction is built with a placeholder shape, then
  // given the inferred one; a combination inference rejects adds nothing.
  HloInstruction* AddInferred(std::unique_ptr<HloInstruction> instruction) {
    absl::StatusOr<Shape> shape = InferShape(*instruction);
    // Empty results are left out: the other op kinds assume non-empty arrays.
    if (!shape.ok() || ElementCount(shape->dimensions()) == 0) {
      instruction->DetachOperands();  // leave no user behind in the operands
      return nullptr;
    }
    Shape with_layout = *shape;
    with_layout.set_layout(Layout::RowMajor(with_layout.rank()));
    instruction->set_shape(std::move(with_layout));
    return Add(std::move(instruction));
  }
  // `k` distinct dimensions of a rank-`rank` array, in random order.
  std::vector<int64_t> DistinctDims(int64_t rank, int k) {
    std::vector<int64_t> dims = Permutation(static_cast<size_t>(rank));
    dims.resize(k);
    return dims;
  }
  // An s32[n, k] constant of start indices into `dims` (through `map`), some
  // one past either end: gather clamps them, scatter skips their updates.
  HloInstruction* IndexConstant(int64_t n, const std::vector<int64_t>& map, const Dims& dims) {
    Literal literal(ArrayShape(xla::S32, {n, static_cast<int64_t>(map.size())}));
    for (int64_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < map.size(); ++j) {
        const int64_t extent = dims[map[j]];
        literal.SetFromDouble(i * static_cast<int64_t>(map.size()) + j,
                              Chance(15) ? (Chance(50) ? -1 : extent) : Below(static_cast<int>(extent)));
      }
    }
    return Add(HloInstruction::CreateConstant(std::move(literal)));
  }

  // gather(x, indices[n, k]): k indexed dimensions, some collapsed, the batch
  // dimension of the result at a random position.
  void Gather() {
    Value x = ArrayValue(1);
    const int64_t rank = static_cast<int64_t>(x.dims().size());
    const int k = 1 + Below(static_cast<int>(std::min<int64_t>(2, rank)));
    const std::vector<int64_t> map = DistinctDims(rank, k);
    Dims slice_sizes;
    std::vector<int64_t> collapsed;
    for (int64_t d = 0; d < rank; ++d) {
      const bool indexed = std::find(map.begin(), map.end(), d) != map.end();
      if (indexed && Chance(50)) {
        collapsed.push_back(d);
        slice_sizes.push_back(1);
      } else {
        slice_sizes.push_back(1 + Below(static_cast<int>(x.dims()[d])));
      }
    }
    const int64_t n = 1 + Below(4);
    HloInstruction* indices = IndexConstant(n, map, x.dims());
    const int64_t out_rank = 1 + rank - static_cast<int64_t>(collapsed.size());
    const int64_t batch_position = Below(static_cast<int>(out_rank));
    auto gather = HloInstruction::Create(HloOpcode::kGather, x.shape(), {x.instruction, indices});
    xla::GatherDimensionNumbers* numbers =
        gather->mutable_attrs()->gather_dimension_numbers.mutable_value();
    for (int64_t i = 0; i < out_rank; ++i) {
      if (i != batch_position) numbers->add_offset_dims(i);
    }
    for (int64_t d : collapsed) numbers->add_collapsed_slice_dims(d);
    for (int64_t d : map) numbers->add_start_index_map(d);
    numbers->set_index_vector_dim(1);
    gather->mutable_attrs()->gather_slice_sizes = slice_sizes;
    if (HloInstruction* result = AddInferred(std::move(gather))) Keep(result, x.exact);
  }

  // scatter(x, indices[n, k], updates) with add (or, for one index, assign):
  // k indexed dimensions, some inserted (window size 1).
  void Scatter() {
    Value x = ArrayValue(1);
    if (IsNarrowFloat(x.type())) return;  // Adds in the backend's order.
    const int64_t rank = static_cast<int64_t>(x.dims().size());
    const int k = 1 + Below(static_cast<int>(std::min<int64_t>(2, rank)));
    const std::vector<int64_t> map = DistinctDims(rank, k);
    Dims window;
    std::vector<int64_t> inserted;
    for (int64_t d = 0; d < rank; ++d) {
      const bool indexed = std::find(map.begin(), map.end(), d) != map.end();
      if (indexed && Chance(50)) {
        inserted.push_back(d);
      } else {
        window.push_back(1 + Below(static_cast<int>(x.dims()[d])));
      }
    }
    const int64_t n = 1 + Below(3);
    HloInstruction* indices = IndexConstant(n, map, x.dims());
    const int64_t updates_rank = 1 + static_cast<int64_t>(window.size());
    const int64_t scatter_position = Below(static_cast<int>(updates_rank));
    Dims updates_dims;
    for (int64_t i = 0, w = 0; i < updates_rank; ++i) {
      updates_dims.push_back(i == scatter_position ? n : window[w++]);
    }
    Value updates = Operand(ArrayShape(x.type(), updates_dims));
    // Assign is only deterministic when no two updates can meet.
    const bool assign = n == 1 && Chance(50);
    auto scatter = HloInstruction::Create(HloOpcode::kScatter, x.shape(),
                                          {x.instruction, indices, updates.instruction});
    xla::ScatterDimensionNumbers* numbers =
        scatter->mutable_attrs()->scatter_dimension_numbers.mutable_value();
    for (int64_t i = 0; i < updates_rank; ++i) {
      if (i != scatter_position) numbers->add_update_window_dims(i);
    }
    for (int64_t d : inserted) numbers->add_inserted_window_dims(d);
    for (int64_t d : map) numbers->add_scatter_dims_to_operand_dims(d);
    numbers->set_index_vector_dim(1);
    HloComputation* combiner;
    if (assign) {
      auto computation = std::make_unique<HloComputation>(
          absl::StrCat("assign_", PrimitiveTypeName(x.type())));
      const Shape scalar = ArrayShape(x.type(), {});
      computation->AddInstruction(HloInstruction::CreateParameter(0, scalar, "old"));
      HloInstruction* update =
          computation->AddInstruction(HloInstruction::CreateParameter(1, scalar, "new"));
      computation->set_root(update);
      combiner = module_->AddComputation(std::move(computation));
    } else {
      combiner = ScalarComputation(x.type() == xla::PRED ? HloOpcode::kOr : HloOpcode::kAdd,
                                   x.type());
    }
    scatter->AppendCalledComputation(combiner);
    if (HloInstruction* result = AddInferred(std::move(scatter))) {
      Keep(result, x.exact && updates.exact && (assign || !IsFloat(x.type())));
    }
  }

  // A 1-d or 2-d convolution of floats: input [batch, spatial..., feature]
  // or [batch, feature, spatial...], kernel [spatial..., in, out], strides,
  // padding, dilations and feature groups drawn small.
  void Convolution() {
    static const std::vector<PrimitiveType> kTypes = {xla::F32, xla::F32, xla::F64, xla::F16};
    const PrimitiveType type = Pick(kTypes);
    const int spatial = 1 + Below(2);
    const bool feature_last = Chance(50);
    const int64_t groups = Chance(25) ? 2 : 1;
    const int64_t batch = 1 + Below(2);
    const int64_t in_features = groups * (1 + Below(3));
    const int64_t out_features = groups * (1 + Below(3));
    Dims input_spatial, kernel_spatial;
    for (int i = 0; i < spatial; ++i) {
      input_spatial.push_back(1 + Below(options_.max_dimension));
      kernel_spatial.push_back(1 + Below(3));
    }
    xla::ConvolutionDimensionNumbers numbers;
    Dims input_dims = {batch};
    numbers.set_input_batch_dimension(0);
    numbers.set_output_batch_dimension(0);
    if (!feature_last) input_dims.push_back(in_features);
    for (int i = 0; i < spatial; ++i) {
      numbers.add_input_spatial_dimensions(static_cast<int64_t>(input_dims.size()));
      numbers.add_output_spatial_dimensions(static_cast<int64_t>(input_dims.size()));
      input_dims.push_back(input_spatial[i]);
    }
    if (feature_last) input_dims.push_back(in_features);
    numbers.set_input_feature_dimension(feature_last ? spatial + 1 : 1);
    numbers.set_output_feature_dimension(feature_last ? spatial + 1 : 1);
    Dims kernel_dims = kernel_spatial;
    for (int i = 0; i < spatial; ++i) numbers.add_kernel_spatial_dimensions(i);
    kernel_dims.push_back(in_features / groups);
    kernel_dims.push_back(out_features);
    numbers.set_kernel_input_feature_dimension(spatial);
    numbers.set_kernel_output_feature_dimension(spatial + 1);
    xla::Window window;
    for (int i = 0; i < spatial; ++i) {
      xla::WindowDimension* w = window.add_dimensions();
      w->set_size(kernel_spatial[i]);
      w->set_stride(1 + Below(2));
      w->set_padding_low(Below(2));
      w->set_padding_high(Below(2));
      w->set_base_dilation(Chance(15) ? 2 : 1);
      w->set_window_dilation(Chance(15) ? 2 : 1);
    }
    Value input = Operand(ArrayShape(type, input_dims));
    Value kernel = Operand(ArrayShape(type, kernel_dims));
    auto convolution = HloInstruction::Create(HloOpcode::kConvolution, input.shape(),
                                              {input.instruction, kernel.instruction});
    *convolution->mutable_attrs()->convolution_dimension_numbers.mutable_value() = numbers;
    *convolution->mutable_attrs()->window.mutable_value() = window;
    convolution->mutable_attrs()->has_window = true;
    convolution->mutable_attrs()->feature_group_count = groups;
    if (HloInstruction* result = AddInferred(std::move(convolution))) Keep(result, false);
  }

  // select-and-scatter(x, source, 0) with select >= (the first maximum of
  // each window) and scatter add, over an exact operand (a rounding
  // difference must not move a maximum).
  void SelectAndScatter() {
    std::vector<Value> exact;
    for (const Value& v : values_) {
      if (v.exact && v.shape().IsArray() && v.shape().rank() >= 1 && v.type() != xla::PRED &&
          !IsComplexType(v.type())) {
        exact.push_back(v);
      }
    }
    if (exact.empty()) return;
    Value x = Pick(exact);
    if (IsNarrowFloat(x.type())) return;  // Adds in the backend's order.
    Dims source_dims;
    const xla::Window window = SmallWindow(x.dims(), &source_dims);
    Value source = Operand(ArrayShape(x.type(), source_dims));
    HloInstruction* init = ScalarConstant(x.type(), 0);
    auto select = std::make_unique<HloComputation>(
        absl::StrCat("select_ge_", PrimitiveTypeName(x.type())));
    {
      const Shape scalar = ArrayShape(x.type(), {});
      HloInstruction* a = select->AddInstruction(HloInstruction::CreateParameter(0, scalar, "a"));
      HloInstruction* b = select->AddInstruction(HloInstruction::CreateParameter(1, scalar, "b"));
      auto ge = HloInstruction::Create(HloOpcode::kCompare, ArrayShape(xla::PRED, {}), {a, b});
      ge->mutable_attrs()->comparison_direction = ComparisonDirection::kGe;
      select->set_root(select->AddInstruction(std::move(ge)));
    }
    auto sas = HloInstruction::Create(HloOpcode::kSelectAndScatter, x.shape(),
                                      {x.instruction, source.instruction, init});
    *sas->mutable_attrs()->window.mutable_value() = window;
    sas->mutable_attrs()->has_window = true;
    sas->AppendCalledComputation(module_->AddComputation(std::move(select)));
    sas->AppendCalledComputation(ScalarComputation(HloOpcode::kAdd, x.type()));
    if (HloInstruction* result = AddInferred(std::move(sas))) {
      Keep(result, source.exact && !IsFloat(x.type()));
    }
  }

  // c64: complex(re, im) of two f32 values, then an elementwise complex op
  // (add, subtract, multiply, divide, negate, exp, sqrt), an fft, or back to
  // f32 by real, imag or abs.
  void ComplexOp() {
    std::vector<Value> complex;
    for (const Value& v : values_) {
      if (IsComplexType(v.type())) complex.push_back(v);
    }
    if (complex.empty() || Chance(30)) {
      std::vector<Value> floats;
      for (const Value& v : values_) {
        if (v.shape().IsArray() && v.type() == xla::F32) floats.push_back(v);
      }
      Value re = floats.empty() ? NewParameter(ArrayShape(xla::F32, RandomDims())) : Pick(floats);
      Value im = Operand(re.shape());
      complex.push_back(Keep(Add(HloInstruction::Create(HloOpcode::kComplex,
                                                        ArrayShape(xla::C64, re.dims()),
                                                        {re.instruction, im.instruction})),
                             re.exact && im.exact));
      if (Chance(40)) return;
    }
    Value x = Pick(complex);
    switch (Below(10)) {
      case 0: case 1: case 2: case 3: {
        static const std::vector<HloOpcode> kBinary = {HloOpcode::kAdd, HloOpcode::kSubtract,
                                                       HloOpcode::kMultiply, HloOpcode::kDivide};
        const HloOpcode opcode = Pick(kBinary);
        Value y = Operand(x.shape());
        Keep(Add(HloInstruction::Create(opcode, x.shape(), {x.instruction, y.instruction})), false);
        break;
      }
      case 4: case 5:
        Fft(x);
        break;
      case 6: {
        static const std::vector<std::pair<HloOpcode, bool>> kUnary = {
            {HloOpcode::kNegate, true}, {HloOpcode::kExp, false}, {HloOpcode::kSqrt, false}};
        const auto& [opcode, keeps] = Pick(kUnary);
        Keep(Add(HloInstruction::Create(opcode, x.shape(), {x.instruction})), keeps && x.exact);
        break;
      }
      default: {
        static const std::vector<std::pair<HloOpcode, bool>> kToReal = {
            {HloOpcode::kReal, true}, {HloOpcode::kImag, true}, {HloOpcode::kAbs, false}};
        const auto& [opcode, keeps] = Pick(kToReal);
        Keep(Add(HloInstruction::Create(opcode, ArrayShape(xla::F32, x.dims()), {x.instruction})),
             keeps && x.exact);
        break;
      }
    }
  }

  // fft over the last 1-3 dimensions of x (c64): FFT or IFFT of x, RFFT of
  // real(x), or IRFFT of x as the half spectrum (m = n / 2 + 1 values) of a
  // length n = 2 (m - 1) or 2 m - 1.
  void Fft(const Value& x) {
    const Dims dims = x.dims();
    if (dims.empty()) return;
    static const std::vector<xla::FftType> kTypes = {xla::FFT, xla::IFFT, xla::RFFT, xla::IRFFT};
    const xla::FftType type = Pick(kTypes);
    const int count = 1 + Below(std::min<int>(3, static_cast<int>(dims.size())));
    std::vector<int64_t> lengths(dims.end() - count, dims.end());
    HloInstruction* operand = x.instruction;
    Dims out = dims;
    PrimitiveType out_type = xla::C64;
    if (type == xla::RFFT) {
      operand = Add(HloInstruction::Create(HloOpcode::kReal, ArrayShape(xla::F32, dims),
                                           {x.instruction}));
      out.back() = dims.back() / 2 + 1;
    } else if (type == xla::IRFFT) {
      const int64_t m = dims.back();
      const int64_t n = m >= 2 && Chance(50) ? 2 * (m - 1) : 2 * m - 1;
      lengths.back() = n;
      out.back() = n;
      out_type = xla::F32;
    }
    auto fft = HloInstruction::Create(HloOpcode::kFft, ArrayShape(out_type, out), {operand});
    fft->mutable_attrs()->fft_type = type;
    fft->mutable_attrs()->fft_length = lengths;
    Keep(Add(std::move(fft)), false);
  }

  // A body computation state -> state for a loop or a branch: one op applied
  // to `shape`-typed values (state is `shape`, or (s32[], shape) for a loop).
  HloInstruction* BodyOp(HloComputation* computation, HloInstruction* x) {
    const Shape& shape = x->shape();
    switch (Below(4)) {
      case 0:
        if (shape.element_type() != xla::PRED && !IsUnsigned(shape.element_type())) {
          return computation->AddInstruction(HloInstruction::Create(HloOpcode::kNegate, shape, {x}));
        }
        [[fallthrough]];
      case 1:
        if (shape.element_type() != xla::PRED) {
          return computation->AddInstruction(
              HloInstruction::Create(HloOpcode::kAdd, shape, {x, x}));
        }
        [[fallthrough]];
      case 2: {
        auto reverse = HloInstruction::Create(HloOpcode::kReverse, shape, {x});
        for (int64_t i = 0; i < shape.rank(); ++i) reverse->mutable_attrs()->dimensions.push_back(i);
        return computation->AddInstruction(std::move(reverse));
      }
      default:
        return computation->AddInstruction(HloInstruction::Create(HloOpcode::kMaximum, shape, {x, x}));
    }
  }

  // A counted loop: (i, x) -> (i + 1, f(x)) while i < trip count.
  void While() {
    Value x = ArrayValue(0);
    const Shape counter = ArrayShape(xla::S32, {});
    const Shape state = Shape::Tuple({counter, x.shape()});
    // Half the loops run more trips than WhileLoopUnroller copies (16), so
    // that loops, not only their unrolled copies, reach the backends.
    const int trips = Below(2) == 0 ? Below(4) : 17 + Below(3);

    auto condition = std::make_unique<HloComputation>("loop_condition");
    {
      HloInstruction* s = condition->AddInstruction(HloInstruction::CreateParameter(0, state, "s"));
      HloInstruction* i = condition->AddInstruction(HloInstruction::CreateGetTupleElement(s, 0));
      HloInstruction* limit = condition->AddInstruction(
          HloInstruction::CreateConstant(Literal::Scalar(xla::S32, trips)));
      auto less = HloInstruction::Create(HloOpcode::kCompare, ArrayShape(xla::PRED, {}), {i, limit});
      less->mutable_attrs()->comparison_direction = ComparisonDirection::kLt;
      condition->set_root(condition->AddInstruction(std::move(less)));
    }
    auto body = std::make_unique<HloComputation>("loop_body");
    bool exact = x.exact;
    {
      HloInstruction* s = body->AddInstruction(HloInstruction::CreateParameter(0, state, "s"));
      HloInstruction* i = body->AddInstruction(HloInstruction::CreateGetTupleElement(s, 0));
      HloInstruction* v = body->AddInstruction(HloInstruction::CreateGetTupleElement(s, 1));
      HloInstruction* one = body->AddInstruction(
          HloInstruction::CreateConstant(Literal::Scalar(xla::S32, 1)));
      HloInstruction* next = body->AddInstruction(
          HloInstruction::Create(HloOpcode::kAdd, counter, {i, one}));
      HloInstruction* updated = BodyOp(body.get(), v);
      if (updated->opcode() == HloOpcode::kAdd && IsFloat(x.type())) exact = false;
      body->set_root(body->AddInstruction(HloInstruction::CreateTuple({next, updated})));
    }
    HloComputation* condition_ptr = module_->AddComputation(std::move(condition));
    HloComputation* body_ptr = module_->AddComputation(std::move(body));
    HloInstruction* zero = ScalarConstant(xla::S32, 0);
    HloInstruction* init = Add(HloInstruction::CreateTuple({zero, x.instruction}));
    auto loop = HloInstruction::Create(HloOpcode::kWhile, state, {init});
    loop->AppendCalledComputation(condition_ptr);
    loop->AppendCalledComputation(body_ptr);
    HloInstruction* result = Add(std::move(loop));
    Keep(Add(HloInstruction::CreateGetTupleElement(result, 1)), exact);
  }

  // conditional(selector, x, x...) with 2 (pred) or 2-3 (s32 index) branches.
  void Conditional() {
    Value x = ArrayValue(0);
    const bool by_index = Chance(50);
    const int branches = by_index ? 2 + Below(2) : 2;
    Value selector = Operand(ArrayShape(by_index ? xla::S32 : xla::PRED, {}));
    std::vector<HloInstruction*> operands = {selector.instruction};
    bool exact = x.exact;
    auto conditional = HloInstruction::Create(HloOpcode::kConditional, x.shape(), {});
    for (int b = 0; b < branches; ++b) {
      auto branch = std::make_unique<HloComputation>(absl::StrCat("branch_", b));
      HloInstruction* p =
          branch->AddInstruction(HloInstruction::CreateParameter(0, x.shape(), "x"));
      HloInstruction* out = BodyOp(branch.get(), p);
      if (out->opcode() == HloOpcode::kAdd && IsFloat(x.type())) exact = false;
      branch->set_root(out);
      conditional->AppendCalledComputation(module_->AddComputation(std::move(branch)));
      operands.push_back(x.instruction);
    }
    for (HloInstruction* operand : operands) conditional->AppendOperand(operand);
    Keep(Add(std::move(conditional)), exact && selector.exact);
  }

  std::mt19937_64 rng_;
  RandomModuleOptions options_;
  std::unique_ptr<HloModule> module_;
  std::unique_ptr<HloComputation> entry_;
  std::vector<Value> values_;
  int parameters_ = 0;
};

}  // namespace

std::unique_ptr<HloModule> GenerateRandomModule(uint64_t seed, const RandomModuleOptions& options) {
  return Generator(seed, options).Build();
}

}  // namespace hloc::random_hlo
