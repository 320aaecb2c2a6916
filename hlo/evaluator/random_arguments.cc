// Random entry arguments (see random_arguments.h).
#include "hlo/evaluator/random_arguments.h"

#include <algorithm>
#include <complex>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/evaluator/fast_half.h"
#include "hlo/float_formats.h"
#include "hlo/status_macros.h"

namespace hloc {
namespace {

class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

absl::Status Fill(Literal* literal, SplitMix& rng, int64_t index_bound) {
  const PrimitiveType type = literal->shape().element_type();
  const int64_t n = literal->element_count();
  if (literal->shape().IsTuple()) {
    for (Literal& e : *literal->mutable_tuple_elements()) {
      HLOC_RETURN_IF_ERROR(Fill(&e, rng, index_bound));
    }
    return absl::OkStatus();
  }
  if (!literal->shape().IsArray()) return absl::OkStatus();  // Tokens.
  bool any_nonzero = false;
  // The common float types get a typed loop (these arguments can be large).
  if (type == xla::F32 || type == xla::F16 || type == xla::BF16) {
    for (int64_t i = 0; i < n; ++i) {
      const float v = static_cast<float>(rng.Uniform() * 2 - 1);
      if (type == xla::F32) {
        literal->mutable_data<float>()[i] = v;
      } else {
        literal->mutable_data<uint16_t>()[i] =
            type == xla::F16 ? eval::FastFloatToHalf(v) : FloatToBFloat16(v);
      }
      any_nonzero |= v != 0;
    }
  }
  for (int64_t i = 0; i < n && !(type == xla::F32 || type == xla::F16 || type == xla::BF16); ++i) {
    if (IsComplex(type)) {
      std::complex<double> v(rng.Uniform() * 2 - 1, rng.Uniform() * 2 - 1);
      literal->SetFromComplex(i, v);
      any_nonzero |= literal->GetAsComplex(i) != std::complex<double>(0, 0);
    } else if (IsFloatingPoint(type)) {
      literal->SetFromDouble(i, rng.Uniform() * 2 - 1);
      any_nonzero |= literal->GetAsDouble(i) != 0;
    } else if (type == xla::PRED) {
      literal->SetFromInt64(i, rng.Next() & 1);
      any_nonzero |= literal->GetAsInt64(i) != 0;
    } else if (IsInteger(type)) {
      int64_t v;
      if (index_bound > 0) {
        v = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(index_bound));
      } else if (IsUnsignedInteger(type)) {
        v = static_cast<int64_t>(rng.Next() % 17);
      } else {
        v = static_cast<int64_t>(rng.Next() % 17) - 8;
      }
      literal->SetFromInt64(i, v);
      any_nonzero |= v != 0;
    } else {
      return absl::UnimplementedError(
          absl::StrCat("no random values for element type ", PrimitiveTypeName(type)));
    }
  }
  if (!any_nonzero && n > 0 && (index_bound <= 0 || index_bound > 1)) {
    if (IsComplex(type)) {
      literal->SetFromComplex(0, {0.5, 0});
    } else if (IsFloatingPoint(type)) {
      literal->SetFromDouble(0, 0.5);
    } else {
      literal->SetFromInt64(0, 1);
    }
  }
  return absl::OkStatus();
}

// Ops through which an index value flows unchanged enough that its range
// carries over.
bool PassesIndexThrough(HloOpcode op) {
  switch (op) {
    case HloOpcode::kConvert: case HloOpcode::kReshape: case HloOpcode::kBroadcast:
    case HloOpcode::kCopy: case HloOpcode::kBitcast: case HloOpcode::kTranspose:
    case HloOpcode::kSlice: case HloOpcode::kConcatenate: case HloOpcode::kDynamicSlice:
      return true;
    default:
      return false;
  }
}

// Upper bound (exclusive) for a value used as operand `operand_number` of
// `user`, or 0 when that use does not constrain it.
int64_t IndexBoundForUse(const HloInstruction& user, int64_t operand_number) {
  const HloAttributes& a = user.attrs();
  int64_t bound = std::numeric_limits<int64_t>::max();
  auto tighten = [&](int64_t dim_size, int64_t window) {
    bound = std::min(bound, std::max<int64_t>(1, dim_size - window + 1));
  };
  const Shape& operand = user.operand(0)->shape();
  switch (user.opcode()) {
    case HloOpcode::kGather:
      if (operand_number != 1) return 0;
      for (int64_t d : a.gather_dimension_numbers->start_index_map()) {
        if (d >= 0 && d < operand.rank() && d < static_cast<int64_t>(a.gather_slice_sizes.size())) {
          tighten(operand.dimensions(d), a.gather_slice_sizes[d]);
        }
      }
      break;
    case HloOpcode::kScatter: {
      const int64_t n = (user.operand_count() - 1) / 2;
      if (operand_number != n) return 0;
      // Window sizes are not easy to recover per dim; keep indices valid as
      // single-element starts, which also keeps 1-sized windows in range.
      for (int64_t d : a.scatter_dimension_numbers->scatter_dims_to_operand_dims()) {
        if (d >= 0 && d < operand.rank()) tighten(operand.dimensions(d), 1);
      }
      break;
    }
    case HloOpcode::kDynamicSlice: {
      if (operand_number < 1) return 0;
      const int64_t d = operand_number - 1;
      if (d < operand.rank() && d < static_cast<int64_t>(a.dynamic_slice_sizes.size())) {
        tighten(operand.dimensions(d), a.dynamic_slice_sizes[d]);
      }
      break;
    }
    case HloOpcode::kDynamicUpdateSlice: {
      if (operand_number < 2) return 0;
      const int64_t d = operand_number - 2;
      const Shape& update = user.operand(1)->shape();
      if (d < operand.rank() && d < update.rank()) {
        tighten(operand.dimensions(d), update.dimensions(d));
      }
      break;
    }
    default:
      return 0;
  }
  return bound == std::numeric_limits<int64_t>::max() ? 0 : bound;
}

// `shape` with its bounded dynamic dimensions made static at their bounds,
// tuple leaves included (unbounded ones stay, and are refused later).
void AtBounds(Shape* shape) {
  if (shape->IsTuple()) {
    for (Shape& element : *shape->mutable_tuple_shapes()) AtBounds(&element);
    return;
  }
  if (!shape->IsArray()) return;
  for (int64_t d = 0; d < shape->rank(); ++d) {
    if (shape->dimensions(d) != Shape::kUnboundedSize) shape->set_dynamic_dimension(d, false);
  }
}

// The tightest bound over every index use reachable from `value`.
int64_t IndexBound(const HloInstruction* value, absl::flat_hash_set<const HloInstruction*>& seen) {
  if (!seen.insert(value).second) return 0;
  int64_t bound = 0;
  auto merge = [&](int64_t b) {
    if (b > 0) bound = bound == 0 ? b : std::min(bound, b);
  };
  for (const HloInstruction* user : value->users()) {
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) != value) continue;
      merge(IndexBoundForUse(*user, i));
      if (PassesIndexThrough(user->opcode()) && (user->opcode() != HloOpcode::kDynamicSlice || i == 0)) {
        merge(IndexBound(user, seen));
      }
    }
  }
  return bound;
}

}  // namespace

