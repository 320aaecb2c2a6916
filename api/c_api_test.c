/* The C API from C11: compile, run, read results, and every error path.
 * Prints one line per check and "N passed, N failed" at the end. */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/hloc_c.h"

static int passed = 0, failed = 0;

#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (cond) {                                             \
      ++passed;                                             \
    } else {                                                \
      ++failed;                                             \
      fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                         \
      fprintf(stderr, "\n");                                \
    }                                                       \
  } while (0)

/* Checks that `error` is an error of `code` whose message contains `part`,
 * then destroys it. */
static void expect_error(hloc_error* error, hloc_error_code code, const char* part,
                         const char* what) {
  CHECK(error != NULL, "%s: expected an error", what);
  if (error == NULL) return;
  CHECK(hloc_error_get_code(error) == code, "%s: code %d, message: %s", what,
        (int)hloc_error_get_code(error), hloc_error_message(error));
  CHECK(strstr(hloc_error_message(error), part) != NULL, "%s: message '%s' lacks '%s'", what,
        hloc_error_message(error), part);
  hloc_error_destroy(error);
}

static void expect_ok(hloc_error* error, const char* what) {
  CHECK(error == NULL, "%s: %s", what, hloc_error_message(error));
  hloc_error_destroy(error);
}

static const char kAdd[] =
    "HloModule add\n"
    "ENTRY main {\n"
    "  x = f32[2,3] parameter(0)\n"
    "  y = f32[2,3] parameter(1)\n"
    "  s = f32[2,3] add(x, y)\n"
    "  n = s32[] constant(7)\n"
    "  ROOT out = (f32[2,3], s32[]) tuple(s, n)\n"
    "}\n";

static int releases = 0;
static void count_release(void* user) {
  (void)user;
  ++releases;
}

/* Custom calls: "axpy" computes (a * x + y, sum(x)) with a from the
 * backend_config; "fails" reports an error. */
static const char kAxpy[] =
    "HloModule axpy\n"
    "ENTRY main {\n"
    "  x = f32[4] parameter(0)\n"
    "  y = f32[4] parameter(1)\n"
    "  c = (f32[4], f32[]) custom-call(x, y), custom_call_target=\"axpy\", backend_config=\"2.5\"\n"
    "  r = f32[4] get-tuple-element(c), index=0\n"
    "  s = f32[] get-tuple-element(c), index=1\n"
    "  ROOT out = (f32[4], f32[]) tuple(r, s)\n"
    "}\n";

typedef struct {
  int calls;
  int released;
} axpy_state;

static hloc_error* axpy(void* user_data, const hloc_custom_call_frame* frame) {
  axpy_state* state = (axpy_state*)user_data;
  ++state->calls;
  if (frame->num_operands != 2 || frame->num_results != 2 ||
      frame->operands[0].type != HLOC_F32 || frame->operands[0].rank != 1 ||
      frame->operands[0].dims[0] != 4 || frame->results[1].rank != 0 ||
      strcmp(frame->target, "axpy") != 0 || strcmp(frame->instruction, "c") != 0) {
    return hloc_error_create(HLOC_ERROR_INVALID_ARGUMENT, "unexpected frame");
  }
  const float a = strtof(frame->backend_config, NULL);
  const float* x = (const float*)frame->operands[0].data;
  const float* y = (const float*)frame->operands[1].data;
  float* r = (float*)frame->results[0].data;
  float* s = (float*)frame->results[1].data;
  *s = 0;
  for (int i = 0; i < 4; ++i) {
    r[i] = a * x[i] + y[i];
    *s += x[i];
  }
  return NULL;
}

static void release_axpy(void* user_data) { ((axpy_state*)user_data)->released++; }

static hloc_error* fails(void* user_data, const hloc_custom_call_frame* frame) {
  (void)user_data;
  (void)frame;
  return hloc_error_create(HLOC_ERROR_RESOURCE_EXHAUSTED, "no more widgets");
}

