#include "passes/expanders/expander_test_cases.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/evaluator/evaluator.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser.h"
#include "hlo/text_printer.h"
#include "hlo/verifier.h"
#include "passes/expanders/batch_norm_expander.h"
#include "passes/expanders/cholesky_expander.h"
#include "passes/expanders/eigh_expander.h"
#include "passes/expanders/fft_expander.h"
#include "passes/expanders/qr_expander.h"
#include "passes/pipeline.h"
#include "passes/expanders/rng_bit_generator_expander.h"
#include "passes/expanders/scan_expander.h"
#include "passes/expanders/select_and_scatter_expander.h"
#include "passes/expanders/triangular_solve_expander.h"

namespace hloc {
namespace expanders {
namespace {

Tolerance Within(double rtol, double atol) {
  Tolerance t;
  t.rtol = rtol;
  t.atol = atol;
  return t;
}

// ---------------------------------------------------------------- batch norm

// x, scale, offset as parameters; the whole training tuple is the result.
std::string Training(const std::string& type, const std::string& x_dims,
                     const std::string& feature_dims, int feature_index,
                     const std::string& x_layout = "") {
  return "HloModule bn_training\nENTRY e {\n"
         "  x = " + type + "[" + x_dims + "]" + x_layout + " parameter(0)\n"
         "  scale = " + type + "[" + feature_dims + "] parameter(1)\n"
         "  offset = " + type + "[" + feature_dims + "] parameter(2)\n"
         "  ROOT bn = (" + type + "[" + x_dims + "]" + x_layout + ", " + type + "[" + feature_dims +
         "], " + type + "[" + feature_dims + "]) batch-norm-training(x, scale, offset), "
         "epsilon=0.001, feature_index=" + std::to_string(feature_index) + "\n}\n";
}

// Variances made positive from the random argument: |v| + 0.25.
std::string Inference(const std::string& type, const std::string& x_dims,
                      const std::string& feature_dims, int feature_index) {
  const std::string f = type + "[" + feature_dims + "]";
  return "HloModule bn_inference\nENTRY e {\n"
         "  x = " + type + "[" + x_dims + "] parameter(0)\n"
         "  scale = " + f + " parameter(1)\n"
         "  offset = " + f + " parameter(2)\n"
         "  mean = " + f + " parameter(3)\n"
         "  v = " + f + " parameter(4)\n"
         "  a = " + f + " abs(v)\n"
         "  q = " + type + "[] constant(0.25)\n"
         "  qb = " + f + " broadcast(q), dimensions={}\n"
         "  var = " + f + " add(a, qb)\n"
         "  ROOT bn = " + type + "[" + x_dims + "] batch-norm-inference(x, scale, offset, mean, var), "
         "epsilon=0.0001, feature_index=" + std::to_string(feature_index) + "\n}\n";
}

std::string Grad(const std::string& type, const std::string& x_dims,
                 const std::string& feature_dims, int feature_index) {
  const std::string f = type + "[" + feature_dims + "]";
  const std::string x = type + "[" + x_dims + "]";
  return "HloModule bn_grad\nENTRY e {\n"
         "  x = " + x + " parameter(0)\n"
         "  scale = " + f + " parameter(1)\n"
         "  mean = " + f + " parameter(2)\n"
         "  v = " + f + " parameter(3)\n"
         "  dy = " + x + " parameter(4)\n"
         "  a = " + f + " abs(v)\n"
         "  q = " + type + "[] constant(0.25)\n"
         "  qb = " + f + " broadcast(q), dimensions={}\n"
         "  var = " + f + " add(a, qb)\n"
         "  ROOT bn = (" + x + ", " + f + ", " + f + ") batch-norm-grad(x, scale, mean, var, dy), "
         "epsilon=0.001, feature_index=" + std::to_string(feature_index) + "\n}\n";
}

// ---------------------------------------------------------- select-and-scatter

// One fft of `in` (type[dims]{layout}) giving `out`.
std::string Fft(const std::string& in, const std::string& fft_type, const std::string& lengths,
                const std::string& out) {
  return "HloModule fft\nENTRY e {\n  x = " + in + " parameter(0)\n  ROOT f = " + out +
         " fft(x), fft_type=" + fft_type + ", fft_length={" + lengths + "}\n}\n";
}

std::string SelectAndScatter(const std::string& type, const std::string& operand,
                             const std::string& source, const std::string& window,
                             const std::string& direction, const std::string& layout = "") {
  return "HloModule select_and_scatter\n"
         "select {\n  a = " + type + "[] parameter(0)\n  b = " + type + "[] parameter(1)\n"
         "  ROOT c = pred[] compare(a, b), direction=" + direction + "\n}\n"
         "combine {\n  a = " + type + "[] parameter(0)\n  b = " + type + "[] parameter(1)\n"
         "  ROOT s = " + type + "[] add(a, b)\n}\n"
         "ENTRY e {\n"
         "  x = " + type + "[" + operand + "]" + layout + " parameter(0)\n"
         "  src = " + type + "[" + source + "] parameter(1)\n"
         "  init = " + type + "[] constant(0)\n"
         "  ROOT sas = " + type + "[" + operand + "]" + layout +
         " select-and-scatter(x, src, init), window={" + window +
         "}, select=select, scatter=combine\n}\n";
}

// ---------------------------------------------------------- linear algebra

// "f32[2,3,3]" and its dimension list "2,3,3" joined with extra minor dims.
std::string Dims(const std::vector<int>& batch, int rows, int columns) {
  std::string out;
  for (int d : batch) out += std::to_string(d) + ",";
  return out + std::to_string(rows) + "," + std::to_string(columns);
}

// Transpose permutation of the two minor dimensions, "{0,2,1}".
std::string SwapMinor(size_t batch_rank) {
  std::string out = "{";
  for (size_t d = 0; d < batch_rank; ++d) out += std::to_string(d) + ",";
  return out + std::to_string(batch_rank + 1) + "," + std::to_string(batch_rank) + "}";
}

std::string BatchList(size_t batch_rank) {
  std::string out;
  for (size_t d = 0; d < batch_rank; ++d) out += (d ? "," : "") + std::to_string(d);
  return out;
}

// n * I + (its [b..., n, n] argument scaled) as instructions `eye_scaled`;
// `scale` multiplies the identity.
std::string ScaledIdentity(const std::string& type, const std::vector<int>& batch, int n,
                           double scale) {
  const std::string shape = type + "[" + Dims(batch, n, n) + "]";
  const std::string s32 = "s32[" + Dims(batch, n, n) + "]";
  return "  rows = " + s32 + " iota(), iota_dimension=" + std::to_string(batch.size()) + "\n"
         "  cols = " + s32 + " iota(), iota_dimension=" + std::to_string(batch.size() + 1) + "\n"
         "  diag = pred[" + Dims(batch, n, n) + "] compare(rows, cols), direction=EQ\n"
         "  eye = " + shape + " convert(diag)\n"
         "  k = " + type + "[] constant(" + std::to_string(scale) + ")\n"
         "  kb = " + shape + " broadcast(k), dimensions={}\n"
         "  eye_scaled = " + shape + " multiply(eye, kb)\n";
}

// cholesky of p p^T + n I (positive definite).
std::string Cholesky(const std::string& type, const std::vector<int>& batch, int n, bool lower) {
  const std::string shape = type + "[" + Dims(batch, n, n) + "]";
  const std::string batch_dims = BatchList(batch.size());
  return "HloModule cholesky\nENTRY e {\n"
         "  p = " + shape + " parameter(0)\n"
         "  pt = " + shape + " transpose(p), dimensions=" + SwapMinor(batch.size()) + "\n"
         "  ppt = " + shape + " dot(p, pt), lhs_batch_dims={" + batch_dims +
         "}, rhs_batch_dims={" + batch_dims + "}, lhs_contracting_dims={" +
         std::to_string(batch.size() + 1) + "}, rhs_contracting_dims={" +
         std::to_string(batch.size()) + "}\n" + ScaledIdentity(type, batch, n, n) +
         "  a = " + shape + " add(ppt, eye_scaled)\n"
         "  ROOT c = " + shape + " cholesky(a), lower=" + (lower ? "true" : "false") + "\n}\n";
}

// triangular-solve with A = p + 4 I (a well-conditioned triangle) and b
// [batch, m, n].
std::string TriangularSolve(const std::string& type, const std::vector<int>& batch, int m, int n,
                            bool left_side, bool lower, bool unit_diagonal,
                            const std::string& transpose_a) {
  const int k = left_side ? m : n;
  const std::string a_shape = type + "[" + Dims(batch, k, k) + "]";
  const std::string b_shape = type + "[" + Dims(batch, m, n) + "]";
  return "HloModule triangular_solve\nENTRY e {\n"
         "  p = " + a_shape + " parameter(0)\n"
         "  b = " + b_shape + " parameter(1)\n" + ScaledIdentity(type, batch, k, 4) +
         "  a = " + a_shape + " add(p, eye_scaled)\n"
         "  ROOT x = " + b_shape + " triangular-solve(a, b), left_side=" +
         (left_side ? "true" : "false") + ", lower=" + (lower ? "true" : "false") +
         ", unit_diagonal=" + (unit_diagonal ? "true" : "false") + ", transpose_a=" + transpose_a +
         "\n}\n";
}

// ------------------------------------------- linear-algebra custom calls

std::string ArrayText(const std::string& type, const std::vector<int>& batch,
                  std::vector<int> minor) {
  std::string out = type + "[";
  for (size_t d = 0; d < batch.size() + minor.size(); ++d) {
    out += (d ? "," : "") +
           std::to_string(d < batch.size() ? batch[d] : minor[d - batch.size()]);
  }
  return out + "]";
}

// "Qr" of the argument: the packed factors and taus themselves.
std::string Qr(const std::string& type, const std::vector<int>& batch, int m, int n) {
  return "HloModule qr\nENTRY e {\n  a = " + ArrayText(type, batch, {m, n}) +
         " parameter(0)\n  ROOT qr = (" + ArrayText(type, batch, {m, n}) + ", " +
         ArrayText(type, batch, {std::min(m, n)}) + ") custom-call(a), custom_call_target=\"Qr\"\n}\n";
}

// tf.linalg.qr(full_matrices=False) as XLA's builders emit it: "Qr", then
// the product of its reflectors (on the first m columns when m < n), and R
// the upper triangle of the first min(m, n) rows.
std::string QrExplicit(const std::string& type, const std::vector<int>& batch, int m, int n) {
  const int p = std::min(m, n);
  const size_t r = batch.size();
  std::string zeros;
  for (size_t d = 0; d < r; ++d) zeros += "[0:" + std::to_string(batch[d]) + "],";
  const std::string factors = ArrayText(type, batch, {m, n});
  return "HloModule qr_explicit\nENTRY e {\n  a = " + factors + " parameter(0)\n"
         "  qr = (" + factors + ", " + ArrayText(type, batch, {p}) +
         ") custom-call(a), custom_call_target=\"Qr\"\n"
         "  f = " + factors + " get-tuple-element(qr), index=0\n"
         "  taus = " + ArrayText(type, batch, {p}) + " get-tuple-element(qr), index=1\n"
         "  t = " + ArrayText(type, batch, {m, p}) + " slice(f), slice={" + zeros + "[0:" +
         std::to_string(m) + "],[0:" + std::to_string(p) + "]}\n"
         "  q = " + ArrayText(type, batch, {m, p}) +
         " custom-call(t, taus), custom_call_target=\"ProductOfElementaryHouseholderReflectors\"\n"
         "  top = " + ArrayText(type, batch, {p, n}) + " slice(f), slice={" + zeros + "[0:" +
         std::to_string(p) + "],[0:" + std::to_string(n) + "]}\n"
         "  rows = " + ArrayText("s32", batch, {p, n}) + " iota(), iota_dimension=" + std::to_string(r) + "\n"
         "  cols = " + ArrayText("s32", batch, {p, n}) + " iota(), iota_dimension=" +
         std::to_string(r + 1) + "\n"
         "  upper = " + ArrayText("pred", batch, {p, n}) + " compare(rows, cols), direction=LE\n"
         "  zero = " + type + "[] constant(0)\n"
         "  zeros = " + ArrayText(type, batch, {p, n}) + " broadcast(zero), dimensions={}\n"
         "  rr = " + ArrayText(type, batch, {p, n}) + " select(upper, top, zeros)\n"
         "  ROOT out = (" + ArrayText(type, batch, {m, p}) + ", " + ArrayText(type, batch, {p, n}) +
         ") tuple(q, rr)\n}\n";
}

// The product of k arbitrary reflectors: random vectors and taus.
std::string HouseholderProduct(const std::string& type, const std::vector<int>& batch, int m,
                               int n, int k) {
  return "HloModule householder_product\nENTRY e {\n  a = " + ArrayText(type, batch, {m, n}) +
         " parameter(0)\n  taus = " + ArrayText(type, batch, {k}) + " parameter(1)\n  ROOT q = " +
         ArrayText(type, batch, {m, n}) +
         " custom-call(a, taus), custom_call_target=\"ProductOfElementaryHouseholderReflectors\"\n}\n";
}

// "Eigh" of the (non-symmetric) argument, so only the named triangle is
// right. Eigenvectors are defined up to a sign (a phase), so the module
// returns what is not: w (sorted here when the call does not sort),
// v diag(w) v^H and v^H v.
std::string Eigh(const std::string& type, const std::vector<int>& batch, int n, bool lower,
                 bool sort, const std::string& tol = "1e-06") {
  const bool complex = type[0] == 'c';
  const std::string real = type == "c64" ? "f32" : (type == "c128" ? "f64" : type);
  const size_t r = batch.size();
  const std::string matrix = ArrayText(type, batch, {n, n});
  const std::string batch_dims = BatchList(r);
  const std::string sep = r ? "," : "";
  std::string text = "HloModule eigh\nless {\n  x = " + real + "[] parameter(0)\n  y = " + real +
                     "[] parameter(1)\n  ROOT lt = pred[] compare(x, y), direction=LT\n}\n"
                     "ENTRY e {\n  a = " + matrix + " parameter(0)\n"
                     "  eigh = (" + matrix + ", " + ArrayText(real, batch, {n}) +
                     ") custom-call(a), custom_call_target=\"Eigh\", backend_config=\"" +
                     (lower ? "1" : "0") + "," + (sort ? "1" : "0") + ",100," + tol + "\"\n"
                     "  v = " + matrix + " get-tuple-element(eigh), index=0\n"
                     "  w = " + ArrayText(real, batch, {n}) + " get-tuple-element(eigh), index=1\n"
                     "  wt = " + ArrayText(type, batch, {n}) + " convert(w)\n"
                     "  wb = " + matrix + " broadcast(wt), dimensions={" + batch_dims + sep +
                     std::to_string(r + 1) + "}\n"
                     "  vw = " + matrix + " multiply(v, wb)\n"
                     "  vt = " + matrix + " transpose(v), dimensions=" + SwapMinor(r) + "\n";
  if (complex) {
    text += "  vre = " + ArrayText(real, batch, {n, n}) + " real(vt)\n"
            "  vim = " + ArrayText(real, batch, {n, n}) + " imag(vt)\n"
            "  vneg = " + ArrayText(real, batch, {n, n}) + " negate(vim)\n"
            "  vh = " + matrix + " complex(vre, vneg)\n";
  } else {
    text += "  vh = " + matrix + " copy(vt)\n";
  }
  const std::string dot_dims = ", lhs_batch_dims={" + batch_dims + "}, rhs_batch_dims={" +
                               batch_dims + "}, lhs_contracting_dims={" + std::to_string(r + 1) +
                               "}, rhs_contracting_dims={" + std::to_string(r) + "}\n";
  text += "  recon = " + matrix + " dot(vw, vh)" + dot_dims +
          "  gram = " + matrix + " dot(vh, v)" + dot_dims;
  if (sort) {
    text += "  ws = " + ArrayText(real, batch, {n}) + " copy(w)\n";
  } else {
    text += "  ws = " + ArrayText(real, batch, {n}) + " sort(w), dimensions={" + std::to_string(r) +
            "}, to_apply=less\n";
  }
  return text + "  ROOT out = (" + ArrayText(real, batch, {n}) + ", " + matrix + ", " + matrix +
         ") tuple(ws, recon, gram)\n}\n";
}

// ------------------------------------------------------------ rng-bit-generator

// The state is the random argument, or `state` (a literal) when given.
std::string RngBitGenerator(const std::string& algorithm, const std::string& bits,
                            int state_size = 2, const std::string& state = "") {
  const std::string state_shape = "u64[" + std::to_string(state_size) + "]";
  return "HloModule rng_bit_generator\nENTRY e {\n"
         "  s = " + state_shape + " " +
         (state.empty() ? std::string("parameter(0)") : "constant(" + state + ")") + "\n"
         "  ROOT r = (" + state_shape + ", " + bits + ") rng-bit-generator(s), algorithm=" +
         algorithm + "\n}\n";
}

// --------------------------------------------------------------------- scan

// Running sum along dimension 0, as JAX's cumsum lowers to scan.
constexpr char kScanCumsum[] = R"(HloModule cumsum
add_step {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  s = f32[] add(acc, x)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY e {
  x = f32[8] parameter(0)
  zero = f32[] constant(0)
  ROOT scan = (f32[8], f32[]) scan(x, zero), dimensions={0}, num_carries=1, is_associative=true, to_apply=add_step
})";

// Reverse running max along the last dimension of a column-major array,
// with the initial carry a parameter.
constexpr char kScanReverseMax[] = R"(HloModule reverse_max
max_step {
  x = f32[3] parameter(0)
  acc = f32[3] parameter(1)
  m = f32[3] maximum(acc, x)
  ROOT t = (f32[3], f32[3]) tuple(m, m)
}
ENTRY e {
  x = f32[3,5]{0,1} parameter(0)
  init = f32[3] parameter(1)
  ROOT scan = (f32[3,5]{0,1}, f32[3]) scan(x, init), dimensions={1}, num_carries=1, is_reverse=true, to_apply=max_step
})";

// Two inputs of different ranks, two carries, outputs of other types and
// ranks than the inputs (as XLA's own mixed-type test has).
constexpr char kScanMixed[] = R"(HloModule mixed
step {
  a = s32[] parameter(0)
  b = f32[2] parameter(1)
  c0 = s32[] parameter(2)
  c1 = f32[2] parameter(3)
  n0 = s32[] xor(c0, a)
  n1 = f32[2] maximum(c1, b)
  f = f32[] convert(n0)
  fb = f32[2] broadcast(f), dimensions={}
  y0 = f32[2] multiply(b, fb)
  y1 = pred[] compare(a, c0), direction=GT
  ROOT t = (f32[2], pred[], s32[], f32[2]) tuple(y0, y1, n0, n1)
}
ENTRY e {
  a = s32[6] parameter(0)
  b = f32[6,2] parameter(1)
  c0 = s32[] parameter(2)
  c1 = f32[2] parameter(3)
  ROOT scan = (f32[6,2], pred[6], s32[], f32[2]) scan(a, b, c0, c1), dimensions={0}, num_carries=2, to_apply=step
})";

// No carries: each step maps one row; the result is bare.
constexpr char kScanNoCarry[] = R"(HloModule no_carry
row {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}
ENTRY e {
  x = f32[4,3] parameter(0)
  ROOT scan = f32[4,3] scan(x), dimensions={0}, num_carries=0, to_apply=row
})";

