/* hloc's C API: compile HLO modules and run them, from any language with a C
 * foreign-function interface. libhloc_c.so exports these hloc_ symbols and
 * nothing else.
 *
 * Conventions:
 *  - Handles are opaque and destroyed explicitly (hloc_*_destroy; NULL is
 *    accepted and ignored).
 *  - Every call that can fail returns an hloc_error* (NULL on success), which
 *    the caller reads (hloc_error_code, hloc_error_message) and destroys.
 *  - Option structs start with struct_size, which the caller sets to
 *    sizeof(the struct) as it knows it; fields beyond it take their
 *    defaults, so the structs can grow without breaking compiled callers.
 *    A NULL options pointer means every default.
 *  - Arrays are dense and row-major; arguments and results are the array
 *    leaves of the entry computation's parameters and result (one per
 *    parameter and one per result tuple element for modules as JAX and
 *    torch_xla emit them).
 *  - Element types use XLA's PrimitiveType numbers.
 *  - No call aborts the process on bad input; no C++ exception crosses it.
 */
#ifndef HLOC_API_HLOC_C_H_
#define HLOC_API_HLOC_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HLOC_C_API_MAJOR 0
#define HLOC_C_API_MINOR 7
/* 2: hloc_compile_options.devices, hloc_stats.devices.
 * 3: device buffers (hloc_buffer_allocate_device, ..._copy_to_device,
 *    ..._to_host, ..._copy_to_host, ..._location, ..._device_pointer) and
 *    hloc_execute_options.results.
 * 4: custom-call targets implemented by the caller
 *    (hloc_client_register_custom_call) and hloc_error_create.
 * 5: hloc_client_options.device_memory_cache_bytes.
 * 6: hloc_client_options.collective_timeout_seconds.
 * 7: hloc_compile_options.custom_calls: custom-call functions of one
 *    executable (hloc_custom_call_binding). */

typedef struct hloc_error hloc_error;
typedef struct hloc_client hloc_client;
typedef struct hloc_executable hloc_executable;
typedef struct hloc_buffer hloc_buffer;

typedef enum {
  HLOC_OK = 0,
  HLOC_ERROR_INVALID_ARGUMENT = 1, /* a wrong argument count, type, shape, option */
  HLOC_ERROR_COMPILE = 2,          /* the module does not load, verify or compile */
  HLOC_ERROR_UNAVAILABLE = 3,      /* e.g. the CUDA backend without a GPU */
  HLOC_ERROR_RESOURCE_EXHAUSTED = 4,
  HLOC_ERROR_UNIMPLEMENTED = 5,
  HLOC_ERROR_INTERNAL = 6
} hloc_error_code;

typedef enum {
  HLOC_BACKEND_AUTO = 0, /* cuda when a GPU is usable, else host */
  HLOC_BACKEND_HOST = 1,
  HLOC_BACKEND_CUDA = 2,
  HLOC_BACKEND_INTERPRETER = 3
} hloc_backend;

/* XLA's PrimitiveType numbers. */
typedef enum {
  HLOC_PRED = 1,
  HLOC_S8 = 2,
  HLOC_S16 = 3,
  HLOC_S32 = 4,
  HLOC_S64 = 5,
  HLOC_U8 = 6,
  HLOC_U16 = 7,
  HLOC_U32 = 8,
  HLOC_U64 = 9,
  HLOC_F16 = 10,
  HLOC_F32 = 11,
  HLOC_F64 = 12,
  HLOC_C64 = 15,
  HLOC_BF16 = 16,
  HLOC_C128 = 18
} hloc_element_type;

/* The library's API version; compare major with HLOC_C_API_MAJOR. */
void hloc_version(int* major, int* minor);
/* "major.minor.patch" of the library itself. */
const char* hloc_version_string(void);

hloc_error_code hloc_error_get_code(const hloc_error* error);
/* Valid until the error is destroyed. */
const char* hloc_error_message(const hloc_error* error);
void hloc_error_destroy(hloc_error* error);
/* A new error (for a custom-call function to return); `message` is copied
 * (NULL: empty). NULL only when out of memory. */
hloc_error* hloc_error_create(hloc_error_code code, const char* message);

typedef struct {
  size_t struct_size;
  int num_threads;                /* 0: every core */
  int compile_cache_capacity;     /* executables kept in memory; default 64; <0: none */
  const char* disk_cache_dir;     /* NULL: $HLOC_CACHE_DIR when set */
  /* Device memory of released results kept per device for later results
   * (api/hloc.h, ClientOptions::device_memory_cache_bytes): 0 (default):
   * $HLOC_DEVICE_CACHE_BYTES when set, else 1 GiB; < 0: no cache (every
   * release frees); > 0: at most that many bytes. */
  long long device_memory_cache_bytes;
  /* Seconds an NCCL collective (cuda) may wait for its peers before the run
   * fails and the program's communicators are aborted (api/hloc.h,
   * ClientOptions::collective_timeout_seconds): 0 (default):
   * $HLOC_NCCL_TIMEOUT when set, else 300; > 0: that many; < 0: no
   * watchdog (NCCL may wait forever). NaN is HLOC_ERROR_INVALID_ARGUMENT. */
  double collective_timeout_seconds;
} hloc_client_options;

