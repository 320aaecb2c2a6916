// Literal comparison with tolerances (see compare.h).
#include "hlo/evaluator/compare.h"

#include <cmath>
#include <complex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {

Tolerance DefaultTolerance(PrimitiveType type) {
  Tolerance t;
  switch (type) {
    case xla::F64: case xla::C128: t.rtol = 1e-9; t.atol = 1e-12; break;
    case xla::F32: case xla::C64: t.rtol = 1e-5; t.atol = 1e-6; break;
    case xla::F16: t.rtol = 1e-3; t.atol = 1e-4; break;
    case xla::BF16: t.rtol = 1e-2; t.atol = 1e-3; break;
    default:
      if (IsNarrowFloat(type)) {
        t.rtol = 1e-1;
        t.atol = 1e-2;
      } else {
        t.rtol = 0;
        t.atol = 0;
      }
  }
  return t;
}

namespace {

std::vector<int64_t> Unflatten(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    index[d] = dims[d] > 0 ? linear % dims[d] : 0;
    linear = dims[d] > 0 ? linear / dims[d] : 0;
  }
  return index;
}

struct Walker {
  const Tolerance& user;
  ComparisonReport& report;
  double worst_score = -1;  // How far past tolerance the worst element is (ratio).

  void Array(const Literal& e, const Literal& a, std::vector<int64_t>& path) {
    const PrimitiveType type = e.shape().element_type();
    const Tolerance def = DefaultTolerance(type);
    const double rtol = user.rtol.value_or(*def.rtol), atol = user.atol.value_or(*def.atol);
    const bool is_complex = IsComplex(type);
    const bool is_float = IsFloatingPoint(type) || is_complex;
    const bool is_unsigned64 = type == xla::U64;
    report.elements += e.element_count();
    for (int64_t i = 0; i < e.element_count(); ++i) {
      bool pass;
      double score;
      if (is_float) {
        std::complex<double> ev = is_complex ? e.GetAsComplex(i) : e.GetAsDouble(i);
        std::complex<double> av = is_complex ? a.GetAsComplex(i) : a.GetAsDouble(i);
        const bool e_nan = std::isnan(ev.real()) || std::isnan(ev.imag());
        const bool a_nan = std::isnan(av.real()) || std::isnan(av.imag());
        const bool e_inf = std::isinf(ev.real()) || std::isinf(ev.imag());
        const bool a_inf = std::isinf(av.real()) || std::isinf(av.imag());
        if (e_nan || a_nan) {
          pass = e_nan && a_nan;
          score = pass ? 0 : INFINITY;
        } else if (e_inf || a_inf) {
          pass = ev == av;
          score = pass ? 0 : INFINITY;
        } else {
          const double err = std::abs(av - ev);
          const double mag = std::abs(ev);
          const double allowed = atol + rtol * mag;
          pass = err <= allowed;
          score = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0);
          report.max_abs_error = std::max(report.max_abs_error, err);
          report.max_rel_error = std::max(report.max_rel_error, err / std::max(mag, 1e-30));
        }
      } else if (is_unsigned64) {
        pass = e.GetAsUint64(i) == a.GetAsUint64(i);
        score = pass ? 0 : INFINITY;
      } else {
        pass = e.GetAsInt64(i) == a.GetAsInt64(i);
        score = pass ? 0 : INFINITY;
        if (!pass) {
          const double err = std::fabs(static_cast<double>(a.GetAsInt64(i)) -
                                       static_cast<double>(e.GetAsInt64(i)));
          report.max_abs_error = std::max(report.max_abs_error, err);
        }
      }
      if (!pass) ++report.mismatches;
      if (score > worst_score) {
        worst_score = score;
        report.worst_tuple_index = path;
        report.worst_index = Unflatten(i, e.shape().dimensions());
        report.worst_expected.clear();
        report.worst_actual.clear();
        e.AppendElementTo(i, &report.worst_expected);
        a.AppendElementTo(i, &report.worst_actual);
      }
    }
  }

  bool Visit(const Literal& e, const Literal& a, std::vector<int64_t>& path) {
    if (e.shape().IsTuple() != a.shape().IsTuple() ||
        (e.shape().IsTuple() && e.tuple_elements().size() != a.tuple_elements().size()) ||
        (!e.shape().IsTuple() && !e.shape().Compatible(a.shape()))) {
      report.ok = false;
      report.message = absl::StrCat("shape mismatch at tuple index {", absl::StrJoin(path, ","),
                                    "}: expected ", e.shape().ToString(false), ", actual ",
                                    a.shape().ToString(false));
      return false;
    }
    if (e.shape().IsTuple()) {
      for (size_t i = 0; i < e.tuple_elements().size(); ++i) {
        path.push_back(static_cast<int64_t>(i));
        if (!Visit(e.tuple_elements()[i], a.tuple_elements()[i], path)) return false;
        path.pop_back();
      }
      return true;
    }
    if (e.shape().IsArray()) Array(e, a, path);
    return true;
  }
};

}  // namespace

ComparisonReport CompareLiterals(const Literal& expected, const Literal& actual,
                                 const Tolerance& tolerance) {
  ComparisonReport report;
  Walker walker{tolerance, report};
  std::vector<int64_t> path;
  if (!walker.Visit(expected, actual, path)) return report;
  report.ok = report.mismatches == 0;
  if (!report.ok) {
    report.message = absl::StrCat(report.mismatches, " of ", report.elements,
                                  " elements differ beyond tolerance");
  }
  return report;
}

std::string ComparisonReport::ToString() const {
  std::string s = ok ? "OK" : "MISMATCH";
  if (!message.empty()) absl::StrAppend(&s, ": ", message);
  absl::StrAppend(&s, " (", elements, " elements, max abs error ", max_abs_error,
                  ", max rel error ", max_rel_error);
  if (!worst_index.empty() || !worst_expected.empty()) {
    absl::StrAppend(&s, "; worst at ");
    if (!worst_tuple_index.empty()) {
      absl::StrAppend(&s, "tuple {", absl::StrJoin(worst_tuple_index, ","), "} ");
    }
    absl::StrAppend(&s, "[", absl::StrJoin(worst_index, ","), "]: expected ", worst_expected,
                    ", actual ", worst_actual);
  }
  absl::StrAppend(&s, ")");
  return s;
}

}  // namespace hloc