/* Runs a kAxpy executable on x = 1..4, y = 10..40 and checks (2.5 x + y, sum x). */
static void run_axpy(const hloc_executable* exe, const char* what) {
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
  const int64_t dims[1] = {4};
  hloc_buffer* args[2] = {NULL, NULL};
  hloc_buffer* results[2] = {NULL, NULL};
  expect_ok(hloc_buffer_wrap_host(HLOC_F32, dims, 1, x, NULL, NULL, &args[0]), "wrap x");
  expect_ok(hloc_buffer_wrap_host(HLOC_F32, dims, 1, y, NULL, NULL, &args[1]), "wrap y");
  expect_ok(hloc_execute(exe, args, 2, NULL, results, 2), what);
  if (results[0] != NULL && results[1] != NULL) {
    const float* r = (const float*)hloc_buffer_data(results[0]);
    const float s = *(const float*)hloc_buffer_data(results[1]);
    CHECK(r[0] == 12.5f && r[3] == 50.0f && s == 10.0f, "%s: axpy %g %g %g", what, r[0], r[3], s);
  }
  for (int i = 0; i < 2; ++i) {
    hloc_buffer_destroy(results[i]);
    hloc_buffer_destroy(args[i]);
  }
}

static void test_custom_calls(void) {
  hloc_client* client = NULL;
  /* No compile cache: then only live executables keep a function. */
  hloc_client_options client_options;
  memset(&client_options, 0, sizeof(client_options));
  client_options.struct_size = sizeof(client_options);
  client_options.compile_cache_capacity = -1;
  expect_ok(hloc_client_create(&client_options, &client), "custom-call client");
  if (client == NULL) return;
  hloc_compile_options options;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.backend = HLOC_BACKEND_HOST;
  options.allow_interpreter_ops = 1;
  hloc_executable* exe = NULL;
  /* Not registered yet (a function under another name does not cover it):
   * a compile error naming the target. */
  expect_ok(hloc_client_register_custom_call(client, "axpy_typo", fails, NULL, NULL),
            "register another name");
  expect_error(hloc_compile(client, kAxpy, sizeof(kAxpy) - 1, &options, &exe), HLOC_ERROR_COMPILE,
               "\"axpy\"", "unregistered target");
  CHECK(exe == NULL, "executable set on error");

  static axpy_state state = {0, 0};
  expect_error(hloc_client_register_custom_call(client, NULL, axpy, &state, release_axpy),
               HLOC_ERROR_INVALID_ARGUMENT, "target", "null target");
  CHECK(state.released == 1, "user data of a refused registration released %d", state.released);
  expect_error(hloc_client_register_custom_call(client, "TopK", axpy, &state, release_axpy),
               HLOC_ERROR_INVALID_ARGUMENT, "TopK", "built-in target");
  CHECK(state.released == 2, "released %d", state.released);
  state.released = 0;
  expect_ok(hloc_client_register_custom_call(client, "axpy", axpy, &state, release_axpy),
            "register axpy");

  const hloc_backend backends[] = {HLOC_BACKEND_HOST, HLOC_BACKEND_INTERPRETER};
  hloc_executable* kept = NULL; /* compiled with axpy, run after axpy is replaced */
  for (size_t b = 0; b < 3; ++b) {
    if (b < 2) {
      options.backend = backends[b];
      exe = NULL;
      expect_ok(hloc_compile(client, kAxpy, sizeof(kAxpy) - 1, &options, &exe), "compile axpy");
      if (exe == NULL) continue;
    } else {
      /* Replacing axpy leaves executables compiled with it alone. */
      expect_ok(hloc_client_register_custom_call(client, "axpy", fails, NULL, NULL),
                "replace axpy");
      CHECK(state.released == 0, "axpy released while an executable holds it: %d",
            state.released);
      exe = kept;
      if (exe == NULL) continue;
    }
    const int before = state.calls;
    run_axpy(exe, "run axpy");
    CHECK(state.calls == before + 1, "axpy called %d times", state.calls - before);
    if (b == 0) {
      kept = exe;
    } else {
      hloc_executable_destroy(exe);
    }
  }
  /* Replaced, and no executable holds it: its user data is released. */
  CHECK(state.released == 1, "axpy released %d times", state.released);

  /* The function's error fails the run with its code, naming the call. */
  options.backend = HLOC_BACKEND_HOST;
  exe = NULL;
  expect_ok(hloc_compile(client, kAxpy, sizeof(kAxpy) - 1, &options, &exe), "compile failing");
  if (exe != NULL) {
    float x[4] = {0};
    const int64_t dims[1] = {4};
    hloc_buffer* arg = NULL;
    hloc_buffer* results[2] = {NULL, NULL};
    expect_ok(hloc_buffer_copy_from_host(HLOC_F32, dims, 1, x, &arg), "copy x");
    hloc_buffer* args[2] = {arg, arg};
    expect_error(hloc_execute(exe, args, 2, NULL, results, 2), HLOC_ERROR_RESOURCE_EXHAUSTED,
                 "custom-call %c (target \"axpy\"): no more widgets", "failing function");
    CHECK(results[0] == NULL && results[1] == NULL, "results set on error");
    hloc_buffer_destroy(arg);
    hloc_executable_destroy(exe);
  }
  /* An executable's own function (C API 0.7) over the client's "axpy"
   * (now "fails"); a second client without any registration uses it too. */
  static axpy_state own = {0, 0};
  hloc_custom_call_binding binding;
  memset(&binding, 0, sizeof(binding));
  binding.struct_size = sizeof(binding);
  binding.target = "axpy";
  binding.function = axpy;
  binding.user_data = &own;
  options.custom_calls = &binding;
  options.num_custom_calls = 1;
  hloc_client* bare = NULL;
  expect_ok(hloc_client_create(NULL, &bare), "bare client");
  hloc_client* clients[2] = {client, bare};
  for (int c = 0; c < 2 && bare != NULL; ++c) {
    exe = NULL;
    expect_ok(hloc_compile(clients[c], kAxpy, sizeof(kAxpy) - 1, &options, &exe),
              "compile with an own function");
    if (exe == NULL) continue;
    run_axpy(exe, "run the own function");
    hloc_executable_destroy(exe);
  }
  CHECK(own.calls == 2, "own axpy called %d times", own.calls);
  /* Bad bindings are refused by index; the options grow by struct_size. */
  binding.function = NULL;
  exe = NULL;
  expect_error(hloc_compile(client, kAxpy, sizeof(kAxpy) - 1, &options, &exe),
               HLOC_ERROR_INVALID_ARGUMENT, "custom_calls[0]", "binding without a function");
  options.custom_calls = NULL;
  expect_error(hloc_compile(client, kAxpy, sizeof(kAxpy) - 1, &options, &exe),
               HLOC_ERROR_INVALID_ARGUMENT, "custom_calls is NULL", "null bindings");
  options.num_custom_calls = 0;
  hloc_client_destroy(bare);
  hloc_client_destroy(client);
  CHECK(state.released == 1, "axpy released %d times", state.released);
}

