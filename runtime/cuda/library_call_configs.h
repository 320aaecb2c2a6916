// What a GPU library call computes, in terms the runtime understands (no
// HLO): a (batched) matrix multiply with its epilogue for cuBLASLt, a
// forward convolution with its epilogue for cuDNN. The compiler fills these
// from composite calls; the runtime turns them into library descriptors.
// Both are plain values that print themselves (plan dumps, autotuning keys)
// and check their own consistency, so they can be built and tested without
// a GPU.
#ifndef HLOC_RUNTIME_CUDA_LIBRARY_CALL_CONFIGS_H_
#define HLOC_RUNTIME_CUDA_LIBRARY_CALL_CONFIGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hloc {
namespace cuda {

enum class GpuDataType { kF32, kF16, kBF16 };
absl::string_view GpuDataTypeName(GpuDataType type);  // "f32", "f16", "bf16"
int64_t GpuDataTypeBytes(GpuDataType type);

// cuBLASLt's epilogues: an optional bias along the last dimension, then an
// optional relu or GELU (tanh approximation, the only form cuBLASLt has).
enum class GemmEpilogue { kNone, kBias, kRelu, kBiasRelu, kGeluTanh, kBiasGeluTanh };
absl::string_view GemmEpilogueName(GemmEpilogue epilogue);  // "none", "bias_relu", ...
inline bool HasBias(GemmEpilogue e) {
  return e == GemmEpilogue::kBias || e == GemmEpilogue::kBiasRelu ||
         e == GemmEpilogue::kBiasGeluTanh;
}

// out[b][i][j] = alpha * sum_l lhs[b][i][l] * rhs[b][l][j] + beta * out[b][i][j],
// then the epilogue (bias[j] added, then relu or tanh-GELU), with every
// array dense and row-major. Buffers of a gemm call, in order: lhs, rhs,
// bias (when the epilogue has one), output, workspace.
struct GemmConfig {
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  bool lhs_transposed = false;  // lhs stored as [batch][k][m] instead of [batch][m][k].
  bool rhs_transposed = false;  // rhs stored as [batch][n][k] instead of [batch][k][n].
  GpuDataType input_type = GpuDataType::kF32;
  GpuDataType output_type = GpuDataType::kF32;  // Also the bias type.
  // f32 inputs may use TF32 tensor cores (the HLO's precision allows it).
  bool allow_tf32 = false;
  double alpha = 1.0;
  double beta = 0.0;
  GemmEpilogue epilogue = GemmEpilogue::kNone;

  int64_t lhs_bytes() const { return batch * m * k * GpuDataTypeBytes(input_type); }
  int64_t rhs_bytes() const { return batch * k * n * GpuDataTypeBytes(input_type); }
  int64_t output_bytes() const { return batch * m * n * GpuDataTypeBytes(output_type); }
  int64_t bias_bytes() const { return HasBias(epilogue) ? n * GpuDataTypeBytes(output_type) : 0; }
  // Accumulation: "32F" or "32F_FAST_TF32".
  std::string compute_type() const;

  // "gemm batch=1 m=8 n=64 k=32 lhs=N rhs=T f32->f32 compute=32F alpha=1
  // beta=0 epilogue=bias_relu": deterministic, used in autotuning keys.
  std::string ToString() const;
  absl::Status Validate() const;
};

// Input and output of a convolution: batch outermost, then features before
// the spatial dimensions (NCHW-like) or after them (NHWC-like).
enum class ConvLayout { kChannelsFirst, kChannelsLast };
// Filter: output features outermost, then input features before the
// spatial dimensions (OIHW-like) or after them (OHWI-like).
enum class FilterLayout { kOutputInputSpatial, kOutputSpatialInput };
enum class ConvEpilogue { kNone, kBias, kBiasRelu };
absl::string_view ConvEpilogueName(ConvEpilogue epilogue);

// A forward convolution (cross-correlation, as HLO defines it) with
// symmetric padding, strides, filter dilation and feature groups; then the
// epilogue (bias per output feature, then relu). Buffers of a conv call, in
// order: input, filter, bias (when the epilogue has one), output, workspace.
struct ConvConfig {
  GpuDataType type = GpuDataType::kF32;
  ConvLayout layout = ConvLayout::kChannelsFirst;  // Input and output.
  FilterLayout filter_layout = FilterLayout::kOutputInputSpatial;
  int64_t batch = 0;
  int64_t input_features = 0;   // Per image (all groups).
  int64_t output_features = 0;  // Per image (all groups).
  int64_t groups = 1;           // Filter input features = input_features / groups.
  std::vector<int64_t> input_spatial, filter_spatial, output_spatial;
  std::vector<int64_t> strides, padding, dilation;  // Per spatial dimension.
  bool allow_tf32 = false;
  double alpha = 1.0;  // Scales the convolution before the epilogue.
  ConvEpilogue epilogue = ConvEpilogue::kNone;

  int spatial_rank() const { return static_cast<int>(input_spatial.size()); }
  int64_t input_bytes() const;
  int64_t filter_bytes() const;
  int64_t output_bytes() const;
  int64_t bias_bytes() const;

  // "conv2d f32 NHWC filter=OHWI batch=1 in=3 out=16 groups=1 input=32x32
  // filter=3x3 output=32x32 stride=1x1 pad=1x1 dilation=1x1 epilogue=bias_relu"
  std::string ToString() const;
  absl::Status Validate() const;
};

}  // namespace cuda
}  // namespace hloc

#endif  // HLOC_RUNTIME_CUDA_LIBRARY_CALL_CONFIGS_H_