absl::StatusOr<Literal> MakeRandomLiteral(const Shape& shape, uint64_t seed, int64_t index_bound) {
  HLOC_ASSIGN_OR_RETURN(Literal literal, Literal::Create(shape));
  SplitMix rng(seed);
  HLOC_RETURN_IF_ERROR(Fill(&literal, rng, index_bound));
  return literal;
}

absl::StatusOr<std::vector<Literal>> MakeRandomArguments(const HloModule& module, uint64_t seed) {
  const HloComputation* entry = module.entry();
  if (entry == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " has no entry"));
  }
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* param = entry->parameter(i);
    int64_t bound = 0;
    if (param->shape().IsArray() && IsInteger(param->shape().element_type())) {
      absl::flat_hash_set<const HloInstruction*> seen;
      bound = IndexBound(param, seen);
    }
    // A bounded dynamic parameter (f32[<=8], or a tuple holding one) gets
    // an argument at its bound.
    Shape shape = param->shape();
    AtBounds(&shape);
    absl::StatusOr<Literal> literal =
        MakeRandomLiteral(shape, seed * 0x100000001b3ull + static_cast<uint64_t>(i) + 1, bound);
    if (!literal.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("parameter %", param->name(), ": ",
                                                     literal.status().message()));
    }
    args.push_back(*std::move(literal));
  }
  return args;
}

}  // namespace hloc
