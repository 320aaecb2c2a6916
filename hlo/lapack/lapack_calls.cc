// Decoding and checking JAX's LAPACK custom calls (see lapack_calls.h); the
// kernels that run them are in lapack_kernels.cc.
#include "hlo/lapack/lapack_calls.h"

#include <algorithm>
#include <climits>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/ffi_attributes.h"

namespace hloc {
namespace lapack {
namespace {

struct RoutineName {
  Routine routine;
  const char* real;     // The name for s/d.
  const char* complex;  // The name for c/z.
};

constexpr RoutineName kRoutines[] = {
    {Routine::kTrsm, "trsm", "trsm"},    {Routine::kGetrf, "getrf", "getrf"},
    {Routine::kGeqrf, "geqrf", "geqrf"}, {Routine::kGeqp3, "geqp3", "geqp3"},
    {Routine::kOrgqr, "orgqr", "ungqr"}, {Routine::kPotrf, "potrf", "potrf"},
    {Routine::kGesdd, "gesdd", "gesdd"}, {Routine::kGesvd, "gesvd", "gesvd"},
    {Routine::kSyevd, "syevd", "heevd"}, {Routine::kGeev, "geev", "geev"},
    {Routine::kGees, "gees", "gees"},    {Routine::kGehrd, "gehrd", "gehrd"},
    {Routine::kSytrd, "sytrd", "hetrd"}, {Routine::kGtsv, "gtsv", "gtsv"},
};

std::string KnownTargets() {
  std::vector<std::string> names;
  for (const RoutineName& r : kRoutines) {
    names.push_back(r.real == std::string(r.complex) ? r.real
                                                     : absl::StrCat(r.real, "/", r.complex));
  }
  return absl::StrCat("lapack_{s,d,c,z}{", absl::StrJoin(names, ","), "}_ffi");
}

// Checks shapes against what a routine takes; errors name the instruction.
class ShapeChecker {
 public:
  explicit ShapeChecker(const HloInstruction& hlo) : hlo_(hlo) {
    for (const HloInstruction* operand : hlo.operands()) operands_.push_back(&operand->shape());
    if (hlo.shape().IsTuple()) {
      for (const Shape& leaf : hlo.shape().tuple_shapes()) results_.push_back(&leaf);
    } else {
      results_.push_back(&hlo.shape());
    }
  }

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("instruction %", hlo_.name(), " (custom-call ",
                                                   hlo_.attrs().custom_call_target, "): ", what));
  }

  // `operands` operands and `results` results (a tuple unless one).
  absl::Status Counts(size_t operands, size_t results) const {
    if (operands_.size() != operands) {
      return Error(absl::StrCat("takes ", operands, " operand(s), not ", operands_.size()));
    }
    if (results_.size() != results || (results > 1) != hlo_.shape().IsTuple()) {
      return Error(absl::StrCat("returns ", results == 1 ? "one array" : "a tuple of ",
                                results == 1 ? "" : absl::StrCat(results, " arrays"),
                                ", not ", hlo_.shape().ToString(false)));
    }
    for (const Shape* shape : operands_) {
      if (!shape->IsArray()) return Error("every operand must be an array");
    }
    for (const Shape* shape : results_) {
      if (!shape->IsArray()) return Error("every result must be an array");
    }
    return absl::OkStatus();
  }

  // The batch dimensions: operand 0's dimensions but its last `core`.
  absl::Status Batch(int64_t core) {
    const Shape& a = *operands_[0];
    if (a.rank() < core) {
      return Error(absl::StrCat("operand 0 needs at least ", core, " dimensions, has ",
                                a.ToString(false)));
    }
    for (int64_t i = 0; i < a.rank(); ++i) {
      if (a.is_dynamic_dimension(i)) return Error("dynamic dimensions are not supported");
    }
    batch_.assign(a.dimensions().begin(), a.dimensions().end() - core);
    return absl::OkStatus();
  }