hloc_error* hloc_client_create(const hloc_client_options* options, hloc_client** client);
/* Executables made by the client stay valid after it is destroyed. */
void hloc_client_destroy(hloc_client* client);

typedef struct {
  size_t struct_size;
  hloc_backend backend;
  const char* pipeline;   /* NULL: "default"; also "no-fusion", "fallback", "none" */
  const char* dump_dir;   /* NULL: no dumps */
  int allow_interpreter_ops; /* default 1; 0: ops with no kernel fail the compile */
  /* 0 (default) or 1: one device; N > 1: N host devices (CompileOptions::devices
   * in api/hloc.h: global arrays in and out); -1: as many as the module names. */
  int devices;
  /* Custom-call functions of this executable only (C API 0.7), over the
   * client's registrations of the same targets; such a compile is never
   * shared through the cache. NULL / 0: none. */
  const struct hloc_custom_call_binding* custom_calls;
  size_t num_custom_calls;
} hloc_compile_options;

/* `module` is a binary HloModuleProto, HloProto or HloSnapshot, or HLO text. */
hloc_error* hloc_compile(hloc_client* client, const void* module, size_t size,
                         const hloc_compile_options* options, hloc_executable** executable);
hloc_error* hloc_compile_file(hloc_client* client, const char* path,
                              const hloc_compile_options* options, hloc_executable** executable);
void hloc_executable_destroy(hloc_executable* executable);

typedef struct {
  size_t struct_size;
  hloc_element_type type;
  size_t rank;
  const int64_t* dims; /* owned by the executable */
} hloc_array_spec;

size_t hloc_executable_num_parameters(const hloc_executable* executable);
size_t hloc_executable_num_results(const hloc_executable* executable);
hloc_error* hloc_executable_parameter(const hloc_executable* executable, size_t index,
                                      hloc_array_spec* spec);
hloc_error* hloc_executable_result(const hloc_executable* executable, size_t index,
                                   hloc_array_spec* spec);
/* Texts valid while the executable lives. */
const char* hloc_executable_optimized_hlo(const hloc_executable* executable);
const char* hloc_executable_ledger(const hloc_executable* executable);
const char* hloc_executable_report(const hloc_executable* executable);

typedef struct {
  size_t struct_size;
  int64_t kernels;
  int64_t fused_kernels;
  int64_t library_calls;
  int64_t interpreter_ops;
  int64_t peak_memory_bytes;
  double compile_seconds;
  int64_t devices; /* devices the executable runs on; the counts above are one device's */
} hloc_stats;
/* Fills the first stats->struct_size bytes. */
hloc_error* hloc_executable_stats(const hloc_executable* executable, hloc_stats* stats);

/* Caller memory, not copied: `data` must stay valid until `release(user)`
 * is called (when hloc no longer uses it; release may be NULL). `data` must
 * be aligned to the element size. */
hloc_error* hloc_buffer_wrap_host(hloc_element_type type, const int64_t* dims, size_t rank,
                                  void* data, void (*release)(void* user), void* user,
                                  hloc_buffer** buffer);
hloc_error* hloc_buffer_copy_from_host(hloc_element_type type, const int64_t* dims, size_t rank,
                                       const void* data, hloc_buffer** buffer);
void hloc_buffer_destroy(hloc_buffer* buffer);
void* hloc_buffer_data(const hloc_buffer* buffer);
size_t hloc_buffer_byte_size(const hloc_buffer* buffer);
hloc_error* hloc_buffer_spec(const hloc_buffer* buffer, hloc_array_spec* spec);

/* Device buffers: memory on a CUDA device (cuMemAlloc in the device's
 * primary context), freed when the last handle sharing it is destroyed.
 * They are read and written through explicit copies, or by running a cuda
 * executable on them (device arguments are read on the device, never
 * through the host). Host and interpreter executables take host buffers
 * only: a device buffer there is HLOC_ERROR_INVALID_ARGUMENT. Without a
 * usable GPU, allocating one is HLOC_ERROR_UNAVAILABLE. */
typedef enum { HLOC_LOCATION_HOST = 0, HLOC_LOCATION_CUDA = 1 } hloc_location_kind;

typedef struct {
  size_t struct_size;
  hloc_location_kind kind;
  int device; /* CUDA ordinal (HLOC_LOCATION_CUDA only) */
} hloc_location;

/* Uninitialized memory on CUDA device `device`. */
hloc_error* hloc_buffer_allocate_device(hloc_client* client, hloc_element_type type,
                                        const int64_t* dims, size_t rank, int device,
                                        hloc_buffer** buffer);