// Only a carry: a sequential product; the result is the bare final carry.
constexpr char kScanOnlyCarry[] = R"(HloModule only_carry
mul {
  x = f64[] parameter(0)
  acc = f64[] parameter(1)
  ROOT p = f64[] multiply(acc, x)
}
ENTRY e {
  x = f64[7] parameter(0)
  one = f64[] constant(1)
  ROOT scan = f64[] scan(x, one), dimensions={0}, num_carries=1, to_apply=mul
})";

// The middle dimension of a rank-3 input; the output puts the scanned
// dimension back in the middle.
constexpr char kScanMiddle[] = R"(HloModule middle
step {
  x = s32[2,3] parameter(0)
  acc = s32[2,3] parameter(1)
  s = s32[2,3] add(acc, x)
  ROOT t = (s32[2,3], s32[2,3]) tuple(s, s)
}
ENTRY e {
  p = s32[2,4,3] parameter(0)
  x = s32[2,4,3] and(p, p)
  zero = s32[] constant(0)
  init = s32[2,3] broadcast(zero), dimensions={}
  ROOT scan = (s32[2,4,3], s32[2,3]) scan(x, init), dimensions={1}, num_carries=1, to_apply=step
})";

// The top-2 routing step of a mixture-of-experts layer: a token's position
// among those sent to each expert is the running count of one-hot choices.
constexpr char kScanMoePositions[] = R"(HloModule moe_positions
count {
  x = s32[4] parameter(0)
  acc = s32[4] parameter(1)
  s = s32[4] add(acc, x)
  ROOT t = (s32[4], s32[4]) tuple(s, s)
}
ENTRY e {
  logits = f32[8,4] parameter(0)
  zero = f32[] constant(0)
  zeros = f32[8,4] broadcast(zero), dimensions={}
  chosen = pred[8,4] compare(logits, zeros), direction=GT
  onehot = s32[8,4] convert(chosen)
  izero = s32[] constant(0)
  init = s32[4] broadcast(izero), dimensions={}
  scan = (s32[8,4], s32[4]) scan(onehot, init), dimensions={0}, num_carries=1, is_associative=true, to_apply=count
  positions = s32[8,4] get-tuple-element(scan), index=0
  ROOT r = s32[8,4] subtract(positions, onehot)
})";

