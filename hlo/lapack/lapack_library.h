// LAPACK and BLAS, opened at run time (dlopen) the first time a module needs
// them, so hloc builds, links and runs without them and a process that never
// meets a `lapack_*_ffi` custom call never loads them.
//
// Which library: $HLOC_LAPACK_LIBRARY when set, else the first of
// liblapack.so.3 (whichever implementation the system's alternatives point
// at: tools/setup.sh installs OpenBLAS, which takes the name over from
// Debian's reference LAPACK and is 3-7x faster on JAX's batched inv and
// cholesky), libopenblas.so.0, liblapack.so. OpenBLAS is set to one
// thread per call (openblas_set_num_threads, where the library has it). Routines
// are looked up by their Fortran names (dgetrf_), BLAS ones (dtrsm_) through
// the LAPACK library's own dependencies. Every LAPACK integer is a 32-bit
// int (the LP64 interface these libraries export); callers check that sizes
// fit. Character arguments are passed with their hidden Fortran lengths.
#ifndef HLOC_HLO_LAPACK_LAPACK_LIBRARY_H_
#define HLOC_HLO_LAPACK_LAPACK_LIBRARY_H_

#include <string>

#include "absl/status/statusor.h"

namespace hloc {
namespace lapack {

class LapackLibrary {
 public:
  // The process's library, opened on first use; NotFound naming every file
  // tried when none opens. Thread-safe.
  static absl::StatusOr<const LapackLibrary*> Get();

  // The address of Fortran routine `name` (without the trailing '_'), e.g.
  // "dgetrf"; NotFound naming the routine and the library when missing.
  absl::StatusOr<void*> Routine(const std::string& name) const;
  const std::string& path() const { return path_; }

 private:
  LapackLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

}  // namespace lapack
}  // namespace hloc

#endif  // HLOC_HLO_LAPACK_LAPACK_LIBRARY_H_