/* A copy of `source` (host or device) on CUDA device `device`. */
hloc_error* hloc_buffer_copy_to_device(hloc_client* client, const hloc_buffer* source,
                                       int device, hloc_buffer** copy);
/* A host copy of `source` (host or device). */
hloc_error* hloc_buffer_to_host(const hloc_buffer* source, hloc_buffer** copy);
/* Copies the contents into `size` bytes at `destination` (exactly the
 * buffer's byte size); returns when the copy is done. */
hloc_error* hloc_buffer_copy_to_host(const hloc_buffer* buffer, void* destination, size_t size);
/* Fills the first location->struct_size bytes. */
hloc_error* hloc_buffer_location(const hloc_buffer* buffer, hloc_location* location);
/* A device buffer's address (a CUdeviceptr, valid while the buffer lives);
 * 0 for host buffers and NULL. hloc_buffer_data is NULL for device buffers. */
uint64_t hloc_buffer_device_pointer(const hloc_buffer* buffer);

typedef enum {
  HLOC_RESULTS_AUTO = 0,  /* on the device when any argument is a device buffer */
  HLOC_RESULTS_HOST = 1,
  HLOC_RESULTS_DEVICE = 2 /* the executable's device (cuda executables only) */
} hloc_result_location;

typedef struct {
  size_t struct_size;
  const size_t* donated_arguments; /* arguments whose memory results may take */
  size_t num_donated_arguments;
  int64_t max_while_iterations;    /* 0: no limit */
  hloc_result_location results;    /* where hloc_execute puts results (minor 3) */
} hloc_execute_options;

/* Custom-call targets the caller implements (minor 4). A module's
 * `custom-call(...)` whose custom_call_target is a registered name calls
 * the function with its operands' and result's array leaves (depth-first,
 * dense, row-major): the function reads the operands and writes every
 * element of every result. The host backend calls it from the compiled
 * program, the interpreter from its evaluation, the cuda backend from a
 * host step between the GPU's (operands copied to host memory, results
 * copied back). It may be called from several threads
 * at once (concurrent hloc_execute calls).
 *
 * It returns NULL on success, or an error (hloc_error_create), which hloc
 * takes over: the run fails with its code and its message prefixed by the
 * instruction and target ("custom-call %c (target \"my_op\"): ...").
 *
 * A custom call whose target is neither registered nor built into hloc
 * ("TopK") fails the compile (HLOC_ERROR_COMPILE) on every backend. */
typedef struct {
  size_t struct_size;
  hloc_element_type type;
  size_t rank;
  const int64_t* dims;
  void* data; /* operands: read only */
} hloc_custom_call_array;

typedef struct {
  size_t struct_size;
  const char* target;      /* custom_call_target */
  const char* instruction; /* the instruction's name, without '%' */
  const char* backend_config; /* the instruction's opaque config, as written ("" if none) */
  size_t backend_config_size;
  const hloc_custom_call_array* operands;
  size_t num_operands;
  const hloc_custom_call_array* results;
  size_t num_results;
} hloc_custom_call_frame;

/* Everything the frame points to is valid during the call only. */
typedef hloc_error* (*hloc_custom_call_function)(void* user_data,
                                                 const hloc_custom_call_frame* frame);

/* One executable's function for `target` (hloc_compile_options.custom_calls).
 * `user_data` must stay valid until every executable compiled with it is
 * destroyed; hloc never frees it. */
typedef struct hloc_custom_call_binding {
  size_t struct_size;
  const char* target;
  hloc_custom_call_function function;
  void* user_data;
} hloc_custom_call_binding;

/* Registers (or replaces) `function` for target `target` on `client`, for
 * its later compiles; executables compiled earlier keep the function they
 * were compiled with. Thread-safe, also while others compile and run.
 * `release(user_data)` (may be NULL) runs once no client or executable can
 * call the function any more. On error `release` has already run. */
hloc_error* hloc_client_register_custom_call(hloc_client* client, const char* target,
                                             hloc_custom_call_function function,
                                             void* user_data, void (*release)(void* user_data));

/* Runs once; thread-safe. `results` has room for num_results handles, each
 * set to a new buffer the caller destroys. */
hloc_error* hloc_execute(const hloc_executable* executable, hloc_buffer* const* arguments,
                         size_t num_arguments, const hloc_execute_options* options,
                         hloc_buffer** results, size_t num_results);

/* Runs once, writing the results into the caller's buffers (one per result,
 * of its type and shape, e.g. wrapped memory a framework allocated). A result
 * may be exactly a donated argument's memory where the module aliases the two;
 * any other overlap is an error. Thread-safe. */
hloc_error* hloc_execute_into(const hloc_executable* executable, hloc_buffer* const* arguments,
                              size_t num_arguments, const hloc_execute_options* options,
                              hloc_buffer* const* results, size_t num_results);

#ifdef __cplusplus
}
#endif

#endif /* HLOC_API_HLOC_C_H_ */
