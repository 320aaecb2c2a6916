// Status propagation for runtime/cuda. The runtime does not depend on hlo/,
// so it carries its own copy of the two macros hlo/status_macros.h defines.
#ifndef HLOC_RUNTIME_CUDA_STATUS_UTIL_H_
#define HLOC_RUNTIME_CUDA_STATUS_UTIL_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HLOC_CUDA_CONCAT_INNER(a, b) a##b
#define HLOC_CUDA_CONCAT(a, b) HLOC_CUDA_CONCAT_INNER(a, b)

#define HLOC_CUDA_RETURN_IF_ERROR(expr)                    \
  do {                                                     \
    ::absl::Status hloc_cuda_status_ = (expr);             \
    if (!hloc_cuda_status_.ok()) return hloc_cuda_status_; \
  } while (0)

// Multi-statement: put braces around it after an `if`.
#define HLOC_CUDA_ASSIGN_OR_RETURN(lhs, rexpr) \
  HLOC_CUDA_ASSIGN_OR_RETURN_IMPL(HLOC_CUDA_CONCAT(hloc_cuda_statusor_, __LINE__), lhs, rexpr)
#define HLOC_CUDA_ASSIGN_OR_RETURN_IMPL(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                    \
  if (!statusor.ok()) return statusor.status();               \
  lhs = std::move(statusor).value()

#endif  // HLOC_RUNTIME_CUDA_STATUS_UTIL_H_