  absl::Status Operand(size_t i, PrimitiveType type, std::vector<int64_t> core) const {
    return Check(*operands_[i], absl::StrCat("operand ", i), type, std::move(core));
  }
  absl::Status Result(size_t i, PrimitiveType type, std::vector<int64_t> core) const {
    return Check(*results_[i], absl::StrCat("result ", i), type, std::move(core));
  }
  // A result whose batch dimensions and rank are fixed but whose sizes are
  // not (the u and vt a mode does not compute).
  absl::Status ResultRank(size_t i, PrimitiveType type, int64_t core) const {
    const Shape& shape = *results_[i];
    if (shape.element_type() != type || shape.rank() != static_cast<int64_t>(batch_.size()) + core ||
        !std::equal(batch_.begin(), batch_.end(), shape.dimensions().begin())) {
      return Error(absl::StrCat("result ", i, " must be ", PrimitiveTypeName(type), " with batch ",
                                "dimensions [", absl::StrJoin(batch_, ","), "] and ", core,
                                " more, not ", shape.ToString(false)));
    }
    return absl::OkStatus();
  }
  const Shape& operand(size_t i) const { return *operands_[i]; }
  int64_t dim(int64_t from_end) const {  // Operand 0's dimension, counted from its end (1 = last).
    const Shape& a = *operands_[0];
    return a.dimensions()[a.rank() - from_end];
  }

 private:
  absl::Status Check(const Shape& shape, absl::string_view what, PrimitiveType type,
                     std::vector<int64_t> core) const {
    std::vector<int64_t> want = batch_;
    want.insert(want.end(), core.begin(), core.end());
    if (shape.element_type() != type || shape.dimensions() != want) {
      return Error(absl::StrCat(what, " must be ", PrimitiveTypeName(type), "[",
                                absl::StrJoin(want, ","), "], not ", shape.ToString(false)));
    }
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (shape.is_dynamic_dimension(d)) return Error("dynamic dimensions are not supported");
    }
    return absl::OkStatus();
  }

  const HloInstruction& hlo_;
  std::vector<const Shape*> operands_, results_;
  std::vector<int64_t> batch_;
};

absl::StatusOr<char> OneOf(const ShapeChecker& check, const FfiAttributes& attributes,
                           absl::string_view name, absl::string_view allowed) {
  absl::StatusOr<char> value = attributes.Character(name);
  if (!value.ok()) return check.Error(value.status().message());
  if (!absl::StrContains(allowed, *value)) {
    return check.Error(absl::StrCat("attribute ", name, " = ", static_cast<int>(*value), " ('",
                                    std::string(1, *value), "') is not one of the characters '",
                                    allowed, "'"));
  }
  return *value;
}

