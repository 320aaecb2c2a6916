/* Custom-call functions for `hloc run --custom-call-library` in
 * hloc_cli_test.sh, written against the C API only (hloc_c.h);
 * hloc_error_create resolves to the hloc binary's. */
#include <stddef.h>
#include <stdint.h>

#include "api/hloc_c.h"

static size_t Elements(const hloc_custom_call_array* array) {
  size_t n = 1;
  for (size_t d = 0; d < array->rank; ++d) n *= (size_t)array->dims[d];
  return n;
}

/* results[0] = 2 * operands[0], one f32 array of any shape. */
hloc_error* cli_scale_by_two(void* user_data, const hloc_custom_call_frame* frame) {
  (void)user_data;
  if (frame->num_operands != 1 || frame->num_results != 1 ||
      frame->operands[0].type != HLOC_F32 || frame->results[0].type != HLOC_F32) {
    return hloc_error_create(HLOC_ERROR_INVALID_ARGUMENT, "cli_scale_by_two takes one f32 array");
  }
  const float* in = (const float*)frame->operands[0].data;
  float* out = (float*)frame->results[0].data;
  for (size_t i = 0; i < Elements(&frame->operands[0]); ++i) out[i] = 2.0f * in[i];
  return NULL;
}

hloc_error* cli_always_fails(void* user_data, const hloc_custom_call_frame* frame) {
  (void)user_data;
  (void)frame;
  return hloc_error_create(HLOC_ERROR_INVALID_ARGUMENT, "cli_always_fails refuses every call");
}