// A scan whose step itself scans (the inner body is copied into the outer
// loop and expanded on a later round).
constexpr char kScanNested[] = R"(HloModule nested
inner_step {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  s = f32[] add(acc, x)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
outer_step {
  row = f32[4] parameter(0)
  total = f32[] parameter(1)
  zero = f32[] constant(0)
  inner = (f32[4], f32[]) scan(row, zero), dimensions={0}, num_carries=1, to_apply=inner_step
  sums = f32[4] get-tuple-element(inner), index=0
  last = f32[] get-tuple-element(inner), index=1
  next = f32[] add(total, last)
  ROOT t = (f32[4], f32[]) tuple(sums, next)
}
ENTRY e {
  x = f32[3,4] parameter(0)
  zero = f32[] constant(0)
  ROOT scan = (f32[3,4], f32[]) scan(x, zero), dimensions={0}, num_carries=1, is_reverse=true, to_apply=outer_step
})";

// Length 0: the outputs are empty and the carry is the init.
constexpr char kScanEmpty[] = R"(HloModule empty
add_step {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  s = f32[] add(acc, x)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY e {
  x = f32[0] parameter(0)
  init = f32[] parameter(1)
  ROOT scan = (f32[0], f32[]) scan(x, init), dimensions={0}, num_carries=1, to_apply=add_step
})";

