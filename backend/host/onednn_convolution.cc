// HLO convolutions as oneDNN forward convolutions (see onednn_operations.h).
//
// oneDNN names tensors by logical dimensions ({N, C, H, W}, {O, I, KH, KW})
// and lets each have any strides, so an HLO convolution's dimension numbers
// become strides into its row-major buffers: NCHW, NHWC, HWIO, OIHW and every
// other order are the same primitive with other strides. Feature groups
// split the kernel's output feature dimension into {G, O/G} (XLA's grouping:
// output feature o belongs to group o / (O/G)).
//
// oneDNN's fast kernels want their own blocked layouts for some orders (and
// its plain-layout path is a gemm-based fallback), so the builder also asks
// for the primitive with layouts left to oneDNN and, when that finds a better
// implementation, reorders the input and kernel into those layouts and the
// result back, through buffers the operation owns.
//
// A transposed convolution (input dilation s, kernel K, dilation d, padding
// pl/ph) is oneDNN's deconvolution with strides s: the HLO convolution reads
// out[o] = sum_k in[(o + k*d - pl) / s] w[k] over the taps that land on an
// input element, i.e. o = i*s - k*d + pl; with the kernel reversed
// (k' = K-1-k) that is o = i*s + k'*d - ((K-1)*d - pl), the deconvolution
// with padding (K-1)*d - pl on the low side and (K-1)*d - ph on the high
// side. oneDNN takes no negative strides, so the reversed kernel is a copy.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/host/onednn_operations.h"

namespace hloc {
namespace host {
namespace {

using dnnl::memory;

// The primitive for `batch` images of the convolution, with the reorders
// between the call's layouts and the primitive's where they differ.
struct ConvolutionPiece {
  int64_t batch = 0;
  dnnl::primitive primitive;  // convolution_forward or deconvolution_forward.
  memory::desc src, weights, dst, scratchpad;  // The primitive's layouts.
  memory::desc user_src, user_weights, user_dst, bias, vector;
  std::optional<dnnl::reorder> src_in, weights_in, dst_out;
  std::string impl;
};

// A convolution, whole or split into slices of its batch.
class ConvolutionOperation : public OneDnnOperation {
 public:
  ConvolutionOperation(const ConvolutionSpec& spec, std::vector<ConvolutionPiece> pieces,
                       int64_t tasks, int omp_threads, const dnnl::engine& engine)
      : spec_(spec), pieces_(std::move(pieces)), tasks_(tasks), omp_threads_(omp_threads) {
    // Scratch buffers in the primitive's layouts: the kernel per piece, the
    // input and result per task.
    for (const ConvolutionPiece& piece : pieces_) {
      weights_scratch_.push_back(piece.weights_in ? memory(piece.weights, engine) : memory());
    }
    if (spec_.transposed) {
      int64_t elements = 1;
      for (int64_t d : spec_.weights_dims) elements *= d;
      flipped_.resize(static_cast<size_t>(elements * ByteWidth(spec_.input_type)));
    }
    for (int64_t t = 0; t < tasks_; ++t) {
      const ConvolutionPiece& piece = PieceOf(t);
      src_scratch_.push_back(piece.src_in ? memory(piece.src, engine) : memory());
      dst_scratch_.push_back(piece.dst_out ? memory(piece.dst, engine) : memory());
    }
  }