/* hloc_client_options.collective_timeout_seconds (C API 0.6): a client made
 * with it set does not read $HLOC_NCCL_TIMEOUT (a bad value there fails
 * only the clients that would read it); NaN is refused; a caller built
 * before the field (a smaller struct_size) gets the default. */
static void test_collective_timeout(void) {
  hloc_client* client = NULL;
  hloc_client_options options;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  setenv("HLOC_NCCL_TIMEOUT", "soon", 1);
  expect_error(hloc_client_create(&options, &client), HLOC_ERROR_INVALID_ARGUMENT,
               "HLOC_NCCL_TIMEOUT=soon", "default timeout reads the environment");
  CHECK(client == NULL, "client set on error");
  /* An old caller's struct ends before the field: the default, from the
   * environment. */
  options.struct_size = sizeof(options) - sizeof(double);
  options.collective_timeout_seconds = 5; /* Beyond struct_size: ignored. */
  expect_error(hloc_client_create(&options, &client), HLOC_ERROR_INVALID_ARGUMENT,
               "HLOC_NCCL_TIMEOUT=soon", "old struct_size");
  options.struct_size = sizeof(options);
  expect_ok(hloc_client_create(&options, &client), "collective_timeout_seconds = 5");
  CHECK(client != NULL, "no client");
  hloc_client_destroy(client);
  client = NULL;
  options.collective_timeout_seconds = -1; /* No watchdog. */
  expect_ok(hloc_client_create(&options, &client), "collective_timeout_seconds = -1");
  hloc_client_destroy(client);
  client = NULL;
  unsetenv("HLOC_NCCL_TIMEOUT");
  options.collective_timeout_seconds = NAN;
  expect_error(hloc_client_create(&options, &client), HLOC_ERROR_INVALID_ARGUMENT,
               "collective_timeout_seconds is NaN", "NaN timeout");
  CHECK(client == NULL, "client set on error");
}

/* A tuple parameter holding a bounded dynamic array: its leaves are the
 * arguments, the array of any size up to its bound; the result comes back
 * at the runtime size; past the bound is an error naming the parameter. */
static const char kDynamicTuple[] =
    "HloModule dyn_tuple\n"
    "ENTRY main {\n"
    "  p = (f32[<=8], s32[]) parameter(0)\n"
    "  x = f32[<=8] get-tuple-element(p), index=0\n"
    "  k = s32[] get-tuple-element(p), index=1\n"
    "  kf = f32[] convert(k)\n"
    "  b = f32[<=8] broadcast(kf), dimensions={}\n"
    "  ROOT y = f32[<=8] add(x, b)\n"
    "}\n";