std::vector<ExpanderCase> MakeCases() {
  const Tolerance f32 = Within(1e-5, 1e-5);
  const Tolerance f16 = Within(2e-3, 2e-3);
  const Tolerance bf16 = Within(1.6e-2, 1.6e-2);
  const Tolerance f64 = Within(1e-12, 1e-12);
  // Sums of up to 256 products, against the interpreter's double sums.
  const Tolerance c64 = Within(1e-4, 1e-4);
  const Tolerance c128 = Within(1e-10, 1e-10);
  std::vector<ExpanderCase> cases = {
      // batch-norm-training
      {"TrainingF32FeatureMiddle", HloOpcode::kBatchNormTraining,
       Training("f32", "4,3,2", "3", 1), f32},
      {"TrainingF32FeatureLastColumnMajor", HloOpcode::kBatchNormTraining,
       Training("f32", "2,5,3,7", "7", 3, "{0,1,2,3}"), f32},
      {"TrainingF32FeatureFirst", HloOpcode::kBatchNormTraining,
       Training("f32", "6,33,5", "6", 0), f32},
      {"TrainingF32OneElementPerFeature", HloOpcode::kBatchNormTraining,
       Training("f32", "1,1,1,3", "3", 3), f32},
      {"TrainingF32OneFeature", HloOpcode::kBatchNormTraining,
       Training("f32", "5,1", "1", 1), f32},
      {"TrainingF32EmptyBatch", HloOpcode::kBatchNormTraining,
       Training("f32", "0,3", "3", 1), f32},
      {"TrainingF16", HloOpcode::kBatchNormTraining, Training("f16", "8,4,6", "4", 1), f16},
      {"TrainingBF16", HloOpcode::kBatchNormTraining, Training("bf16", "3,5", "5", 1), bf16},
      {"TrainingF64", HloOpcode::kBatchNormTraining, Training("f64", "2,3,4", "4", 2), f64},
      // batch-norm-inference
      {"InferenceF32Nchw", HloOpcode::kBatchNormInference,
       Inference("f32", "2,6,5,5", "6", 1), f32},
      {"InferenceF32Nhwc", HloOpcode::kBatchNormInference,
       Inference("f32", "2,3,3,8", "8", 3), f32},
      {"InferenceF16", HloOpcode::kBatchNormInference, Inference("f16", "4,7", "7", 1), f16},
      {"InferenceF64", HloOpcode::kBatchNormInference, Inference("f64", "3,2", "3", 0), f64},
      // batch-norm-grad
      {"GradF32FeatureMiddle", HloOpcode::kBatchNormGrad, Grad("f32", "4,3,5", "3", 1), f32},
      {"GradF32FeatureFirst", HloOpcode::kBatchNormGrad, Grad("f32", "3,7", "3", 0), f32},
      {"GradF32Nhwc", HloOpcode::kBatchNormGrad, Grad("f32", "2,4,4,5", "5", 3), f32},
      {"GradBF16", HloOpcode::kBatchNormGrad, Grad("bf16", "6,4", "4", 1), bf16},
      {"GradF64", HloOpcode::kBatchNormGrad, Grad("f64", "5,2,3", "2", 1), f64},
      // select-and-scatter
      {"MaxPoolGradient", HloOpcode::kSelectAndScatter,
       SelectAndScatter("f32", "4,6", "2,2", "size=2x3 stride=2x3", "GE"), f32},
      {"OverlappingPaddedWindowsNhwc", HloOpcode::kSelectAndScatter,
       SelectAndScatter("f32", "2,7,7,3", "2,4,4,3",
                        "size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0", "GE"),
       f32},
      {"MinSelectS32Ties", HloOpcode::kSelectAndScatter,
       SelectAndScatter("s32", "6,6", "3,3", "size=3x3 stride=2x2 pad=1_0x1_0", "LE"), {}},
      {"StrictGreaterS32TiesPickLast", HloOpcode::kSelectAndScatter,
       SelectAndScatter("s32", "8", "4", "size=3 stride=2 pad=1_0", "GT"), {}},
      {"WindowEntirelyInPadding", HloOpcode::kSelectAndScatter,
       SelectAndScatter("f32", "3", "3", "size=2 stride=2 pad=2_2", "GE"), f32},
      {"ColumnMajorOperand", HloOpcode::kSelectAndScatter,
       SelectAndScatter("f32", "5,4", "2,3", "size=2x2 stride=2x1", "GE", "{0,1}"), f32},
      {"F16", HloOpcode::kSelectAndScatter,
       SelectAndScatter("f16", "2,6,6,2", "2,3,3,2", "size=1x2x2x1 stride=1x2x2x1", "GE"), f16},
      // cholesky
      {"CholeskyLowerF32", HloOpcode::kCholesky, Cholesky("f32", {}, 5, true), Within(1e-4, 1e-5)},
      {"CholeskyUpperBatchF32", HloOpcode::kCholesky, Cholesky("f32", {2, 3}, 4, false),
       Within(1e-4, 1e-5)},
      {"CholeskyOneByOne", HloOpcode::kCholesky, Cholesky("f32", {3}, 1, true), f32},
      {"CholeskyF64", HloOpcode::kCholesky, Cholesky("f64", {2}, 7, true), f64},
      {"CholeskyF16", HloOpcode::kCholesky, Cholesky("f16", {}, 4, true), Within(4e-3, 4e-3)},
      // triangular-solve
      {"SolveLeftLower", HloOpcode::kTriangularSolve,
       TriangularSolve("f32", {}, 5, 3, true, true, false, "NO_TRANSPOSE"), Within(1e-4, 1e-5)},
      {"SolveLeftUpperTransposed", HloOpcode::kTriangularSolve,
       TriangularSolve("f32", {2}, 4, 6, true, false, false, "TRANSPOSE"), Within(1e-4, 1e-5)},
      {"SolveLeftLowerUnitAdjoint", HloOpcode::kTriangularSolve,
       TriangularSolve("f32", {}, 6, 2, true, true, true, "ADJOINT"), Within(1e-4, 1e-5)},
      {"SolveRightLower", HloOpcode::kTriangularSolve,
       TriangularSolve("f32", {3}, 2, 5, false, true, false, "NO_TRANSPOSE"), Within(1e-4, 1e-5)},
      {"SolveRightUpperUnit", HloOpcode::kTriangularSolve,
       TriangularSolve("f32", {}, 4, 4, false, false, true, "NO_TRANSPOSE"), Within(1e-4, 1e-5)},
      {"SolveRightLowerTransposedBatch", HloOpcode::kTriangularSolve,
       TriangularSolve("f32", {2, 2}, 3, 4, false, true, false, "TRANSPOSE"), Within(1e-4, 1e-5)},
      {"SolveOneColumnF64", HloOpcode::kTriangularSolve,
       TriangularSolve("f64", {}, 8, 1, true, false, false, "NO_TRANSPOSE"), f64},
      {"SolveBF16", HloOpcode::kTriangularSolve,
       TriangularSolve("bf16", {}, 4, 3, true, true, false, "NO_TRANSPOSE"), bf16},
      // Qr and ProductOfElementaryHouseholderReflectors: the expansion
      // computes in the element type, the interpreter in double.
      {"QrTallF32", HloOpcode::kCustomCall, Qr("f32", {}, 6, 4), Within(1e-4, 1e-4)},
      {"QrWideBatchF32", HloOpcode::kCustomCall, Qr("f32", {2, 3}, 3, 5), Within(1e-4, 1e-4)},
      {"QrSquareF64", HloOpcode::kCustomCall, Qr("f64", {2}, 5, 5), Within(1e-10, 1e-10)},
      {"QrOneColumnF32", HloOpcode::kCustomCall, Qr("f32", {}, 4, 1), Within(1e-4, 1e-4)},
      {"QrC64", HloOpcode::kCustomCall, Qr("c64", {2}, 4, 3), Within(1e-4, 1e-4)},
      {"QrWideC128", HloOpcode::kCustomCall, Qr("c128", {}, 3, 4), Within(1e-10, 1e-10)},
      {"QrF16", HloOpcode::kCustomCall, Qr("f16", {}, 4, 3), Within(2e-2, 2e-2)},
      {"QrExplicitTallF32", HloOpcode::kCustomCall, QrExplicit("f32", {2}, 7, 3),
       Within(1e-4, 1e-4)},
      {"QrExplicitWideF64", HloOpcode::kCustomCall, QrExplicit("f64", {}, 3, 6),
       Within(1e-10, 1e-10)},
      {"QrExplicitSquareC64", HloOpcode::kCustomCall, QrExplicit("c64", {}, 4, 4),
       Within(1e-4, 1e-4)},
      {"HouseholderProductFewerReflectorsF32", HloOpcode::kCustomCall,
       HouseholderProduct("f32", {3}, 5, 4, 2), Within(1e-4, 1e-4)},
      {"HouseholderProductC128", HloOpcode::kCustomCall, HouseholderProduct("c128", {}, 4, 4, 4),
       Within(1e-10, 1e-10)},
      // Eigh: Jacobi to tol in the element type against the interpreter's
      // converged double-precision Jacobi.
      {"EighLowerSortedF32", HloOpcode::kCustomCall, Eigh("f32", {}, 6, true, true),
       Within(1e-4, 1e-4)},
      {"EighUpperSortedOddBatchF32", HloOpcode::kCustomCall, Eigh("f32", {2}, 5, false, true),
       Within(1e-4, 1e-4)},
      {"EighLowerUnsortedF64", HloOpcode::kCustomCall, Eigh("f64", {2, 2}, 4, true, false, "1e-12"),
       Within(1e-10, 1e-10)},
      {"EighTwoByTwoF32", HloOpcode::kCustomCall, Eigh("f32", {3}, 2, true, true),
       Within(1e-4, 1e-4)},
      {"EighOneByOneF32", HloOpcode::kCustomCall, Eigh("f32", {2}, 1, true, true),
       Within(1e-5, 1e-5)},
      {"EighUpperC64", HloOpcode::kCustomCall, Eigh("c64", {}, 5, false, true),
       Within(1e-4, 1e-4)},
      {"EighF16", HloOpcode::kCustomCall, Eigh("f16", {}, 3, true, true), Within(3e-2, 3e-2)},
      {"QrNoColumnsF32", HloOpcode::kCustomCall, Qr("f32", {2}, 3, 0), Within(1e-5, 1e-5)},
      {"EighLowerUnsortedC128", HloOpcode::kCustomCall, Eigh("c128", {2}, 4, true, false, "1e-12"),
       Within(1e-10, 1e-10)},
      // rng-bit-generator: bit-exact.
      {"ThreefryU32OddDimensions", HloOpcode::kRngBitGenerator,
       RngBitGenerator("rng_three_fry", "u32[3,5]"), {}},
      {"ThreefryU32SplitSecond", HloOpcode::kRngBitGenerator,
       RngBitGenerator("rng_three_fry", "u32[3,4]"), {}},
      {"ThreefryS16SplitFirst", HloOpcode::kRngBitGenerator,
       RngBitGenerator("rng_three_fry", "s16[2,3,5]"), {}},
      {"ThreefryS8", HloOpcode::kRngBitGenerator, RngBitGenerator("rng_three_fry", "s8[10]"), {}},
      {"ThreefryU64", HloOpcode::kRngBitGenerator, RngBitGenerator("rng_three_fry", "u64[7]"), {}},
      {"ThreefryScalar", HloOpcode::kRngBitGenerator, RngBitGenerator("rng_three_fry", "u32[]"),
       {}},
      {"ThreefryLargeKey", HloOpcode::kRngBitGenerator,
       RngBitGenerator("rng_three_fry", "u32[6,7]", 2, "{18446744073709551557, 4294967295}"), {}},
      {"PhiloxU32", HloOpcode::kRngBitGenerator, RngBitGenerator("rng_philox", "u32[10]", 3), {}},
      {"PhiloxU64StateOfTwo", HloOpcode::kRngBitGenerator,
       RngBitGenerator("rng_philox", "u64[5]"), {}},
      {"DefaultIsPhiloxU16", HloOpcode::kRngBitGenerator,
       RngBitGenerator("rng_default", "u16[3,3]"), {}},
      {"PhiloxCounterCarries", HloOpcode::kRngBitGenerator,
       RngBitGenerator("rng_philox", "s64[9]", 3,
                       "{12345678901234567, 18446744073709551614, 7}"),
       {}},
      // scan: the loop computes in the interpreter's order, so bit-exact.
      {"ScanCumsum", HloOpcode::kScan, kScanCumsum, {}},
      {"ScanReverseMaxColumnMajor", HloOpcode::kScan, kScanReverseMax, {}},
      {"ScanTwoInputsTwoCarriesMixedTypes", HloOpcode::kScan, kScanMixed, {}},
      {"ScanNoCarry", HloOpcode::kScan, kScanNoCarry, {}},
      {"ScanOnlyCarry", HloOpcode::kScan, kScanOnlyCarry, {}},
      {"ScanMiddleDimension", HloOpcode::kScan, kScanMiddle, {}},
      {"ScanMoePositions", HloOpcode::kScan, kScanMoePositions, {}},
      {"ScanNested", HloOpcode::kScan, kScanNested, {}},
      {"ScanEmpty", HloOpcode::kScan, kScanEmpty, {}},
      // fft: one matrix product up to length 16 and for primes, four steps
      // (recursively) for longer composite lengths.
      {"FftLength8", HloOpcode::kFft, Fft("c64[3,8]", "FFT", "8", "c64[3,8]"), c64},
      {"FftLength1", HloOpcode::kFft, Fft("c64[4,1]", "FFT", "1", "c64[4,1]"), c64},
      {"FftLength12", HloOpcode::kFft, Fft("c64[2,12]", "FFT", "12", "c64[2,12]"), c64},
      {"FftLength96FourSteps", HloOpcode::kFft, Fft("c64[2,96]", "FFT", "96", "c64[2,96]"), c64},
      {"FftLength97Prime", HloOpcode::kFft, Fft("c64[1,97]", "FFT", "97", "c64[1,97]"), c64},
      {"FftLength256", HloOpcode::kFft, Fft("c64[2,256]", "FFT", "256", "c64[2,256]"), c64},
      {"FftEmptyBatch", HloOpcode::kFft, Fft("c64[0,8]", "FFT", "8", "c64[0,8]"), c64},
      {"FftColumnMajor", HloOpcode::kFft, Fft("c64[3,8]{0,1}", "FFT", "8", "c64[3,8]{0,1}"), c64},
      {"IfftLength20", HloOpcode::kFft, Fft("c64[3,20]", "IFFT", "20", "c64[3,20]"), c64},
      {"Fft2d", HloOpcode::kFft, Fft("c64[2,6,8]", "FFT", "6,8", "c64[2,6,8]"), c64},
      {"Fft3d", HloOpcode::kFft, Fft("c64[4,3,5]", "FFT", "4,3,5", "c64[4,3,5]"), c64},
      {"Ifft2dC128", HloOpcode::kFft, Fft("c128[5,36]", "IFFT", "5,36", "c128[5,36]"), c128},
      {"RfftLength16", HloOpcode::kFft, Fft("f32[3,16]", "RFFT", "16", "c64[3,9]"), c64},
      {"RfftLength9", HloOpcode::kFft, Fft("f32[2,9]", "RFFT", "9", "c64[2,5]"), c64},
      {"Rfft2dF64", HloOpcode::kFft, Fft("f64[4,6]", "RFFT", "4,6", "c128[4,4]"), c128},
      {"IrfftLength16", HloOpcode::kFft, Fft("c64[3,9]", "IRFFT", "16", "f32[3,16]"), c64},
      {"IrfftLength9", HloOpcode::kFft, Fft("c64[2,5]", "IRFFT", "9", "f32[2,9]"), c64},
      {"Irfft2d", HloOpcode::kFft, Fft("c64[6,5]", "IRFFT", "6,8", "f32[6,8]"), c64},
      {"Irfft3dC128", HloOpcode::kFft, Fft("c128[2,3,4]", "IRFFT", "2,3,6", "f64[2,3,6]"), c128},
      // Enough lines for the host routine's vector lanes (16 of c64, 8 of
      // c128), in full and partial groups, over radices 4, 2, 3, 5 and 7.
      {"FftLanesRadices", HloOpcode::kFft, Fft("c64[37,60]", "FFT", "60", "c64[37,60]"), c64},
      {"IfftLanesRadix7", HloOpcode::kFft, Fft("c64[9,28]", "IFFT", "28", "c64[9,28]"), c64},
      {"Fft2dLanesStrided", HloOpcode::kFft, Fft("c64[3,10,12]", "FFT", "10,12", "c64[3,10,12]"),
       c64},
      {"FftLanesC128", HloOpcode::kFft, Fft("c128[11,18]", "FFT", "18", "c128[11,18]"), c128},
      {"RfftLanesEven", HloOpcode::kFft, Fft("f32[20,32]", "RFFT", "32", "c64[20,17]"), c64},
      {"RfftLanesOdd", HloOpcode::kFft, Fft("f32[18,15]", "RFFT", "15", "c64[18,8]"), c64},
      {"Rfft2dLanesF64", HloOpcode::kFft, Fft("f64[6,5,10]", "RFFT", "5,10", "c128[6,5,6]"), c128},
      {"IrfftLanesEven", HloOpcode::kFft, Fft("c64[19,13]", "IRFFT", "24", "f32[19,24]"), c64},
      {"IrfftLanesOdd", HloOpcode::kFft, Fft("c64[17,8]", "IRFFT", "15", "f32[17,15]"), c64},
      // Leading dimensions whose lines are neighbours in memory, 16 (c64) or
      // 8 (c128) at a time.
      {"Fft2dColumns", HloOpcode::kFft, Fft("c64[12,32]", "FFT", "12,32", "c64[12,32]"), c64},
      {"Ifft3dColumnsC128", HloOpcode::kFft,
       Fft("c128[2,6,16]", "IFFT", "6,16", "c128[2,6,16]"), c128},
      {"Rfft2dColumns", HloOpcode::kFft, Fft("f32[6,30]", "RFFT", "6,30", "c64[6,16]"), c64},
      {"Irfft2dColumns", HloOpcode::kFft, Fft("c64[5,16]", "IRFFT", "5,30", "f32[5,30]"), c64},
      // Too few lines for the lanes and long enough to go as a matrix
      // (four steps) on the host.
      {"FftFewLongLines", HloOpcode::kFft, Fft("c64[2,1024]", "FFT", "1024", "c64[2,1024]"), c64},
      {"IfftLongLineC128", HloOpcode::kFft, Fft("c128[1,1088]", "IFFT", "1088", "c128[1,1088]"),
       c128},
      {"IrfftLongLine", HloOpcode::kFft, Fft("c64[1,1025]", "IRFFT", "2048", "f32[1,2048]"), c64},
      // Prime factors above 64 (above 1024 in the lanes): Bluestein's
      // convolution on the host.
      {"FftBluesteinPrime", HloOpcode::kFft, Fft("c64[2,127]", "FFT", "127", "c64[2,127]"), c64},
      {"FftBluesteinC128", HloOpcode::kFft, Fft("c128[3,131]", "FFT", "131", "c128[3,131]"), c128},
      {"IfftBluesteinManyLines", HloOpcode::kFft,
       Fft("c64[9,1031]", "IFFT", "1031", "c64[9,1031]"), c64},
      {"RfftBluesteinHalf", HloOpcode::kFft, Fft("f32[3,134]", "RFFT", "134", "c64[3,68]"), c64},
      {"IrfftBluesteinOdd", HloOpcode::kFft, Fft("c64[2,34]", "IRFFT", "67", "f32[2,67]"), c64},
  };
  return cases;
}

}  // namespace

