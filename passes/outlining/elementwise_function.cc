// Scalar evaluation of elementwise cones and the GELU references (see
// elementwise_function.h).
#include "passes/outlining/elementwise_function.h"

#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "passes/pattern/matcher.h"

namespace hloc {
namespace {

constexpr int64_t kMaxConeInstructions = 4096;

absl::StatusOr<double> Unary(HloOpcode op, double x) {
  switch (op) {
    case HloOpcode::kAbs:
      return std::fabs(x);
    case HloOpcode::kNegate:
      return -x;
    case HloOpcode::kExp:
      return std::exp(x);
    case HloOpcode::kExpm1:
      return std::expm1(x);
    case HloOpcode::kLog:
      return std::log(x);
    case HloOpcode::kLog1p:
      return std::log1p(x);
    case HloOpcode::kTanh:
      return std::tanh(x);
    case HloOpcode::kSqrt:
      return std::sqrt(x);
    case HloOpcode::kRsqrt:
      return 1 / std::sqrt(x);
    case HloOpcode::kCbrt:
      return std::cbrt(x);
    case HloOpcode::kSin:
      return std::sin(x);
    case HloOpcode::kCos:
      return std::cos(x);
    case HloOpcode::kTan:
      return std::tan(x);
    case HloOpcode::kErf:
      return std::erf(x);
    case HloOpcode::kLogistic:
      return 1 / (1 + std::exp(-x));
    case HloOpcode::kSign:
      return std::isnan(x) ? x : (x > 0) - (x < 0);
    case HloOpcode::kFloor:
      return std::floor(x);
    case HloOpcode::kCeil:
      return std::ceil(x);
    case HloOpcode::kRoundNearestAfz:
      return std::round(x);
    case HloOpcode::kRoundNearestEven:
      return std::nearbyint(x);
    case HloOpcode::kCopy:
      return x;
    case HloOpcode::kIsFinite:
      return std::isfinite(x) ? 1.0 : 0.0;
    case HloOpcode::kNot:
      return x == 0 ? 1.0 : 0.0;  // pred only (checked by the caller)
    default:
      return absl::UnimplementedError(absl::StrCat("cannot evaluate ", HloOpcodeName(op)));
  }
}

absl::StatusOr<double> Binary(const HloInstruction& i, double a, double b) {
  switch (i.opcode()) {
    case HloOpcode::kAdd:
      return a + b;
    case HloOpcode::kSubtract:
      return a - b;
    case HloOpcode::kMultiply:
      return a * b;
    case HloOpcode::kDivide:
      return a / b;
    case HloOpcode::kMaximum:
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    case HloOpcode::kMinimum:
      return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    case HloOpcode::kPower:
      return std::pow(a, b);
    case HloOpcode::kAtan2:
      return std::atan2(a, b);
    case HloOpcode::kRemainder:
      return std::fmod(a, b);
    case HloOpcode::kAnd:
      return (a != 0 && b != 0) ? 1.0 : 0.0;
    case HloOpcode::kOr:
      return (a != 0 || b != 0) ? 1.0 : 0.0;
    case HloOpcode::kXor:
      return ((a != 0) != (b != 0)) ? 1.0 : 0.0;
    case HloOpcode::kCompare:
      switch (i.attrs().comparison_direction) {
        case ComparisonDirection::kEq:
          return a == b ? 1.0 : 0.0;
        case ComparisonDirection::kNe:
          return a != b ? 1.0 : 0.0;
        case ComparisonDirection::kGe:
          return a >= b ? 1.0 : 0.0;
        case ComparisonDirection::kGt:
          return a > b ? 1.0 : 0.0;
        case ComparisonDirection::kLe:
          return a <= b ? 1.0 : 0.0;
        case ComparisonDirection::kLt:
          return a < b ? 1.0 : 0.0;
      }
      break;
    default:
      break;
  }
  return absl::UnimplementedError(absl::StrCat("cannot evaluate ", HloOpcodeName(i.opcode())));
}

// Types whose values survive a trip through double (pred as 0/1).
bool EvaluableType(PrimitiveType type) { return IsFloatingPoint(type) || type == xla::PRED; }

}  // namespace

absl::StatusOr<std::vector<double>> EvaluateElementwiseCone(const HloInstruction* root,
                                                            const HloInstruction* input,
                                                            absl::Span<const double> xs) {
  // Post order of the cone, stopping at the input and at constants.
  std::vector<const HloInstruction*> order;
  absl::flat_hash_set<const HloInstruction*> visited;
  std::vector<std::pair<const HloInstruction*, bool>> stack = {{root, false}};
  while (!stack.empty()) {
    auto [i, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(i);
      continue;
    }
    if (i == input || !visited.insert(i).second) continue;
    if (static_cast<int64_t>(visited.size()) > kMaxConeInstructions) {
      return absl::ResourceExhaustedError("elementwise cone too large to evaluate");
    }
    stack.push_back({i, true});
    bool leaf = i->opcode() == HloOpcode::kConstant || i->opcode() == HloOpcode::kBroadcast;
    if (!leaf) {
      for (const HloInstruction* operand : i->operands()) stack.push_back({operand, false});
    }
  }
  absl::flat_hash_map<const HloInstruction*, double> constants;
  for (const HloInstruction* i : order) {
    if (!EvaluableType(i->shape().element_type())) {
      return absl::UnimplementedError(absl::StrCat(i->name(), ": ",
                                                   PrimitiveTypeName(i->shape().element_type()),
                                                   " values are not evaluated"));
    }
    if (i->opcode() == HloOpcode::kConstant || i->opcode() == HloOpcode::kBroadcast) {
      std::optional<double> value = pattern::SplatValue(i);
      if (!value.has_value()) {
        return absl::UnimplementedError(absl::StrCat(i->name(), " is not a splat constant"));
      }
      constants[i] = *value;
    } else if (!i->IsElementwise() && i->opcode() != HloOpcode::kConvert) {
      return absl::UnimplementedError(absl::StrCat(i->name(), " is not elementwise"));
    }
  }
  std::vector<double> results;
  results.reserve(xs.size());
  absl::flat_hash_map<const HloInstruction*, double> value;
  for (double x : xs) {
    value = constants;
    value[input] = x;
    for (const HloInstruction* i : order) {
      if (constants.contains(i)) continue;
      auto operand = [&](int64_t k) { return value.at(i->operand(k)); };
      double v = 0;
      switch (i->operand_count()) {
        case 1: {
          if (i->opcode() == HloOpcode::kConvert) {
            v = i->shape().element_type() == xla::PRED ? (operand(0) != 0) : operand(0);
            break;
          }
          absl::StatusOr<double> r = Unary(i->opcode(), operand(0));
          if (!r.ok()) return r.status();
          v = *r;
          break;
        }
        case 2: {
          absl::StatusOr<double> r = Binary(*i, operand(0), operand(1));
          if (!r.ok()) return r.status();
          v = *r;
          break;
        }
        case 3:
          if (i->opcode() == HloOpcode::kSelect) {
            v = operand(0) != 0 ? operand(1) : operand(2);
          } else if (i->opcode() == HloOpcode::kClamp) {
            v = std::min(std::max(operand(1), operand(0)), operand(2));
          } else {
            return absl::UnimplementedError(absl::StrCat("cannot evaluate ", i->name()));
          }
          break;
        default:
          return absl::UnimplementedError(absl::StrCat("cannot evaluate ", i->name()));
      }
      value[i] = v;
    }
    results.push_back(value.at(root));
  }
  return results;
}

const std::vector<ReferenceFunction>& GeluReferences() {
  static const auto* references = new std::vector<ReferenceFunction>{
      {"gelu_tanh",
       [](double x) {
         const double k = std::sqrt(2 / M_PI);
         return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
       }},
      {"gelu_erf", [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }},
  };
  return *references;
}

std::string Identification::ToString() const {
  return absl::StrCat(name.empty() ? "unrecognised, closest " : "", closest,
                      " (max relative error ", max_error, ")");
}

absl::StatusOr<Identification> IdentifyElementwiseFunction(
    const HloInstruction* root, const HloInstruction* input,
    const std::vector<ReferenceFunction>& references) {
  // Both signs, |x| < 1 and > 1 (polynomial expansions switch there), tails.
  std::vector<double> xs;
  for (int k = -48; k <= 48; ++k) xs.push_back(k / 8.0 + 0.03125);
  for (double x : {0.0, 1e-3, -1e-3, 0.7, -0.7, 0.999, -0.999, 1.001, -1.001}) xs.push_back(x);
  absl::StatusOr<std::vector<double>> ys = EvaluateElementwiseCone(root, input, xs);
  if (!ys.ok()) return ys.status();
  PrimitiveType type = root->shape().element_type();
  double tolerance = (type == xla::F32 || type == xla::F64) ? 1e-5 : 2e-2;
  Identification best;
  best.max_error = INFINITY;
  for (const ReferenceFunction& reference : references) {
    double worst = 0;
    for (size_t k = 0; k < xs.size(); ++k) {
      double want = reference.f(xs[k]);
      double got = (*ys)[k];
      double error = std::fabs(got - want) / std::max(1.0, std::fabs(want));
      if (std::isnan(error)) error = INFINITY;
      worst = std::max(worst, error);
    }
    if (worst < best.max_error) {
      best.max_error = worst;
      best.closest = reference.name;
    }
  }
  if (best.max_error <= tolerance) best.name = best.closest;
  return best;
}

}  // namespace hloc