static void test_dynamic_parameters(hloc_client* client) {
  const hloc_backend backends[] = {HLOC_BACKEND_HOST, HLOC_BACKEND_INTERPRETER};
  for (size_t b = 0; b < 2; ++b) {
    hloc_compile_options options;
    memset(&options, 0, sizeof(options));
    options.struct_size = sizeof(options);
    options.backend = backends[b];
    hloc_executable* exe = NULL;
    expect_ok(hloc_compile(client, kDynamicTuple, sizeof(kDynamicTuple) - 1, &options, &exe),
              "compile dynamic");
    if (exe == NULL) continue;
    CHECK(hloc_executable_num_parameters(exe) == 2, "dynamic tuple: %zu parameters",
          hloc_executable_num_parameters(exe));
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    int32_t k = 3;
    const int64_t no_dims[1] = {0};
    for (int64_t n = 0; n <= 9; n += 3) {
      hloc_buffer* args[2] = {NULL, NULL};
      expect_ok(hloc_buffer_wrap_host(HLOC_F32, &n, 1, x, NULL, NULL, &args[0]), "wrap x");
      expect_ok(hloc_buffer_wrap_host(HLOC_S32, no_dims, 0, &k, NULL, NULL, &args[1]), "wrap k");
      hloc_buffer* y = NULL;
      hloc_error* error = hloc_execute(exe, args, 2, NULL, &y, 1);
      if (n > 8) {
        expect_error(error, HLOC_ERROR_INVALID_ARGUMENT,
                     "argument 0 (parameter %p, tuple element 0) dimension 0 has size 9, above "
                     "its bound 8",
                     "dynamic past the bound");
      } else {
        expect_ok(error, "execute dynamic");
        hloc_array_spec spec;
        spec.struct_size = sizeof(spec);
        if (y != NULL) expect_ok(hloc_buffer_spec(y, &spec), "dynamic result spec");
        CHECK(y != NULL && spec.rank == 1 && spec.dims[0] == n, "dynamic result size (n %d)",
              (int)n);
        const float* v = y != NULL ? (const float*)hloc_buffer_data(y) : NULL;
        CHECK(n == 0 || (v != NULL && v[0] == 4 && v[n - 1] == n + 3), "dynamic values (n %d)",
              (int)n);
      }
      hloc_buffer_destroy(y);
      hloc_buffer_destroy(args[0]);
      hloc_buffer_destroy(args[1]);
    }
    hloc_executable_destroy(exe);
  }
}