  absl::Status Run(absl::Span<void* const> buffers, const dnnl::engine& engine,
                   runtime::ThreadPool* pool) const override {
    std::lock_guard<std::mutex> lock(mu_);  // The scratch buffers are shared.
    // The thread count the primitives were created for (oneDNN's OpenMP
    // kernels expect the same count at execution).
    ScopedOmpThreads scoped(pool == nullptr ? 1 : omp_threads_);
    void* kernel = buffers[spec_.kernel_buffer];
    if (spec_.transposed) {
      FlipKernel(kernel);
      kernel = flipped_.data();
    }
    for (size_t p = 0; p < pieces_.size(); ++p) {
      if (!pieces_[p].weights_in) continue;
      memory user(pieces_[p].user_weights, engine, kernel);
      memory scratch = weights_scratch_[p];
      dnnl::stream stream(engine);
      pieces_[p].weights_in->execute(stream, user, scratch);
      stream.wait();
    }
    auto run_task = [&](int64_t t) {
      const size_t p = (t == tasks_ - 1 && pieces_.size() > 1) ? 1 : 0;
      const ConvolutionPiece& piece = pieces_[p];
      const int64_t first_image = t * pieces_[0].batch;
      uint8_t* src = static_cast<uint8_t*>(buffers[spec_.input_buffer]) +
                     first_image * spec_.src_strides[0] * ByteWidth(spec_.input_type);
      uint8_t* dst = static_cast<uint8_t*>(buffers[spec_.out_buffer]) +
                     first_image * spec_.dst_strides[0] * ByteWidth(spec_.output_type);
      dnnl::stream stream(engine);
      std::unordered_map<int, memory> args;
      memory user_src(piece.user_src, engine, src);
      if (piece.src_in) {
        memory scratch = src_scratch_[t];
        piece.src_in->execute(stream, user_src, scratch);
        args.emplace(DNNL_ARG_SRC, scratch);
      } else {
        args.emplace(DNNL_ARG_SRC, user_src);
      }
      args.emplace(DNNL_ARG_WEIGHTS, piece.weights_in ? weights_scratch_[p]
                                                      : memory(piece.user_weights, engine, kernel));
      if (spec_.epilogue.NativeBias()) {
        args.emplace(DNNL_ARG_BIAS,
                     memory(piece.bias, engine, buffers[spec_.epilogue.steps[0].buffer]));
      }
      spec_.epilogue.AddPostOpArguments(buffers, piece.vector, engine, &args);
      args.emplace(DNNL_ARG_SCRATCHPAD, ThreadScratchpad(piece.scratchpad, engine));
      memory user_dst(piece.user_dst, engine, dst);
      args.emplace(DNNL_ARG_DST, piece.dst_out ? dst_scratch_[t] : user_dst);
      piece.primitive.execute(stream, args);
      if (piece.dst_out) {
        memory scratch = dst_scratch_[t];
        piece.dst_out->execute(stream, scratch, user_dst);
      }
      stream.wait();
    };
    if (tasks_ == 1) {
      run_task(0);
      return absl::OkStatus();
    }
    return ForEachPiece(tasks_, pool, run_task);
  }

  std::string Describe() const override {
    const ConvolutionPiece& piece = pieces_[0];
    std::vector<std::string> reorders;
    if (piece.src_in) reorders.push_back("input");
    if (piece.weights_in) reorders.push_back("kernel");
    if (piece.dst_out) reorders.push_back("result");
    return absl::StrCat(
        spec_.transposed ? "deconvolution " : "convolution ", piece.impl,
        tasks_ > 1 ? absl::StrCat(", ", tasks_, " slices of ", piece.batch, " images") : "",
        reorders.empty() ? "" : absl::StrCat(" (reorders ", absl::StrJoin(reorders, ", "), ")"));
  }

 private:
  // Writes the kernel, spatially reversed, into flipped_ with the kernel's
  // own strides (the spatial dimensions are the trailing weights_dims).
  void FlipKernel(const void* kernel) const {
    const int64_t rank = static_cast<int64_t>(spec_.weights_dims.size());
    const int64_t spatial = static_cast<int64_t>(spec_.window_strides.size());
    const int width = ByteWidth(spec_.input_type);
    int64_t elements = 1;
    for (int64_t d : spec_.weights_dims) elements *= d;
    std::vector<int64_t> index(rank, 0);
    const uint8_t* from = static_cast<const uint8_t*>(kernel);
    uint8_t* to = flipped_.data();
    for (int64_t e = 0; e < elements; ++e) {
      int64_t source = 0, target = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const bool reversed = d >= rank - spatial;
        const int64_t i = reversed ? spec_.weights_dims[d] - 1 - index[d] : index[d];
        source += i * spec_.weights_strides[d];
        target += index[d] * spec_.weights_strides[d];
      }
      std::memcpy(to + target * width, from + source * width, width);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < spec_.weights_dims[d]) break;
        index[d] = 0;
      }
    }
  }

  const ConvolutionPiece& PieceOf(int64_t task) const {
    return pieces_[(task == tasks_ - 1 && pieces_.size() > 1) ? 1 : 0];
  }

