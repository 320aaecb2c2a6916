// Propagation macros for absl::Status / absl::StatusOr.
#ifndef HLOC_HLO_STATUS_MACROS_H_
#define HLOC_HLO_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HLOC_STATUS_CONCAT_INNER(a, b) a##b
#define HLOC_STATUS_CONCAT(a, b) HLOC_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` is not OK.
#define HLOC_RETURN_IF_ERROR(expr)                  \
  do {                                              \
    ::absl::Status hloc_status_ = (expr);           \
    if (!hloc_status_.ok()) return hloc_status_;    \
  } while (0)

// `lhs = value` of a StatusOr, or return its error.
#define HLOC_ASSIGN_OR_RETURN(lhs, rexpr) \
  HLOC_ASSIGN_OR_RETURN_IMPL(HLOC_STATUS_CONCAT(hloc_statusor_, __LINE__), lhs, rexpr)
#define HLOC_ASSIGN_OR_RETURN_IMPL(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                               \
  if (!statusor.ok()) return statusor.status();          \
  lhs = std::move(statusor).value()

#endif  // HLOC_HLO_STATUS_MACROS_H_