// Checks shapes and reads attributes for `call.routine`.
absl::Status CheckCall(const HloInstruction& hlo, const FfiAttributes& attributes,
                       LapackCall& call) {
  ShapeChecker check(hlo);
  const PrimitiveType t = call.type;
  const bool complex = IsComplex(t);
  const PrimitiveType real = complex ? ComplexComponentType(t) : t;
  const PrimitiveType to_complex = t == xla::F32 ? xla::C64 : t == xla::F64 ? xla::C128 : t;
  const PrimitiveType s32 = xla::S32;
  // Most routines take one matrix; read its sizes after the counts check.
  int64_t m = 0, n = 0;
  auto matrix = [&](size_t operands, size_t results) -> absl::Status {
    if (absl::Status s = check.Counts(operands, results); !s.ok()) return s;
    if (absl::Status s = check.Batch(2); !s.ok()) return s;
    m = check.dim(2);
    n = check.dim(1);
    if (m > INT_MAX || n > INT_MAX || m * n > INT_MAX) {
      return check.Error(absl::StrCat("a ", m, " x ", n,
                                      " matrix is larger than LAPACK's 32-bit indices allow"));
    }
    return check.Operand(0, t, {m, n});
  };
  auto square = [&](size_t operands, size_t results) -> absl::Status {
    if (absl::Status s = matrix(operands, results); !s.ok()) return s;
    if (m != n) return check.Error(absl::StrCat("the matrix must be square, not ", m, " x ", n));
    return absl::OkStatus();
  };
#define HLOC_CHECK(expr)                \
  do {                                  \
    absl::Status status_ = (expr);      \
    if (!status_.ok()) return status_;  \
  } while (0)
#define HLOC_READ(field, name, allowed)                                     \
  do {                                                                      \
    absl::StatusOr<char> value_ = OneOf(check, attributes, name, allowed); \
    if (!value_.ok()) return value_.status();                               \
    call.field = *value_;                                                   \
  } while (0)
  switch (call.routine) {
    case Routine::kTrsm: {
      HLOC_CHECK(check.Counts(2, 1));
      HLOC_CHECK(check.Batch(2));
      HLOC_READ(side, "side", "LR");
      HLOC_READ(uplo, "uplo", "LU");
      HLOC_READ(trans, "trans_x", "NTC");
      HLOC_READ(diag, "diag", "NU");
      const int64_t a = check.dim(1);
      if (check.dim(2) != a) return check.Error("operand 0 (the triangular matrix) must be square");
      const Shape& b = check.operand(1);
      if (b.rank() < 2) return check.Error("operand 1 needs at least 2 dimensions");
      const int64_t rows = b.dimensions()[b.rank() - 2], cols = b.dimensions()[b.rank() - 1];
      if ((call.side == 'L' ? rows : cols) != a) {
        return check.Error(absl::StrCat("operand 1 ", b.ToString(false), " does not fit a ", a,
                                        " x ", a, " triangular matrix on the ",
                                        call.side == 'L' ? "left" : "right"));
      }
      if (rows * cols > INT_MAX || a * a > INT_MAX) {
        return check.Error("matrices larger than LAPACK's 32-bit indices allow");
      }
      HLOC_CHECK(check.Operand(0, t, {a, a}));
      HLOC_CHECK(check.Operand(1, t, {rows, cols}));
      return check.Result(0, t, {rows, cols});
    }
    case Routine::kGetrf:
      HLOC_CHECK(matrix(1, 3));
      HLOC_CHECK(check.Result(0, t, {m, n}));
      HLOC_CHECK(check.Result(1, s32, {std::min(m, n)}));
      return check.Result(2, s32, {});
    case Routine::kGeqrf:
      HLOC_CHECK(matrix(1, 2));
      HLOC_CHECK(check.Result(0, t, {m, n}));
      return check.Result(1, t, {std::min(m, n)});
    case Routine::kGeqp3:
      HLOC_CHECK(matrix(2, 3));
      HLOC_CHECK(check.Operand(1, s32, {n}));
      HLOC_CHECK(check.Result(0, t, {m, n}));
      HLOC_CHECK(check.Result(1, s32, {n}));
      return check.Result(2, t, {std::min(m, n)});
    case Routine::kOrgqr: {
      HLOC_CHECK(matrix(2, 1));
      const Shape& tau = check.operand(1);
      if (tau.rank() < 1) return check.Error("operand 1 (tau) needs a dimension");
      const int64_t reflectors = tau.dimensions().back();
      HLOC_CHECK(check.Operand(1, t, {reflectors}));
      if (!(m >= n && n >= reflectors)) {
        return check.Error(absl::StrCat("needs rows >= columns >= reflectors, not ", m, " x ", n,
                                        " with ", reflectors));
      }
      return check.Result(0, t, {m, n});
    }
    case Routine::kPotrf:
      HLOC_CHECK(square(1, 2));
      HLOC_READ(uplo, "uplo", "LU");
      HLOC_CHECK(check.Result(0, t, {n, n}));
      return check.Result(1, s32, {});
    case Routine::kGesdd:
    case Routine::kGesvd: {
      HLOC_CHECK(matrix(1, 5));
      HLOC_READ(mode, "mode", "ASN");
      const int64_t min = std::min(m, n);
      HLOC_CHECK(check.Result(0, t, {m, n}));
      HLOC_CHECK(check.Result(1, real, {min}));
      if (call.mode == 'N') {
        HLOC_CHECK(check.ResultRank(2, t, 2));
        HLOC_CHECK(check.ResultRank(3, t, 2));
      } else {
        HLOC_CHECK(check.Result(2, t, {m, call.mode == 'A' ? m : min}));
        HLOC_CHECK(check.Result(3, t, {call.mode == 'A' ? n : min, n}));
      }
      return check.Result(4, s32, {});
    }
    case Routine::kSyevd:
      HLOC_CHECK(square(1, 3));
      HLOC_READ(mode, "mode", "VN");
      HLOC_READ(uplo, "uplo", "LU");
      HLOC_CHECK(check.Result(0, t, {n, n}));
      HLOC_CHECK(check.Result(1, real, {n}));
      return check.Result(2, s32, {});
    case Routine::kGeev: {
      HLOC_CHECK(square(1, complex ? 4 : 5));
      HLOC_READ(left, "compute_left", "VN");
      HLOC_READ(right, "compute_right", "VN");
      size_t r = 0;
      if (complex) {
        HLOC_CHECK(check.Result(r++, t, {n}));
      } else {
        HLOC_CHECK(check.Result(r++, t, {n}));
        HLOC_CHECK(check.Result(r++, t, {n}));
      }
      HLOC_CHECK(check.Result(r++, to_complex, {n, n}));
      HLOC_CHECK(check.Result(r++, to_complex, {n, n}));
      return check.Result(r, s32, {});
    }
    case Routine::kGees: {
      HLOC_CHECK(square(1, complex ? 5 : 6));
      HLOC_READ(mode, "mode", "VN");
      {
        absl::StatusOr<char> sort = OneOf(check, attributes, "sort", "NS");
        if (!sort.ok()) return sort.status();
        if (*sort != 'N') {
          return check.Error("sorted Schur forms (sort = 'S') need a selection function; "
                             "only sort = 'N' is supported");
        }
      }
      size_t r = 0;
      HLOC_CHECK(check.Result(r++, t, {n, n}));
      HLOC_CHECK(check.Result(r++, t, {n, n}));
      HLOC_CHECK(check.Result(r++, t, {n}));
      if (!complex) HLOC_CHECK(check.Result(r++, t, {n}));
      HLOC_CHECK(check.Result(r++, s32, {}));
      return check.Result(r, s32, {});
    }
    case Routine::kGehrd: {
      HLOC_CHECK(square(1, 3));
      absl::StatusOr<int64_t> low = attributes.Integer("low");
      absl::StatusOr<int64_t> high = attributes.Integer("high");
      if (!low.ok()) return check.Error(low.status().message());
      if (!high.ok()) return check.Error(high.status().message());
      // LAPACK's rule: 1 <= ilo <= ihi <= n when n > 0, ilo = 1 and ihi = 0 when n = 0.
      const bool valid = n == 0 ? (*low == 1 && *high == 0)
                                : (1 <= *low && *low <= *high && *high <= n);
      if (!valid) {
        return check.Error(absl::StrCat("low = ", *low, ", high = ", *high,
                                        " must satisfy 1 <= low <= high <= ", n));
      }
      call.low = static_cast<int32_t>(*low);
      call.high = static_cast<int32_t>(*high);
      HLOC_CHECK(check.Result(0, t, {n, n}));
      HLOC_CHECK(check.Result(1, t, {std::max<int64_t>(n - 1, 0)}));
      return check.Result(2, s32, {});
    }
    case Routine::kSytrd:
      HLOC_CHECK(square(1, 5));
      HLOC_READ(uplo, "uplo", "LU");
      HLOC_CHECK(check.Result(0, t, {n, n}));
      HLOC_CHECK(check.Result(1, real, {n}));
      HLOC_CHECK(check.Result(2, real, {std::max<int64_t>(n - 1, 0)}));
      HLOC_CHECK(check.Result(3, t, {std::max<int64_t>(n - 1, 0)}));
      return check.Result(4, s32, {});
    case Routine::kGtsv: {
      HLOC_CHECK(check.Counts(4, 5));
      const Shape& b = check.operand(3);
      if (b.rank() < 2) return check.Error("operand 3 (b) needs at least 2 dimensions");
      // The batch dimensions come from the diagonals (rank of b minus one).
      HLOC_CHECK(check.Batch(1));
      const int64_t rows = check.dim(1), cols = b.dimensions().back();
      if (rows * std::max<int64_t>(cols, 1) > INT_MAX) {
        return check.Error("larger than LAPACK's 32-bit indices allow");
      }
      for (size_t i = 0; i < 3; ++i) HLOC_CHECK(check.Operand(i, t, {rows}));
      HLOC_CHECK(check.Operand(3, t, {rows, cols}));
      for (size_t i = 0; i < 3; ++i) HLOC_CHECK(check.Result(i, t, {rows}));
      HLOC_CHECK(check.Result(3, t, {rows, cols}));
      return check.Result(4, s32, {});
    }
  }
#undef HLOC_READ
#undef HLOC_CHECK
  return check.Error("unknown routine");
}

}  // namespace