  ConvolutionSpec spec_;
  std::vector<ConvolutionPiece> pieces_;  // Full slices, then a shorter last one.
  int64_t tasks_;
  int omp_threads_;
  mutable std::mutex mu_;
  std::vector<memory> weights_scratch_, src_scratch_, dst_scratch_;
  mutable std::vector<uint8_t> flipped_;  // The reversed kernel (transposed only).
};

// A convolution with batch_group_count G > 1 as the weight gradient of the
// grouped forward convolution it differentiates. With the HLO's lhs batch
// dimension as the forward input's channels C (group g holds channels
// [g*C/G, (g+1)*C/G)), its lhs feature dimension as the forward batch N,
// the rhs as the forward result's gradient {N (rhs input feature), O (rhs
// output feature), spatial} and the result as the kernel gradient {O, C/G
// (result batch), spatial}:
//
//   out[c', o, k] = sum_{n, s} lhs[batch g*C/G + c', feature n, k*D + s*S - pl] * rhs[n, o, s]
//
// which is dW of y[s] = sum_k x[s*S + k*D - pl] w[k] with the forward stride
// S = the HLO window dilation, the forward dilation D = the HLO window
// stride, the same low padding, and the high padding that makes the forward
// result as long as the rhs.
OneDnnRefusal WeightGradientFromHlo(const HloInstruction& convolution, ConvolutionSpec* spec) {
  const Shape& input = convolution.operand(0)->shape();
  const Shape& kernel = convolution.operand(1)->shape();
  const Shape& out = convolution.shape();
  const HloAttributes& a = convolution.attrs();
  const xla::ConvolutionDimensionNumbers& dn = a.convolution_dimension_numbers;
  const int64_t spatial = dn.input_spatial_dimensions_size();
  const int64_t groups = a.batch_group_count;
  if (a.feature_group_count != 1) return "batch_group_count with feature_group_count";
  if (out.element_type() != input.element_type()) return "weight gradient with a type change";
  const int64_t channels = input.dimensions(dn.input_batch_dimension());
  const int64_t images = input.dimensions(dn.input_feature_dimension());
  const int64_t out_features = kernel.dimensions(dn.kernel_output_feature_dimension());
  if (groups < 2 || channels % groups != 0 || out_features % groups != 0) {
    return "batch_group_count does not divide the batch and output features";
  }
  if (kernel.dimensions(dn.kernel_input_feature_dimension()) != images ||
      out.dimensions(dn.output_feature_dimension()) != out_features ||
      out.dimensions(dn.output_batch_dimension()) != channels / groups) {
    return "not the weight gradient of a grouped convolution";
  }
  const std::vector<int64_t> is = RowMajorStridesOf(input.dimensions());
  const std::vector<int64_t> ks = RowMajorStridesOf(kernel.dimensions());
  const std::vector<int64_t> os = RowMajorStridesOf(out.dimensions());
  const int64_t per_group = out_features / groups;
  ConvolutionSpec s;
  s.weight_gradient = true;
  s.input_type = input.element_type();
  s.output_type = out.element_type();
  s.groups = groups;
  s.src_dims = {images, channels};
  s.src_strides = {is[dn.input_feature_dimension()], is[dn.input_batch_dimension()]};
  s.dst_dims = {images, out_features};
  s.dst_strides = {ks[dn.kernel_input_feature_dimension()], ks[dn.kernel_output_feature_dimension()]};
  const int64_t of = os[dn.output_feature_dimension()];
  s.weights_dims = {groups, per_group, channels / groups};
  s.weights_strides = {of * per_group, of, os[dn.output_batch_dimension()]};
  for (int64_t i = 0; i < spatial; ++i) {
    const xla::WindowDimension& w = a.window->dimensions(i);
    const int64_t in_size = input.dimensions(dn.input_spatial_dimensions(i));
    const int64_t dy_size = kernel.dimensions(dn.kernel_spatial_dimensions(i));
    const int64_t k_size = out.dimensions(dn.output_spatial_dimensions(i));
    const int64_t forward_dilation = w.stride() == 0 ? 1 : w.stride();
    const int64_t forward_stride = w.window_dilation() == 0 ? 1 : w.window_dilation();
    if (w.window_reversal()) return "window reversal";
    if (w.base_dilation() > 1) return "batch_group_count with input (lhs) dilation";
    if (w.size() != dy_size) return "window size differs from the kernel";
    if (w.padding_low() < 0) return "negative padding";
    if (forward_dilation < 1 || forward_stride < 1) return "non-positive stride or dilation";
    const int64_t pad_high = (dy_size - 1) * forward_stride + (k_size - 1) * forward_dilation + 1 -
                             in_size - w.padding_low();
    if (pad_high < 0) return "weight gradient whose forward convolution skips input";
    s.src_dims.push_back(in_size);
    s.src_strides.push_back(is[dn.input_spatial_dimensions(i)]);
    s.dst_dims.push_back(dy_size);
    s.dst_strides.push_back(ks[dn.kernel_spatial_dimensions(i)]);
    s.weights_dims.push_back(k_size);
    s.weights_strides.push_back(os[dn.output_spatial_dimensions(i)]);
    s.window_strides.push_back(forward_stride);
    s.dilation.push_back(forward_dilation - 1);
    s.pad_low.push_back(w.padding_low());
    s.pad_high.push_back(pad_high);
  }
  for (const std::vector<int64_t>* dims : {&s.src_dims, &s.weights_dims, &s.dst_dims}) {
    for (int64_t d : *dims) {
      if (d <= 0) return "an empty dimension";
    }
  }
  *spec = std::move(s);
  return std::nullopt;
}

}  // namespace

