// HLO text for the GPU tests (see gpu_test_modules.h).
#include "backend/gpu/gpu_test_modules.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace gpu {
namespace test_modules {
namespace {

// "f32" of "f32[4,3000]".
absl::string_view ElementType(absl::string_view shape) {
  return shape.substr(0, shape.find('['));
}

}  // namespace

std::string Binary(absl::string_view name, absl::string_view op, absl::string_view type) {
  return absl::StrCat(name, " {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT ", name, "_result = ", type, "[] ", op,
                      "(a, b)\n}\n");
}

std::string Compare(absl::string_view name, absl::string_view type, absl::string_view direction,
                    absl::string_view attributes) {
  return absl::StrCat(name, " {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n  ROOT ", name,
                      "_result = pred[] compare(a, b), direction=", direction,
                      attributes, "\n}\n");
}

std::string ArgmaxReducer(absl::string_view name) {
  return absl::StrCat(name, R"( {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
)");
}

std::string Reduce(absl::string_view name, absl::string_view operand, absl::string_view result,
                   absl::string_view dimensions, absl::string_view init,
                   absl::string_view reducer) {
  return absl::StrCat(name, " {\n  x = ", operand, " parameter(0)\n  init = ",
                      ElementType(operand), "[] constant(", init, ")\n  ROOT r = ", result,
                      " reduce(x, init), dimensions={", dimensions, "}, to_apply=", reducer,
                      "\n}\n");
}

std::string ArgmaxRows(absl::string_view name, const std::vector<int64_t>& dims,
                       absl::string_view reducer) {
  const std::string all = absl::StrJoin(dims, ",");
  const std::string kept =
      absl::StrJoin(std::vector<int64_t>(dims.begin(), dims.end() - 1), ",");
  const size_t last = dims.size() - 1;
  return absl::StrCat(name, " {\n  x = f32[", all, "] parameter(0)\n  iota = s32[", all,
                      "] iota(), iota_dimension=", last,
                      "\n  ninf = f32[] constant(-inf)\n  zero = s32[] constant(0)\n"
                      "  ROOT r = (f32[",
                      kept, "], s32[", kept, "]) reduce(x, iota, ninf, zero), dimensions={", last,
                      "}, to_apply=", reducer, "\n}\n");
}

std::string MultiOutputRows(absl::string_view name, int64_t rows, int64_t cols) {
  const std::string v = absl::StrCat("f32[", rows, "]");
  return absl::StrCat(name, " {\n  x = f32[", rows, ",", cols,
                      "] parameter(0)\n  zero = f32[] constant(0)\n  ninf = f32[] constant(-inf)\n"
                      "  s = ",
                      v, " reduce(x, zero), dimensions={1}, to_apply=add\n  m = ", v,
                      " reduce(x, ninf), dimensions={1}, to_apply=max\n  d = ", v,
                      " divide(s, m)\n  ROOT t = (", v, ", ", v, ", ", v, ") tuple(s, m, d)\n}\n");
}

std::string Sort(absl::string_view name, absl::string_view shape, int64_t dimension,
                 absl::string_view comparator) {
  return absl::StrCat(name, " {\n  x = ", shape, " parameter(0)\n  ROOT s = ", shape,
                      " sort(x), dimensions={", dimension, "}, to_apply=", comparator, "\n}\n");
}

std::string TwoShapes(absl::string_view name, int64_t square, int64_t length) {
  const std::string matrix = absl::StrCat("f32[", square, ",", square, "]");
  const std::string vector = absl::StrCat("s32[", length, "]");
  return absl::StrCat(name, " {\n  x = ", matrix, " parameter(0)\n  y = ", vector,
                      " parameter(1)\n  n = ", matrix, " negate(x)\n  a = ", vector,
                      " abs(y)\n  ROOT t = (", matrix, ", ", vector, ") tuple(n, a)\n}\n");
}

std::string Softmax(absl::string_view name, absl::string_view type, int64_t rows, int64_t cols,
                    absl::string_view max, absl::string_view add) {
  const std::string matrix = absl::StrCat(type, "[", rows, ",", cols, "]");
  const std::string vector = absl::StrCat(type, "[", rows, "]");
  return absl::StrCat(name, " {\n  x = ", matrix, " parameter(0)\n  ninf = ", type,
                      "[] constant(-inf)\n  m = ", vector,
                      " reduce(x, ninf), dimensions={1}, to_apply=", max, "\n  mb = ", matrix,
                      " broadcast(m), dimensions={0}\n  c = ", matrix, " subtract(x, mb)\n  e = ",
                      matrix, " exponential(c)\n  zero = ", type, "[] constant(0)\n  s = ", vector,
                      " reduce(e, zero), dimensions={1}, to_apply=", add, "\n  sb = ", matrix,
                      " broadcast(s), dimensions={0}\n  ROOT d = ", matrix,
                      " divide(e, sb)\n}\n");
}

std::string ScatterRows(absl::string_view name, absl::string_view type, int64_t rows,
                        int64_t cols, int64_t updates, absl::string_view combiner,
                        absl::string_view attributes) {
  const std::string operand = absl::StrCat(type, "[", rows, ",", cols, "]");
  return absl::StrCat(name, " {\n  t = ", operand, " parameter(0)\n  i = s32[", updates,
                      ",1] parameter(1)\n  u = ", type, "[", updates, ",", cols,
                      "] parameter(2)\n  ROOT s = ", operand,
                      " scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                      "scatter_dims_to_operand_dims={0}, index_vector_dim=1",
                      attributes, ", to_apply=", combiner, "\n}\n");
}

std::string Library(const std::vector<std::string>& computations, absl::string_view name) {
  return absl::StrCat("HloModule ", name, "\n", absl::StrJoin(computations, ""),
                      "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
}

std::string GemmBiasReluModule(absl::string_view name, int64_t m, int64_t k, int64_t n) {
  const std::string out = absl::StrCat("f32[", m, ",", n, "]");
  return absl::StrCat("HloModule ", name, "\nENTRY main {\n  x = f32[", m, ",", k,
                      "] parameter(0)\n  w = f32[", k, ",", n, "] parameter(1)\n  b = f32[", n,
                      "] parameter(2)\n  dot = ", out,
                      " dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  bb = ",
                      out, " broadcast(b), dimensions={1}\n  add = ", out,
                      " add(dot, bb)\n  zero = f32[] constant(0)\n  zb = ", out,
                      " broadcast(zero), dimensions={}\n  ROOT relu = ", out,
                      " maximum(add, zb)\n}\n");
}

std::string SquareGemmModule(absl::string_view name, int64_t n) {
  const std::string matrix = absl::StrCat("f32[", n, ",", n, "]");
  return absl::StrCat("HloModule ", name, "\nENTRY main {\n  a = ", matrix,
                      " parameter(0)\n  b = ", matrix, " parameter(1)\n  ROOT d = ", matrix,
                      " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
}

std::string ConvNhwcBiasReluModule(absl::string_view name, int64_t batch, int64_t size,
                                   int64_t in, int64_t out) {
  const std::string result = absl::StrCat("f32[", batch, ",", size, ",", size, ",", out, "]");
  return absl::StrCat(
      "HloModule ", name, "\nENTRY main {\n  x = f32[", batch, ",", size, ",", size, ",", in,
      "] parameter(0)\n  k = f32[3,3,", in, ",", out, "] parameter(1)\n  b = f32[", out,
      "] parameter(2)\n  conv = ", result,
      " convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n  bb = ",
      result, " broadcast(b), dimensions={3}\n  add = ", result,
      " add(conv, bb)\n  zero = f32[] constant(0)\n  zb = ", result,
      " broadcast(zero), dimensions={}\n  ROOT relu = ", result, " maximum(add, zb)\n}\n");
}

}  // namespace test_modules
}  // namespace gpu
}  // namespace hloc