bool IsLapackTarget(absl::string_view target) {
  return absl::StartsWith(target, "lapack_") && absl::EndsWith(target, "_ffi");
}

absl::StatusOr<LapackCall> DecodeLapackCall(const HloInstruction& hlo) {
  const std::string& target = hlo.attrs().custom_call_target;
  auto unknown = [&]() {
    return absl::UnimplementedError(absl::StrCat("instruction %", hlo.name(),
                                                 ": custom-call target \"", target,
                                                 "\" is not one hloc implements (",
                                                 KnownTargets(), ")"));
  };
  if (!IsLapackTarget(target)) return unknown();
  absl::string_view name = target;
  name.remove_prefix(7);
  name.remove_suffix(4);
  if (name.size() < 2) return unknown();
  LapackCall call;
  switch (name[0]) {
    case 's': call.type = xla::F32; break;
    case 'd': call.type = xla::F64; break;
    case 'c': call.type = xla::C64; break;
    case 'z': call.type = xla::C128; break;
    default: return unknown();
  }
  const absl::string_view routine = name.substr(1);
  const bool complex = IsComplex(call.type);
  bool found = false;
  for (const RoutineName& r : kRoutines) {
    if (routine == (complex ? r.complex : r.real)) {
      call.routine = r.routine;
      found = true;
    }
  }
  if (!found) return unknown();
  call.name = std::string(name);
  absl::StatusOr<FfiAttributes> attributes = FfiAttributes::Parse(hlo.backend_config());
  if (!attributes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("instruction %", hlo.name(), " (custom-call ", target,
                     "): backend_config: ", attributes.status().message()));
  }
  absl::Status status = CheckCall(hlo, *attributes, call);
  if (!status.ok()) return status;
  return call;
}

absl::StatusOr<std::shared_ptr<const CustomCallHandler>> MakeLapackHandler(
    const HloInstruction& hlo) {
  absl::StatusOr<LapackCall> call = DecodeLapackCall(hlo);
  if (!call.ok()) return call.status();
  auto handler = std::make_shared<CustomCallHandler>();
  handler->target = hlo.attrs().custom_call_target;
  handler->function = [call = *std::move(call)](const CustomCallFrame& frame) {
    return RunLapackCall(call, frame);
  };
  return std::shared_ptr<const CustomCallHandler>(std::move(handler));
}

}  // namespace lapack
}  // namespace hloc