int ConvolutionImplementationRank(const std::string& impl) {
  if (absl::StrContains(impl, "ref")) return 0;
  if (absl::StrContains(impl, "gemm")) return 1;
  return 2;
}

std::string ConvolutionSpec::Key() const {
  return absl::StrCat(
      "convolution ", PrimitiveTypeName(input_type), "->", PrimitiveTypeName(output_type),
      " src=", absl::StrJoin(src_dims, "x"), "/", absl::StrJoin(src_strides, ","),
      " weights=", absl::StrJoin(weights_dims, "x"), "/", absl::StrJoin(weights_strides, ","),
      " dst=", absl::StrJoin(dst_dims, "x"), "/", absl::StrJoin(dst_strides, ","),
      " stride=", absl::StrJoin(window_strides, ","), " dilation=", absl::StrJoin(dilation, ","),
      " pad=", absl::StrJoin(pad_low, ","), "/", absl::StrJoin(pad_high, ","), " groups=", groups,
      transposed ? " transposed" : "", weight_gradient ? " weight-gradient" : "",
      " ", epilogue.Key(), " buffers=", input_buffer, ",", kernel_buffer, ",", out_buffer);
}

OneDnnRefusal ConvolutionFromHlo(const HloInstruction& convolution, ConvolutionSpec* spec) {
  if (convolution.opcode() != HloOpcode::kConvolution || convolution.operand_count() != 2) {
    return "not a convolution";
  }
  if (HasDynamicDimensions(convolution)) return "dynamic dimensions";
  const Shape& input = convolution.operand(0)->shape();
  const Shape& kernel = convolution.operand(1)->shape();
  const Shape& out = convolution.shape();
  if (!input.IsArray() || !kernel.IsArray() || !out.IsArray()) return "operands are not arrays";
  const PrimitiveType type = input.element_type();
  if (kernel.element_type() != type) return "input and kernel types differ";
  if (OneDnnType(type) == memory::data_type::undef) {
    return absl::StrCat("element type ", PrimitiveTypeName(type), " (oneDNN takes f32, bf16, f16)");
  }
  if (out.element_type() != type && out.element_type() != xla::F32) {
    return absl::StrCat("result type ", PrimitiveTypeName(out.element_type()), " from ",
                        PrimitiveTypeName(type));
  }
  const HloAttributes& a = convolution.attrs();
  const xla::ConvolutionDimensionNumbers& dn = a.convolution_dimension_numbers;
  const int64_t spatial = dn.input_spatial_dimensions_size();
  if (spatial < 1 || spatial > 3) return absl::StrCat(spatial, " spatial dimensions (oneDNN: 1-3)");
  if (dn.kernel_spatial_dimensions_size() != spatial ||
      dn.output_spatial_dimensions_size() != spatial || a.window->dimensions_size() != spatial ||
      input.rank() != spatial + 2 || kernel.rank() != spatial + 2 || out.rank() != spatial + 2) {
    return "inconsistent ranks";
  }
  auto in_range = [](int64_t d, const Shape& s) { return d >= 0 && d < s.rank(); };
  if (!in_range(dn.input_batch_dimension(), input) ||
      !in_range(dn.input_feature_dimension(), input) ||
      !in_range(dn.kernel_input_feature_dimension(), kernel) ||
      !in_range(dn.kernel_output_feature_dimension(), kernel) ||
      !in_range(dn.output_batch_dimension(), out) || !in_range(dn.output_feature_dimension(), out)) {
    return "dimension number out of range";
  }
  for (int64_t i = 0; i < spatial; ++i) {
    if (!in_range(dn.input_spatial_dimensions(i), input) ||
        !in_range(dn.kernel_spatial_dimensions(i), kernel) ||
        !in_range(dn.output_spatial_dimensions(i), out)) {
      return "dimension number out of range";
    }
  }
  if (a.batch_group_count != 1) return WeightGradientFromHlo(convolution, spec);
  const std::vector<int64_t> is = RowMajorStridesOf(input.dimensions());
  const std::vector<int64_t> ks = RowMajorStridesOf(kernel.dimensions());
  const std::vector<int64_t> os = RowMajorStridesOf(out.dimensions());
  const int64_t batch = input.dimensions(dn.input_batch_dimension());
  const int64_t features = input.dimensions(dn.input_feature_dimension());
  const int64_t out_features = kernel.dimensions(dn.kernel_output_feature_dimension());
  const int64_t groups = a.feature_group_count;
  if (groups < 1 || features % groups != 0 || out_features % groups != 0 ||
      kernel.dimensions(dn.kernel_input_feature_dimension()) != features / groups) {
    return "feature counts do not match feature_group_count";
  }
  if (out.dimensions(dn.output_batch_dimension()) != batch ||
      out.dimensions(dn.output_feature_dimension()) != out_features) {
    return "result batch or feature size differs";
  }
  bool transposed = false;
  for (const xla::WindowDimension& w : a.window->dimensions()) {
    transposed = transposed || w.base_dilation() > 1;
  }
  ConvolutionSpec s;
  s.transposed = transposed;
  s.input_type = type;
  s.output_type = out.element_type();
  s.groups = groups;
  s.src_dims = {batch, features};
  s.src_strides = {is[dn.input_batch_dimension()], is[dn.input_feature_dimension()]};
  const int64_t kof = dn.kernel_output_feature_dimension();
  const int64_t kif = dn.kernel_input_feature_dimension();
  if (groups == 1) {
    s.weights_dims = {out_features, features};
    s.weights_strides = {ks[kof], ks[kif]};
  } else {
    s.weights_dims = {groups, out_features / groups, features / groups};
    s.weights_strides = {ks[kof] * (out_features / groups), ks[kof], ks[kif]};
  }
  s.dst_dims = {batch, out_features};
  s.dst_strides = {os[dn.output_batch_dimension()], os[dn.output_feature_dimension()]};
  for (int64_t i = 0; i < spatial; ++i) {
    const xla::WindowDimension& w = a.window->dimensions(i);
    const int64_t in_size = input.dimensions(dn.input_spatial_dimensions(i));
    const int64_t k_size = kernel.dimensions(dn.kernel_spatial_dimensions(i));
    const int64_t out_size = out.dimensions(dn.output_spatial_dimensions(i));
    const int64_t stride = w.stride() == 0 ? 1 : w.stride();
    const int64_t dilation = w.window_dilation() == 0 ? 1 : w.window_dilation();
    const int64_t base_dilation = w.base_dilation() == 0 ? 1 : w.base_dilation();
    if (w.window_reversal()) return "window reversal";
    if (w.size() != k_size) return "window size differs from the kernel";
    if (w.padding_low() < 0 || w.padding_high() < 0) return "negative padding";
    if (stride < 1 || dilation < 1 || base_dilation < 1) {
      return "non-positive stride or dilation";
    }
    const int64_t span = (k_size - 1) * dilation + 1;
    const int64_t padded =
        (in_size - 1) * base_dilation + 1 + w.padding_low() + w.padding_high();
    const int64_t expected = padded < span ? 0 : (padded - span) / stride + 1;
    if (expected != out_size) return "result spatial size differs from the window";
    s.src_dims.push_back(in_size);
    s.src_strides.push_back(is[dn.input_spatial_dimensions(i)]);
    s.weights_dims.push_back(k_size);
    s.weights_strides.push_back(ks[dn.kernel_spatial_dimensions(i)]);
    s.dst_dims.push_back(out_size);
    s.dst_strides.push_back(os[dn.output_spatial_dimensions(i)]);
    s.dilation.push_back(dilation - 1);
    if (!transposed) {
      s.window_strides.push_back(stride);
      s.pad_low.push_back(w.padding_low());
      s.pad_high.push_back(w.padding_high());
      continue;
    }
    // The deconvolution's padding (see the top of this file).
    if (stride != 1) return "input (lhs) dilation with window strides";
    const int64_t low = span - 1 - w.padding_low(), high = span - 1 - w.padding_high();
    if (low < 0 || high < 0) return "input (lhs) dilation with padding past the kernel";
    s.window_strides.push_back(base_dilation);
    s.pad_low.push_back(low);
    s.pad_high.push_back(high);
  }
  for (const std::vector<int64_t>* dims : {&s.src_dims, &s.weights_dims, &s.dst_dims}) {
    for (int64_t d : *dims) {
      if (d <= 0) return "an empty dimension";
    }
  }
  *spec = std::move(s);
  return std::nullopt;
}