const std::vector<ExpanderCase>& ExpanderCases() {
  static const std::vector<ExpanderCase>* cases = new std::vector<ExpanderCase>(MakeCases());
  return *cases;
}

std::vector<ExpanderCase> ExpanderCasesFor(HloOpcode opcode) {
  std::vector<ExpanderCase> out;
  for (const ExpanderCase& c : ExpanderCases()) {
    if (c.opcode == opcode) out.push_back(c);
  }
  return out;
}

std::unique_ptr<HloPass> ExpanderFor(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return std::make_unique<BatchNormExpander>();
    case HloOpcode::kSelectAndScatter:
      return std::make_unique<SelectAndScatterExpander>();
    case HloOpcode::kCholesky:
      return std::make_unique<CholeskyExpander>();
    case HloOpcode::kTriangularSolve:
      return std::make_unique<TriangularSolveExpander>();
    case HloOpcode::kRngBitGenerator:
      return std::make_unique<RngBitGeneratorExpander>();
    case HloOpcode::kScan:
      return std::make_unique<ScanExpander>();
    case HloOpcode::kFft:
      return std::make_unique<FftExpander>();
    case HloOpcode::kCustomCall: {
      // The linear-algebra custom calls (the only ones the cases use).
      auto pipeline = std::make_unique<HloPassPipeline>("linalg-custom-calls");
      pipeline->AddPass<QrExpander>();
      pipeline->AddPass<EighExpander>();
      return pipeline;
    }
    default:
      return nullptr;
  }
}

