// Printing and checking of library-call configurations.
#include "runtime/cuda/library_call_configs.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {
namespace cuda {
namespace {

int64_t Product(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (int64_t v : values) p *= v;
  return p;
}

std::string Dims(const std::vector<int64_t>& values) { return absl::StrJoin(values, "x"); }

// Sizes past this are rejected: products of a few of them stay in int64.
constexpr int64_t kMaxDim = int64_t{1} << 31;

}  // namespace

absl::string_view GpuDataTypeName(GpuDataType type) {
  switch (type) {
    case GpuDataType::kF32:
      return "f32";
    case GpuDataType::kF16:
      return "f16";
    case GpuDataType::kBF16:
      return "bf16";
  }
  return "?";
}

int64_t GpuDataTypeBytes(GpuDataType type) { return type == GpuDataType::kF32 ? 4 : 2; }

absl::string_view GemmEpilogueName(GemmEpilogue epilogue) {
  switch (epilogue) {
    case GemmEpilogue::kNone:
      return "none";
    case GemmEpilogue::kBias:
      return "bias";
    case GemmEpilogue::kRelu:
      return "relu";
    case GemmEpilogue::kBiasRelu:
      return "bias_relu";
    case GemmEpilogue::kGeluTanh:
      return "gelu_tanh";
    case GemmEpilogue::kBiasGeluTanh:
      return "bias_gelu_tanh";
  }
  return "?";
}

absl::string_view ConvEpilogueName(ConvEpilogue epilogue) {
  switch (epilogue) {
    case ConvEpilogue::kNone:
      return "none";
    case ConvEpilogue::kBias:
      return "bias";
    case ConvEpilogue::kBiasRelu:
      return "bias_relu";
  }
  return "?";
}

std::string GemmConfig::compute_type() const {
  return input_type == GpuDataType::kF32 && allow_tf32 ? "32F_FAST_TF32" : "32F";
}

std::string GemmConfig::ToString() const {
  return absl::StrCat("gemm batch=", batch, " m=", m, " n=", n, " k=", k,
                      " lhs=", lhs_transposed ? "T" : "N", " rhs=", rhs_transposed ? "T" : "N", " ",
                      GpuDataTypeName(input_type), "->", GpuDataTypeName(output_type),
                      " compute=", compute_type(), " alpha=", alpha, " beta=", beta,
                      " epilogue=", GemmEpilogueName(epilogue));
}

absl::Status GemmConfig::Validate() const {
  for (int64_t v : {batch, m, n, k}) {
    if (v < 1 || v > kMaxDim) {
      return absl::InvalidArgumentError(absl::StrCat(ToString(), ": sizes must be in [1, 2^31]"));
    }
  }
  if (batch * m > kMaxDim * 4 || batch * n > kMaxDim * 4) {
    return absl::InvalidArgumentError(absl::StrCat(ToString(), ": too large"));
  }
  if (output_type != input_type && output_type != GpuDataType::kF32) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToString(), ": output type must be the input type or f32"));
  }
  return absl::OkStatus();
}

int64_t ConvConfig::input_bytes() const {
  return batch * input_features * Product(input_spatial) * GpuDataTypeBytes(type);
}
int64_t ConvConfig::filter_bytes() const {
  return output_features * (groups > 0 ? input_features / groups : 0) * Product(filter_spatial) *
         GpuDataTypeBytes(type);
}
int64_t ConvConfig::output_bytes() const {
  return batch * output_features * Product(output_spatial) * GpuDataTypeBytes(type);
}
int64_t ConvConfig::bias_bytes() const {
  return epilogue == ConvEpilogue::kNone ? 0 : output_features * GpuDataTypeBytes(type);
}

std::string ConvConfig::ToString() const {
  const int r = spatial_rank();
  std::string spatial_letters = r == 1 ? "W" : r == 2 ? "HW" : r == 3 ? "DHW" : "?";
  const bool first = layout == ConvLayout::kChannelsFirst;
  return absl::StrCat(
      "conv", r, "d ", GpuDataTypeName(type), " ",
      first ? absl::StrCat("NC", spatial_letters) : absl::StrCat("N", spatial_letters, "C"),
      " filter=",
      filter_layout == FilterLayout::kOutputInputSpatial ? absl::StrCat("OI", spatial_letters)
                                                         : absl::StrCat("O", spatial_letters, "I"),
      " batch=", batch, " in=", input_features, " out=", output_features, " groups=", groups,
      " input=", Dims(input_spatial), " filter=", Dims(filter_spatial),
      " output=", Dims(output_spatial), " stride=", Dims(strides), " pad=", Dims(padding),
      " dilation=", Dims(dilation), type == GpuDataType::kF32 && allow_tf32 ? " tf32" : "",
      alpha != 1.0 ? absl::StrCat(" alpha=", alpha) : "", " epilogue=", ConvEpilogueName(epilogue));
}

absl::Status ConvConfig::Validate() const {
  const size_t r = input_spatial.size();
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(ToString(), ": ", what));
  };
  if (r < 1 || r > 3) return error("1 to 3 spatial dimensions");
  if (filter_spatial.size() != r || output_spatial.size() != r || strides.size() != r ||
      padding.size() != r || dilation.size() != r) {
    return error("spatial vectors of different lengths");
  }
  for (int64_t v : {batch, input_features, output_features, groups}) {
    if (v < 1 || v > kMaxDim) return error("sizes must be in [1, 2^31]");
  }
  if (input_features % groups != 0 || output_features % groups != 0) {
    return error("features not divisible by groups");
  }
  for (size_t i = 0; i < r; ++i) {
    if (input_spatial[i] < 1 || filter_spatial[i] < 1 || output_spatial[i] < 1 || strides[i] < 1 ||
        dilation[i] < 1 || padding[i] < 0 || input_spatial[i] > kMaxDim ||
        filter_spatial[i] > kMaxDim || padding[i] > kMaxDim || strides[i] > kMaxDim ||
        dilation[i] > kMaxDim) {
      return error("bad spatial sizes");
    }
    const int64_t span = dilation[i] * (filter_spatial[i] - 1) + 1;
    const int64_t padded = input_spatial[i] + 2 * padding[i];
    const int64_t expected = padded < span ? 0 : (padded - span) / strides[i] + 1;
    if (expected != output_spatial[i]) {
      return error(absl::StrCat("output size ", output_spatial[i], " in spatial dimension ", i,
                                " should be ", expected));
    }
  }
  return absl::OkStatus();
}

}  // namespace cuda
}  // namespace hloc
