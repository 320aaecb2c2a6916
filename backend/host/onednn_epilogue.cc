// Library-call epilogues as oneDNN post-ops (see OneDnnEpilogue in
// onednn_operations.h).
#include "absl/strings/str_cat.h"
#include "backend/host/onednn_operations.h"

namespace hloc {
namespace host {

std::string OneDnnEpilogue::ToString() const {
  std::string out;
  if (alpha != 1.0) absl::StrAppend(&out, "alpha=", alpha);
  for (const Step& step : steps) {
    absl::StrAppend(&out, out.empty() ? "" : " ", OneDnnStepName(step.kind));
  }
  return out;
}

std::string OneDnnEpilogue::Key() const {
  std::string key = absl::StrCat("alpha=", alpha, " vectors:", PrimitiveTypeName(vector_type));
  for (const Step& step : steps) absl::StrAppend(&key, " ", OneDnnStepName(step.kind), "@", step.buffer);
  return key;
}

dnnl::primitive_attr OneDnnEpilogue::Attributes(const dnnl::memory::desc& vector) const {
  dnnl::post_ops ops;
  if (alpha != 1.0) {
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, static_cast<float>(alpha), 0.0f);
  }
  const size_t end = steps.size() - (GeluTanhAfterPrimitive() ? 1 : 0);
  for (size_t i = NativeBias() ? 1 : 0; i < end; ++i) {
    switch (steps[i].kind) {
      case OneDnnStep::kSub: ops.append_binary(dnnl::algorithm::binary_sub, vector); break;
      case OneDnnStep::kScale: ops.append_binary(dnnl::algorithm::binary_mul, vector); break;
      case OneDnnStep::kBias: ops.append_binary(dnnl::algorithm::binary_add, vector); break;
      case OneDnnStep::kRelu:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
        break;
      case OneDnnStep::kGeluTanh:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
        break;
      case OneDnnStep::kGeluErf:
        ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
        break;
    }
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return attr;
}

void OneDnnEpilogue::AddPostOpArguments(absl::Span<void* const> buffers,
                                        const dnnl::memory::desc& vector,
                                        const dnnl::engine& engine,
                                        std::unordered_map<int, dnnl::memory>* args,
                                        const void* owner) const {
  int index = alpha != 1.0 ? 1 : 0;  // Post-op position; the linear one comes first.
  for (size_t i = NativeBias() ? 1 : 0; i < steps.size(); ++i, ++index) {
    if (!OneDnnStepTakesVector(steps[i].kind)) continue;
    const int arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1;
    void* handle = buffers[steps[i].buffer];
    args->emplace(arg, owner != nullptr ? ThreadMemory(owner, arg, vector, engine, handle)
                                        : dnnl::memory(vector, engine, handle));
  }
}

}  // namespace host
}  // namespace hloc