absl::StatusOr<std::unique_ptr<HloModule>> ExpandAndCompare(const ExpanderCase& c,
                                                            uint64_t seed) {
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ParseHloModule(c.hlo));
  HLOC_RETURN_IF_ERROR(VerifyModule(*module));
  if (CountEverywhere(*module, c.opcode) == 0) {
    return absl::InternalError(absl::StrCat(c.name, " has no ", HloOpcodeName(c.opcode)));
  }
  HLOC_ASSIGN_OR_RETURN(std::vector<Literal> arguments, MakeRandomArguments(*module, seed));
  HLOC_ASSIGN_OR_RETURN(Literal before, Evaluate(*module, arguments));
  std::unique_ptr<HloPass> pass = ExpanderFor(c.opcode);
  HLOC_ASSIGN_OR_RETURN(bool changed, pass->Run(*module));
  if (!changed) return absl::InternalError(absl::StrCat(pass->name(), " changed nothing"));
  absl::Status valid = VerifyModule(*module);
  if (!valid.ok()) {
    return absl::InternalError(absl::StrCat("invalid after ", pass->name(), ": ",
                                            valid.message(), "\n", PrintModule(*module)));
  }
  if (const int64_t left = CountEverywhere(*module, c.opcode); left != 0) {
    return absl::InternalError(absl::StrCat(left, " ", HloOpcodeName(c.opcode), " left"));
  }
  HLOC_ASSIGN_OR_RETURN(Literal after, Evaluate(*module, arguments));
  ComparisonReport report = CompareLiterals(before, after, c.tolerance);
  if (!report.ok) {
    return absl::InternalError(absl::StrCat("expanded module differs from the interpreter: ",
                                            report.ToString(), "\n", PrintModule(*module)));
  }
  return module;
}

int64_t CountEverywhere(const HloModule& module, HloOpcode opcode) {
  int64_t count = 0;
  for (const HloComputation* computation : module.computations()) {
    computation->ForEachInstruction(
        [&](const HloInstruction* i) { count += i->opcode() == opcode; });
  }
  return count;
}

}  // namespace expanders
}  // namespace hloc
