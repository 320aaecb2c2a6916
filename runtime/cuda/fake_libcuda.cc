// A stand-in for libcuda.so.1 with only a few driver entry points, for
// cuda_runtime_test: loading it must name the functions it lacks by the
// versioned symbols cuda.h maps to (cuMemAlloc_v2, ...), and the error
// helpers it does have must be the ones the loader picked up.
#include <cstring>

extern "C" {

int cuInit(unsigned int) { return 0; }
int cuDriverGetVersion(int* version) {
  *version = 12040;
  return 0;
}
int cuGetErrorName(int error, const char** name) {
  *name = error == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_FAKE";
  return 0;
}
int cuGetErrorString(int, const char** text) {
  *text = "from the fake driver";
  return 0;
}

}  // extern "C"
