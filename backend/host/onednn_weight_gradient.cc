// Weight gradients of grouped convolutions (HLO batch_group_count > 1) as
// oneDNN's convolution_backward_weights (see ConvolutionSpec::weight_gradient
// in onednn_operations.h for how the HLO maps onto it).
//
// XLA writes the kernel gradient of a depthwise convolution this way; as a
// generated loop it read the whole activation once per kernel tap (about
// 0.6 GFLOP/s on mobilenet_v2's), where oneDNN's depthwise backward-weights
// kernels stream it once. As for the forward convolution, the primitive is
// first asked for the HLO's own layouts; when that finds only oneDNN's
// reference or gemm-based code, it is asked again with layouts of its
// choosing and the operation reorders the input and gradient into them and
// the result back.
#include <mutex>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/host/onednn_operations.h"

namespace hloc {
namespace host {
namespace {

using dnnl::memory;

class WeightGradientOperation : public OneDnnOperation {
 public:
  WeightGradientOperation(const ConvolutionSpec& spec, const dnnl::engine& engine,
                          dnnl::primitive primitive, memory::desc src, memory::desc diff_dst,
                          memory::desc diff_weights, memory::desc scratchpad,
                          memory::desc user_src, memory::desc user_diff_dst,
                          memory::desc user_diff_weights, std::string impl, int omp_threads)
      : spec_(spec), primitive_(std::move(primitive)), scratchpad_(scratchpad),
        user_src_(user_src), user_diff_dst_(user_diff_dst), user_diff_weights_(user_diff_weights),
        impl_(std::move(impl)), omp_threads_(omp_threads) {
    if (!(src == user_src)) {
      src_in_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, user_src, engine, src));
      src_ = memory(src, engine);
    }
    if (!(diff_dst == user_diff_dst)) {
      diff_dst_in_ =
          dnnl::reorder(dnnl::reorder::primitive_desc(engine, user_diff_dst, engine, diff_dst));
      diff_dst_ = memory(diff_dst, engine);
    }
    if (!(diff_weights == user_diff_weights)) {
      diff_weights_out_ = dnnl::reorder(
          dnnl::reorder::primitive_desc(engine, diff_weights, engine, user_diff_weights));
      diff_weights_ = memory(diff_weights, engine);
    }
  }

  absl::Status Run(absl::Span<void* const> buffers, const dnnl::engine& engine,
                   runtime::ThreadPool* pool) const override {
    std::lock_guard<std::mutex> lock(mu_);  // The reorder buffers are shared.
    ScopedOmpThreads scoped(pool == nullptr ? 1 : omp_threads_);
    dnnl::stream stream(engine);
    memory user_src(user_src_, engine, buffers[spec_.input_buffer]);
    memory user_diff_dst(user_diff_dst_, engine, buffers[spec_.kernel_buffer]);
    memory user_diff_weights(user_diff_weights_, engine, buffers[spec_.out_buffer]);
    if (src_in_) src_in_->execute(stream, user_src, src_);
    if (diff_dst_in_) diff_dst_in_->execute(stream, user_diff_dst, diff_dst_);
    std::unordered_map<int, memory> args;
    args.emplace(DNNL_ARG_SRC, src_in_ ? src_ : user_src);
    args.emplace(DNNL_ARG_DIFF_DST, diff_dst_in_ ? diff_dst_ : user_diff_dst);
    args.emplace(DNNL_ARG_DIFF_WEIGHTS, diff_weights_out_ ? diff_weights_ : user_diff_weights);
    args.emplace(DNNL_ARG_SCRATCHPAD, ThreadScratchpad(scratchpad_, engine));
    primitive_.execute(stream, args);
    if (diff_weights_out_) diff_weights_out_->execute(stream, diff_weights_, user_diff_weights);
    stream.wait();
    return absl::OkStatus();
  }

  std::string Describe() const override {
    std::vector<std::string> reorders;
    if (src_in_) reorders.push_back("input");
    if (diff_dst_in_) reorders.push_back("gradient");
    if (diff_weights_out_) reorders.push_back("result");
    return absl::StrCat(
        "convolution weight gradient ", impl_,
        reorders.empty() ? "" : absl::StrCat(" (reorders ", absl::StrJoin(reorders, ", "), ")"));
  }

 private:
  ConvolutionSpec spec_;
  dnnl::primitive primitive_;
  memory::desc scratchpad_, user_src_, user_diff_dst_, user_diff_weights_;
  std::optional<dnnl::reorder> src_in_, diff_dst_in_, diff_weights_out_;
  mutable memory src_, diff_dst_, diff_weights_;  // In the primitive's layouts, when they differ.
  std::string impl_;
  int omp_threads_;
  mutable std::mutex mu_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<const OneDnnOperation>> BuildWeightGradient(
    const ConvolutionSpec& spec, const dnnl::engine& engine) {
  if (!spec.epilogue.steps.empty()) {
    return absl::UnimplementedError("a convolution weight gradient takes no epilogue");
  }
  const memory::data_type type = OneDnnType(spec.input_type);
  const memory::desc src(spec.src_dims, type, spec.src_strides);
  const memory::desc diff_dst(spec.dst_dims, type, spec.dst_strides);
  const memory::desc diff_weights(spec.weights_dims, type, spec.weights_strides);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const int omp_threads = OneDnnContext::DefaultThreads();
  ScopedOmpThreads scoped(omp_threads);
  const auto algorithm = dnnl::algorithm::convolution_direct;
  auto make_pd = [&](const memory::desc& s, const memory::desc& w,
                     const memory::desc& d) -> dnnl::convolution_backward_weights::primitive_desc {
    // oneDNN builds backward primitives from a forward one (its hint).
    dnnl::convolution_forward::primitive_desc forward(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algorithm, s, w, d,
                                        spec.window_strides, spec.dilation, spec.pad_low,
                                        spec.pad_high),
        engine, /*allow_empty=*/true);
    if (!forward) return {};
    return dnnl::convolution_backward_weights::primitive_desc(
        dnnl::convolution_backward_weights::desc(algorithm, s, w, d, spec.window_strides,
                                                 spec.dilation, spec.pad_low, spec.pad_high),
        attr, engine, forward, /*allow_empty=*/true);
  };
  dnnl::convolution_backward_weights::primitive_desc chosen = make_pd(src, diff_weights, diff_dst);
  if (!chosen || ConvolutionImplementationRank(chosen.impl_info_str()) < 2) {
    const auto any = memory::format_tag::any;
    dnnl::convolution_backward_weights::primitive_desc blocked =
        make_pd(memory::desc(spec.src_dims, type, any), memory::desc(spec.weights_dims, type, any),
                memory::desc(spec.dst_dims, type, any));
    if (blocked && (!chosen || ConvolutionImplementationRank(blocked.impl_info_str()) >
                                   ConvolutionImplementationRank(chosen.impl_info_str()))) {
      chosen = blocked;
    }
  }
  if (!chosen) return absl::UnimplementedError(absl::StrCat("oneDNN has no ", spec.Key()));
  return std::shared_ptr<const OneDnnOperation>(std::make_shared<WeightGradientOperation>(
      spec, engine, dnnl::primitive(chosen), chosen.src_desc(), chosen.diff_dst_desc(),
      chosen.diff_weights_desc(), chosen.scratchpad_desc(), src, diff_dst, diff_weights,
      chosen.impl_info_str(), omp_threads));
}

}  // namespace host
}  // namespace hloc