int main(void) {
  int major = -1, minor = -1;
  hloc_version(&major, &minor);
  CHECK(major == HLOC_C_API_MAJOR && minor == HLOC_C_API_MINOR, "version %d.%d", major, minor);
  CHECK(strlen(hloc_version_string()) > 0, "empty version string");

  hloc_client* client = NULL;
  hloc_client_options client_options;
  memset(&client_options, 0, sizeof(client_options));
  client_options.struct_size = sizeof(client_options);
  client_options.num_threads = 2;
  client_options.device_memory_cache_bytes = -1; /* no device cache: accepted anywhere */
  expect_ok(hloc_client_create(&client_options, &client), "client");
  CHECK(client != NULL, "no client");
  if (client == NULL) return 1;

  const hloc_backend backends[] = {HLOC_BACKEND_HOST, HLOC_BACKEND_INTERPRETER};
  for (size_t b = 0; b < 2; ++b) {
    hloc_compile_options options;
    memset(&options, 0, sizeof(options));
    options.struct_size = sizeof(options);
    options.backend = backends[b];
    options.allow_interpreter_ops = 1;
    hloc_executable* exe = NULL;
    expect_ok(hloc_compile(client, kAdd, sizeof(kAdd) - 1, &options, &exe), "compile");
    if (exe == NULL) continue;
    CHECK(hloc_executable_num_parameters(exe) == 2, "parameters");
    CHECK(hloc_executable_num_results(exe) == 2, "results");
    hloc_array_spec spec;
    spec.struct_size = sizeof(spec);
    expect_ok(hloc_executable_result(exe, 1, &spec), "result spec");
    CHECK(spec.type == HLOC_S32 && spec.rank == 0, "result 1 spec: type %d rank %zu",
          (int)spec.type, spec.rank);
    expect_ok(hloc_executable_parameter(exe, 0, &spec), "parameter spec");
    CHECK(spec.type == HLOC_F32 && spec.rank == 2 && spec.dims[0] == 2 && spec.dims[1] == 3,
          "parameter 0 spec");
    expect_error(hloc_executable_parameter(exe, 2, &spec), HLOC_ERROR_INVALID_ARGUMENT,
                 "out of range", "parameter index");
    CHECK(strstr(hloc_executable_optimized_hlo(exe), "ENTRY") != NULL, "optimized HLO");
    hloc_stats stats;
    stats.struct_size = sizeof(stats);
    expect_ok(hloc_executable_stats(exe, &stats), "stats");
    CHECK(stats.interpreter_ops == 0, "interpreter ops %lld", (long long)stats.interpreter_ops);

    const int64_t dims[2] = {2, 3};
    float x[6] = {1, 2, 3, 4, 5, 6};
    float y[6] = {10, 20, 30, 40, 50, 60};
    hloc_buffer* args[2] = {NULL, NULL};
    releases = 0;
    expect_ok(hloc_buffer_wrap_host(HLOC_F32, dims, 2, x, count_release, NULL, &args[0]), "wrap");
    expect_ok(hloc_buffer_copy_from_host(HLOC_F32, dims, 2, y, &args[1]), "copy");
    CHECK(hloc_buffer_data(args[0]) == (void*)x, "wrapping copied");
    CHECK(hloc_buffer_byte_size(args[1]) == 24, "byte size");
    hloc_buffer* results[2] = {NULL, NULL};
    expect_ok(hloc_execute(exe, args, 2, NULL, results, 2), "execute");
    if (results[0] != NULL && results[1] != NULL) {
      const float* sum = (const float*)hloc_buffer_data(results[0]);
      CHECK(sum[0] == 11 && sum[5] == 66, "sum %g %g", sum[0], sum[5]);
      CHECK(*(const int32_t*)hloc_buffer_data(results[1]) == 7, "constant result");
      expect_ok(hloc_buffer_spec(results[0], &spec), "buffer spec");
      CHECK(spec.type == HLOC_F32 && spec.rank == 2, "buffer spec");
    }
    hloc_buffer_destroy(results[0]);
    hloc_buffer_destroy(results[1]);

    /* Results into the caller's memory. */
    float sum_out[6] = {0};
    int32_t seven = 0;
    const int64_t no_dims[1] = {0};
    hloc_buffer* into[2] = {NULL, NULL};
    expect_ok(hloc_buffer_wrap_host(HLOC_F32, dims, 2, sum_out, NULL, NULL, &into[0]), "wrap");
    expect_ok(hloc_buffer_wrap_host(HLOC_S32, no_dims, 0, &seven, NULL, NULL, &into[1]), "wrap");
    expect_ok(hloc_execute_into(exe, args, 2, NULL, into, 2), "execute into");
    CHECK(sum_out[0] == 11 && sum_out[5] == 66, "sum into %g %g", sum_out[0], sum_out[5]);
    CHECK(seven == 7, "constant into %d", (int)seven);
    expect_error(hloc_execute_into(exe, args, 2, NULL, into, 1), HLOC_ERROR_INVALID_ARGUMENT,
                 "2 results, got 1", "result count into");
    hloc_buffer* swapped[2] = {into[1], into[0]};
    expect_error(hloc_execute_into(exe, args, 2, NULL, swapped, 2), HLOC_ERROR_INVALID_ARGUMENT,
                 "result buffer 0 is s32[]", "result type into");
    hloc_buffer* onto_x[2] = {args[0], into[1]};
    expect_error(hloc_execute_into(exe, args, 2, NULL, onto_x, 2), HLOC_ERROR_INVALID_ARGUMENT,
                 "shares memory with argument 0", "result over an argument");
    hloc_buffer* null_result[2] = {into[0], NULL};
    expect_error(hloc_execute_into(exe, args, 2, NULL, null_result, 2),
                 HLOC_ERROR_INVALID_ARGUMENT, "result 1 is NULL", "null result");
    hloc_buffer_destroy(into[0]);
    hloc_buffer_destroy(into[1]);

    /* Argument errors. */
    expect_error(hloc_execute(exe, args, 1, NULL, results, 2), HLOC_ERROR_INVALID_ARGUMENT,
                 "takes 2 arguments, got 1", "argument count");
    expect_error(hloc_execute(exe, args, 2, NULL, results, 1), HLOC_ERROR_INVALID_ARGUMENT,
                 "2 results", "result room");
    hloc_buffer* wrong[2] = {args[0], NULL};
    const int64_t other_dims[2] = {3, 2};
    expect_ok(hloc_buffer_copy_from_host(HLOC_F32, other_dims, 2, y, &wrong[1]), "copy");
    expect_error(hloc_execute(exe, wrong, 2, NULL, results, 2), HLOC_ERROR_INVALID_ARGUMENT,
                 "argument 1 has shape f32[3,2]", "argument shape");
    hloc_buffer_destroy(wrong[1]);
    int32_t ints[6] = {0};
    expect_ok(hloc_buffer_wrap_host(HLOC_S32, dims, 2, ints, NULL, NULL, &wrong[1]), "wrap");
    expect_error(hloc_execute(exe, wrong, 2, NULL, results, 2), HLOC_ERROR_INVALID_ARGUMENT,
                 "element type s32", "argument type");
    hloc_buffer_destroy(wrong[1]);
    wrong[1] = NULL;
    expect_error(hloc_execute(exe, wrong, 2, NULL, results, 2), HLOC_ERROR_INVALID_ARGUMENT,
                 "argument 1 is NULL", "null argument");
    size_t donated = 9;
    hloc_execute_options execute_options;
    memset(&execute_options, 0, sizeof(execute_options));
    execute_options.struct_size = sizeof(execute_options);
    execute_options.donated_arguments = &donated;
    execute_options.num_donated_arguments = 1;
    expect_error(hloc_execute(exe, args, 2, &execute_options, results, 2),
                 HLOC_ERROR_INVALID_ARGUMENT, "out of range", "donation index");

    /* Locations: host buffers, results asked for on a device a host
     * executable does not have, device buffers (or, without a GPU, the
     * reason there are none). */
    execute_options.num_donated_arguments = 0;
    execute_options.results = HLOC_RESULTS_DEVICE;
    expect_error(hloc_execute(exe, args, 2, &execute_options, results, 2),
                 HLOC_ERROR_INVALID_ARGUMENT, "runs on the host", "results on device");
    execute_options.results = (hloc_result_location)7;
    expect_error(hloc_execute(exe, args, 2, &execute_options, results, 2),
                 HLOC_ERROR_INVALID_ARGUMENT, "options->results is 7", "results value");
    execute_options.results = HLOC_RESULTS_HOST;
    expect_ok(hloc_execute(exe, args, 2, &execute_options, results, 2), "results on host");
    if (results[0] != NULL) {
      hloc_location where;
      where.struct_size = sizeof(where);
      where.kind = HLOC_LOCATION_CUDA;
      expect_ok(hloc_buffer_location(results[0], &where), "location");
      CHECK(where.kind == HLOC_LOCATION_HOST, "result location %d", (int)where.kind);
      CHECK(hloc_buffer_device_pointer(results[0]) == 0, "host buffer's device pointer");
      float back[6] = {0};
      expect_ok(hloc_buffer_copy_to_host(results[0], back, sizeof(back)), "copy to host");
      CHECK(back[0] == 11 && back[5] == 66, "copied %g %g", back[0], back[5]);
      expect_error(hloc_buffer_copy_to_host(results[0], back, 4), HLOC_ERROR_INVALID_ARGUMENT,
                   "holds 24 bytes", "copy size");
      expect_error(hloc_buffer_copy_to_host(results[0], NULL, sizeof(back)),
                   HLOC_ERROR_INVALID_ARGUMENT, "destination is NULL", "copy destination");
      hloc_buffer* host_copy = NULL;
      expect_ok(hloc_buffer_to_host(results[0], &host_copy), "to host");
      CHECK(host_copy != NULL && hloc_buffer_data(host_copy) != hloc_buffer_data(results[0]),
            "to host shares memory");
      hloc_buffer_destroy(host_copy);
    }
    hloc_buffer_destroy(results[0]);
    hloc_buffer_destroy(results[1]);
    hloc_buffer* on_device = NULL;
    hloc_error* device_error = hloc_buffer_copy_to_device(client, args[1], 0, &on_device);
    if (device_error != NULL) {
      expect_error(device_error, HLOC_ERROR_UNAVAILABLE, "cuda:0", "device without a GPU");
      CHECK(on_device == NULL, "device buffer set on error");
      expect_error(hloc_buffer_allocate_device(client, HLOC_F32, dims, 2, 0, &on_device),
                   HLOC_ERROR_UNAVAILABLE, "cuda:0", "allocate without a GPU");
    } else {
      hloc_location where;
      where.struct_size = sizeof(where);
      expect_ok(hloc_buffer_location(on_device, &where), "device location");
      CHECK(where.kind == HLOC_LOCATION_CUDA && where.device == 0, "device location");
      CHECK(hloc_buffer_data(on_device) == NULL && hloc_buffer_device_pointer(on_device) != 0,
            "device buffer pointers");
      float back[6] = {0};
      expect_ok(hloc_buffer_copy_to_host(on_device, back, sizeof(back)), "device to host");
      CHECK(back[0] == 10 && back[5] == 60, "device copy %g %g", back[0], back[5]);
      hloc_buffer* mixed[2] = {args[0], on_device};
      expect_error(hloc_execute(exe, mixed, 2, NULL, results, 2), HLOC_ERROR_INVALID_ARGUMENT,
                   "argument 1 is on cuda:0", "device buffer to a host executable");
      hloc_buffer_destroy(on_device);
    }
    expect_error(hloc_buffer_allocate_device(NULL, HLOC_F32, dims, 2, 0, &on_device),
                 HLOC_ERROR_INVALID_ARGUMENT, "client is NULL", "allocate without client");
    expect_error(hloc_buffer_allocate_device(client, HLOC_F32, dims, 2, -1, &on_device),
                 HLOC_ERROR_INVALID_ARGUMENT, "no CUDA device -1", "negative device");
    expect_error(hloc_buffer_copy_to_device(client, NULL, 0, &on_device),
                 HLOC_ERROR_INVALID_ARGUMENT, "source is NULL", "copy NULL to device");
    expect_error(hloc_buffer_location(args[0], NULL), HLOC_ERROR_INVALID_ARGUMENT,
                 "location is NULL", "location NULL");

    hloc_buffer_destroy(args[0]);
    hloc_buffer_destroy(args[1]);
    CHECK(releases == 1, "release called %d times", releases);
    hloc_executable_destroy(exe);
  }

  /* Module errors. */
  hloc_executable* exe = NULL;
  static const char kBad[] = "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT y = f32[5] negate(x)\n}\n";
  expect_error(hloc_compile(client, kBad, sizeof(kBad) - 1, NULL, &exe), HLOC_ERROR_COMPILE,
               "module fails verification", "verify");
  CHECK(exe == NULL, "executable set on error");
  static const char kSyntax[] = "HloModule m\nENTRY e {\n  x = f32[4 parameter(0)\n}\n";
  expect_error(hloc_compile(client, kSyntax, sizeof(kSyntax) - 1, NULL, &exe), HLOC_ERROR_COMPILE,
               ":3:", "syntax");
  expect_error(hloc_compile(client, "", 0, NULL, &exe), HLOC_ERROR_COMPILE, "empty", "empty");
  expect_error(hloc_compile_file(client, "/nonexistent.hlo", NULL, &exe), HLOC_ERROR_COMPILE,
               "nonexistent", "missing file");
  expect_error(hloc_compile(NULL, kAdd, sizeof(kAdd) - 1, NULL, &exe),
               HLOC_ERROR_INVALID_ARGUMENT, "client is NULL", "null client");
  expect_error(hloc_compile(client, kAdd, sizeof(kAdd) - 1, NULL, NULL),
               HLOC_ERROR_INVALID_ARGUMENT, "executable is NULL", "null out");
  hloc_compile_options options;
  memset(&options, 0, sizeof(options));
  options.struct_size = sizeof(options);
  options.backend = (hloc_backend)42;
  expect_error(hloc_compile(client, kAdd, sizeof(kAdd) - 1, &options, &exe),
               HLOC_ERROR_INVALID_ARGUMENT, "unknown backend", "backend");
  options.backend = HLOC_BACKEND_HOST;
  options.pipeline = "fastest";
  expect_error(hloc_compile(client, kAdd, sizeof(kAdd) - 1, &options, &exe),
               HLOC_ERROR_INVALID_ARGUMENT, "unknown pipeline", "pipeline");
  /* A caller built against an older, shorter struct: fields past its
   * struct_size are not read (here: the bogus pipeline). */
  options.struct_size = sizeof(size_t) + sizeof(hloc_backend);
  expect_ok(hloc_compile(client, kAdd, sizeof(kAdd) - 1, &options, &exe), "short struct");
  hloc_executable_destroy(exe);

  /* Four host devices: a replica_count=4 all-reduce takes its argument
   * stacked, one row per device, and returns every device's sum stacked. */
  {
    static const char kAllSum[] =
        "HloModule allsum, replica_count=4\n"
        "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(a, b)\n}\n"
        "ENTRY main {\n  x = f32[2] parameter(0)\n"
        "  ROOT s = f32[2] all-reduce(x), replica_groups={}, to_apply=add\n}\n";
    hloc_compile_options devices_options;
    memset(&devices_options, 0, sizeof(devices_options));
    devices_options.struct_size = sizeof(devices_options);
    devices_options.backend = HLOC_BACKEND_HOST;
    devices_options.allow_interpreter_ops = 1;
    devices_options.devices = 2;
    hloc_executable* four = NULL;
    expect_error(hloc_compile(client, kAllSum, sizeof(kAllSum) - 1, &devices_options, &four),
                 HLOC_ERROR_INVALID_ARGUMENT, "devices=2", "device count");
    devices_options.devices = 4;
    expect_ok(hloc_compile(client, kAllSum, sizeof(kAllSum) - 1, &devices_options, &four),
              "compile on 4 devices");
    if (four != NULL) {
      hloc_stats stats;
      stats.struct_size = sizeof(stats);
      expect_ok(hloc_executable_stats(four, &stats), "stats on 4 devices");
      CHECK(stats.devices == 4, "devices %lld", (long long)stats.devices);
      const int64_t dims[2] = {4, 2};
      float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
      hloc_buffer* arg = NULL;
      hloc_buffer* sum = NULL;
      expect_ok(hloc_buffer_wrap_host(HLOC_F32, dims, 2, x, NULL, NULL, &arg), "wrap stacked");
      expect_ok(hloc_execute(four, &arg, 1, NULL, &sum, 1), "run on 4 devices");
      if (sum != NULL) {
        const float* s = (const float*)hloc_buffer_data(sum);
        CHECK(hloc_buffer_byte_size(sum) == 32 && s[0] == 12 && s[1] == 16 && s[6] == 12 &&
                  s[7] == 16,
              "stacked sums %g %g %g %g", s[0], s[1], s[6], s[7]);
      }
      hloc_buffer_destroy(sum);
      hloc_buffer_destroy(arg);
      hloc_executable_destroy(four);
    }
  }

  test_custom_calls();
  test_collective_timeout();
  test_dynamic_parameters(client);

  /* Buffer errors. */
  hloc_buffer* buffer = NULL;
  const int64_t negative[1] = {-4};
  float data[4];
  expect_error(hloc_buffer_wrap_host(HLOC_F32, negative, 1, data, NULL, NULL, &buffer),
               HLOC_ERROR_INVALID_ARGUMENT, "negative", "negative dim");
  const int64_t huge[2] = {INT64_C(1) << 40, INT64_C(1) << 40};
  expect_error(hloc_buffer_copy_from_host(HLOC_F32, huge, 2, data, &buffer),
               HLOC_ERROR_RESOURCE_EXHAUSTED, "limit", "huge");
  const int64_t four[1] = {4};
  expect_error(hloc_buffer_wrap_host(HLOC_F32, four, 1, (char*)data + 1, NULL, NULL, &buffer),
               HLOC_ERROR_INVALID_ARGUMENT, "aligned", "misaligned");
  expect_error(hloc_buffer_wrap_host(HLOC_F32, four, 1, NULL, NULL, NULL, &buffer),
               HLOC_ERROR_INVALID_ARGUMENT, "null data", "null data");
  expect_error(hloc_buffer_wrap_host(HLOC_F32, NULL, 1, data, NULL, NULL, &buffer),
               HLOC_ERROR_INVALID_ARGUMENT, "dims", "null dims");
  expect_error(hloc_buffer_wrap_host((hloc_element_type)13, four, 1, data, NULL, NULL, &buffer),
               HLOC_ERROR_INVALID_ARGUMENT, "no array storage", "tuple type");
  CHECK(buffer == NULL, "buffer set on error");

  /* NULL handles are accepted by destroy functions and getters. */
  hloc_client_destroy(NULL);
  hloc_executable_destroy(NULL);
  hloc_buffer_destroy(NULL);
  hloc_error_destroy(NULL);
  CHECK(hloc_executable_num_results(NULL) == 0, "null executable");
  CHECK(hloc_buffer_data(NULL) == NULL, "null buffer");

  hloc_client_destroy(client);
  printf("c_api_test: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