absl::StatusOr<std::shared_ptr<const OneDnnOperation>> BuildConvolution(
    const ConvolutionSpec& spec, const dnnl::engine& engine) {
  if (spec.weight_gradient) return BuildWeightGradient(spec, engine);
  for (const OneDnnEpilogue::Step& step : spec.epilogue.steps) {
    if (step.kind == OneDnnStep::kGeluTanh || step.kind == OneDnnStep::kGeluErf) {
      return absl::UnimplementedError("convolutions take no GELU epilogue");
    }
  }
  const memory::data_type in = OneDnnType(spec.input_type);
  const memory::data_type out = OneDnnType(spec.output_type);
  const memory::data_type vector_type = OneDnnType(spec.epilogue.vector_type);
  const int64_t features = spec.dst_dims[1];
  const memory::desc weights(spec.weights_dims, in, spec.weights_strides);
  const memory::desc bias({features}, vector_type, memory::dims{1});
  // A per-feature vector broadcast against the result: {1, O, 1, ...}.
  std::vector<int64_t> vector_dims(spec.dst_dims.size(), 1);
  std::vector<int64_t> vector_strides(spec.dst_dims.size(), features);
  vector_dims[1] = features;
  vector_strides[1] = 1;
  const memory::desc vector(vector_dims, vector_type, vector_strides);
  dnnl::primitive_attr attr = spec.epilogue.Attributes(vector);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);

  // Split into batch slices (a few per thread) when large enough.
  const int threads = OneDnnContext::DefaultThreads();
  const int64_t batch = spec.src_dims[0];
  double macs = static_cast<double>(batch) * features * spec.src_dims[1] / spec.groups;
  for (size_t i = 2; i < spec.dst_dims.size(); ++i) {
    macs *= static_cast<double>(spec.dst_dims[i]) * spec.weights_dims[spec.weights_dims.size() -
                                                                        spec.dst_dims.size() + i];
  }
  int64_t slice = batch, tasks = 1;
  if (threads > 1 && batch > 1 && macs >= double{1 << 20}) {
    const int64_t wanted = std::min<int64_t>(batch, 4 * static_cast<int64_t>(threads));
    slice = (batch + wanted - 1) / wanted;
    tasks = (batch + slice - 1) / slice;
  }
  // A whole convolution uses OpenMP threads only when it is big enough to
  // pay for them: on a busy machine a small one stalled for tens of
  // milliseconds waiting for a descheduled OpenMP thread (bench/RESULTS.md).
  constexpr double kOpenMpMinMacs = double{1 << 24};
  const int omp_threads = (tasks == 1 && macs >= kOpenMpMinMacs) ? threads : 1;

  auto make_piece = [&](int64_t images) -> absl::StatusOr<ConvolutionPiece> {
    std::vector<int64_t> src_dims = spec.src_dims, dst_dims = spec.dst_dims;
    src_dims[0] = images;
    dst_dims[0] = images;
    const memory::desc src(src_dims, in, spec.src_strides);
    const memory::desc dst(dst_dims, out, spec.dst_strides);
    auto make_pd = [&](const memory::desc& s, const memory::desc& w,
                       const memory::desc& d) -> dnnl::primitive_desc {
      const auto kind = dnnl::prop_kind::forward_inference;
      if (spec.transposed) {
        const auto algorithm = dnnl::algorithm::deconvolution_direct;
        dnnl::deconvolution_forward::desc desc =
            spec.epilogue.NativeBias()
                ? dnnl::deconvolution_forward::desc(kind, algorithm, s, w, bias, d,
                                                    spec.window_strides, spec.dilation,
                                                    spec.pad_low, spec.pad_high)
                : dnnl::deconvolution_forward::desc(kind, algorithm, s, w, d,
                                                    spec.window_strides, spec.dilation,
                                                    spec.pad_low, spec.pad_high);
        return dnnl::deconvolution_forward::primitive_desc(desc, attr, engine,
                                                           /*allow_empty=*/true);
      }
      const auto algorithm = dnnl::algorithm::convolution_direct;
      dnnl::convolution_forward::desc desc =
          spec.epilogue.NativeBias()
              ? dnnl::convolution_forward::desc(kind, algorithm, s, w, bias, d,
                                                spec.window_strides, spec.dilation, spec.pad_low,
                                                spec.pad_high)
              : dnnl::convolution_forward::desc(kind, algorithm, s, w, d, spec.window_strides,
                                                spec.dilation, spec.pad_low, spec.pad_high);
      return dnnl::convolution_forward::primitive_desc(desc, attr, engine, /*allow_empty=*/true);
    };
    ScopedOmpThreads scoped(omp_threads);
    dnnl::primitive_desc chosen = make_pd(src, weights, dst);
    if (!chosen || ConvolutionImplementationRank(chosen.impl_info_str()) < 2) {
      const auto any = memory::format_tag::any;
      dnnl::primitive_desc blocked =
          make_pd(memory::desc(src_dims, in, any), memory::desc(spec.weights_dims, in, any),
                  memory::desc(dst_dims, out, any));
      if (blocked && (!chosen || ConvolutionImplementationRank(blocked.impl_info_str()) >
                                     ConvolutionImplementationRank(chosen.impl_info_str()))) {
        chosen = blocked;
      }
    }
    if (!chosen) return absl::UnimplementedError(absl::StrCat("oneDNN has no ", spec.Key()));
    ConvolutionPiece piece;
    piece.batch = images;
    piece.primitive = dnnl::primitive(chosen);
    piece.src = chosen.src_desc(0);
    piece.weights = chosen.weights_desc(0);
    piece.dst = chosen.dst_desc(0);
    piece.scratchpad = chosen.scratchpad_desc();
    piece.user_src = src;
    piece.user_weights = weights;
    piece.user_dst = dst;
    piece.bias = bias;
    piece.vector = vector;
    piece.impl = chosen.impl_info_str();
    if (!(piece.src == src)) {
      piece.src_in = dnnl::reorder(dnnl::reorder::primitive_desc(engine, src, engine, piece.src));
    }
    if (!(piece.weights == weights)) {
      piece.weights_in =
          dnnl::reorder(dnnl::reorder::primitive_desc(engine, weights, engine, piece.weights));
    }
    if (!(piece.dst == dst)) {
      piece.dst_out = dnnl::reorder(dnnl::reorder::primitive_desc(engine, piece.dst, engine, dst));
    }
    return piece;
  };
  std::vector<ConvolutionPiece> pieces;
  absl::StatusOr<ConvolutionPiece> full = make_piece(slice);
  if (!full.ok()) return full.status();
  pieces.push_back(*std::move(full));
  const int64_t last = batch - (tasks - 1) * slice;
  if (last != slice) {
    absl::StatusOr<ConvolutionPiece> rest = make_piece(last);
    if (!rest.ok()) return rest.status();
    pieces.push_back(*std::move(rest));
  }
  return std::shared_ptr<const OneDnnOperation>(
      std::make_shared<ConvolutionOperation>(spec, std::move(pieces), tasks, omp_threads, engine));
}

}  // namespace host
}  // namespace hloc
