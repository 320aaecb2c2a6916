#!/usr/bin/env bash
# Builds a self-contained `hloc` into DIR: LLVM, Abseil and protobuf linked
# statically, CUDA loaded at run time with dlopen (nothing CUDA is linked).
# The binary then runs on any x86-64 Linux with a glibc and a libstdc++ at
# least as new as this image's (GCC 12), with or without a GPU, and needs
# none of this image's packages.
#
# libstdc++ and libgcc_s stay shared on purpose: cuDNN, cuBLAS and the driver
# load the system's libstdc++, and a second, static copy in the executable
# splits the iostream/locale state between the two (seen on an H100: cuDNN's
# engine finalization crashed in a facet of the wrong type).
#
#   bash tools/build_standalone.sh DIR [--output_base=PATH] [--bundle-shared]
#        [--target=//PKG:NAME] [--keep-symbols]
#
# --target links another cc_binary or cc_test the same way (default
# //tools:hloc), into DIR/NAME: the GPU tests and benchmarks are carried to a
# machine with a GPU like this. Bazel builds it with --dynamic_mode=off, so
# hloc's own libraries are linked in rather than left as shared objects.
#
# Libraries with no static archive on this system (oneDNN: Debian ships only
# libdnnl.so, which the host backend links) make the ldd check fail, naming
# them; --bundle-shared instead copies them and their dependencies into DIR
# (the binary looks in $ORIGIN first), so DIR as a whole is self-contained.
#
# How: Bazel builds //tools:hloc in -c opt as usual (shared system
# libraries); this script then re-runs the final link from Bazel's own link
# parameters, with each system library swapped for its static archive
# (-lfoo -> -l:libfoo.a, -lLLVM-19 -> the component archives llvm-config
# lists), and checks with ldd that only glibc-level libraries remain.
set -euo pipefail

usage() { echo "usage: $0 DIR [--output_base=PATH] [--bundle-shared] [--target=//PKG:NAME] [--keep-symbols]" >&2; exit 2; }
[ $# -ge 1 ] || usage
out_dir=$1; shift
output_base=""
bundle=0
target=//tools:hloc
strip=(-s)
for arg in "$@"; do
  case "$arg" in
    --output_base=*) output_base="--output_base=${arg#--output_base=}" ;;
    --bundle-shared) bundle=1 ;;
    --target=//*:*) target=${arg#--target=} ;;
    --keep-symbols) strip=() ;;
    *) usage ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
llvm_config=${LLVM_CONFIG:-llvm-config-19}
command -v "$llvm_config" >/dev/null || { echo "error: $llvm_config not found" >&2; exit 1; }
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

# shellcheck disable=SC2086
bazel $output_base build -c opt --dynamic_mode=off "$target"
bin=$(bazel $output_base info -c opt --dynamic_mode=off bazel-bin 2>/dev/null)
execroot=$(bazel $output_base info -c opt --dynamic_mode=off execution_root 2>/dev/null)
package=${target#//}; package=${package%%:*}
name=${target##*:}
params="$bin/$package/$name-2.params"
[ -f "$params" ] || { echo "error: Bazel's link parameters $params not found" >&2; exit 1; }

llvm_libdir=$("$llvm_config" --libdir)
# Every component: the linker takes only the objects hloc references.
# (Polly is listed by Debian's "all" without being installed; hloc never uses it.)
llvm_static=$("$llvm_config" --link-static --libs all | tr ' ' '\n' | grep -v '^-lPolly' | tr '\n' ' ')
static_of() {  # -lfoo -> -l:libfoo.a when the archive exists, else unchanged.
  local name=${1#-l}
  for dir in /usr/lib/x86_64-linux-gnu /usr/lib /usr/local/lib; do
    if [ -f "$dir/lib$name.a" ]; then echo "-l:lib$name.a"; return; fi
  done
  echo "$1"
}

# Static archives need their dependencies after them; Abseil's are many and
# Bazel lists only what the shared libraries need directly, so every
# libabsl_*.a goes into one group the linker may rescan.
absl_group=(-Wl,--start-group /usr/lib/x86_64-linux-gnu/libabsl_*.a -Wl,--end-group)
absl_added=0
# A shared object (a Python extension) cannot take Debian's Abseil and
# protobuf archives, which are built without -fPIC: it links their shared
# libraries, which --bundle-shared copies beside it. LLVM's archives are PIC.
shared_object=0
case "$name" in *.so) shared_object=1 ;; esac
link_args=()
while IFS= read -r arg; do
  case "$arg" in
    -o) skip_next=1; continue ;;
    -lLLVM-19|-lLLVM)
      # shellcheck disable=SC2206
      link_args+=("-L$llvm_libdir" $llvm_static)
      continue ;;
    -Wl,-rpath,*|-Wl,-S) continue ;;
    -labsl_*|-lprotobuf)
      if [ "$shared_object" = 1 ]; then
        link_args+=("$arg")  # shared, bundled below
      elif [ "$arg" = -lprotobuf ]; then
        link_args+=("$(static_of "$arg")")
      elif [ "$absl_added" = 0 ]; then
        link_args+=("${absl_group[@]}")
        absl_added=1
      fi
      continue ;;
    -lz|-lzstd|-lxml2|-ltinfo|-lgtest|-lgtest_main|-lgmock|-lgmock_main|-lbenchmark|-lbenchmark_main)
      link_args+=("$(static_of "$arg")"); continue ;;
    -ltcmalloc_minimal)
      # The malloc of hloc's binaries, linked in. Its entry points are
      # exported so that glibc and every library loaded later (CUDA, cuDNN)
      # allocate and free through the same malloc as the executable.
      static=$(static_of "$arg")
      if [ "$static" = "$arg" ]; then
        echo "error: no static libtcmalloc_minimal.a (Debian: apt-get install libgoogle-perftools-dev; tools/setup.sh does)" >&2
        exit 1
      fi
      link_args+=("$static")
      for symbol in malloc free calloc realloc memalign posix_memalign aligned_alloc valloc \
                    pvalloc malloc_usable_size; do
        link_args+=("-Wl,--export-dynamic-symbol=$symbol")
      done
      continue ;;
    -lstdc++) continue ;;
  esac
  if [ "${skip_next:-0}" = 1 ]; then skip_next=0; continue; fi
  link_args+=("$arg")
done <"$params"
# LLVM's own system libraries, static where an archive exists.
for lib in $("$llvm_config" --link-static --system-libs); do
  case "$lib" in
    *libz3.so) ;;  # Only LLVM's Z3 solver uses it; hloc never calls it.
    -lz|-lzstd|-lxml2|-ltinfo)
      static=$(static_of "$lib")
      if [ "$static" = "$lib" ]; then
        echo "error: no static lib${lib#-l}.a (Debian: apt-get install lib${lib#-l}-dev; tools/setup.sh does)" >&2
        exit 1
      fi
      link_args+=("$static") ;;
    *) link_args+=("$lib") ;;  # glibc's (-lm -ldl -lrt) stay shared.
  esac
done
# Abseil archives may be needed by protobuf's or LLVM's objects too.
[ "$shared_object" = 1 ] || link_args+=("${absl_group[@]}")

# A shared object's name may hold a folder (//python:hloc/_hloc.so): it and
# the libraries bundled for it go there, where its $ORIGIN points.
lib_dir=$(dirname "$out_dir/$name")
mkdir -p "$lib_dir"
echo "linking $out_dir/$name (static LLVM, Abseil, protobuf)..."
(cd "$execroot" && g++ -o "$out_dir/$name" "${link_args[@]}" \
    -Wl,--gc-sections "${strip[@]}" -ldl -lpthread -Wl,--disable-new-dtags '-Wl,-rpath,$ORIGIN')

echo "== $out_dir/$name: $(du -h "$out_dir/$name" | cut -f1) ($(stat -c %s "$out_dir/$name") bytes)"
echo "== ldd:"
ldd "$out_dir/$name" | tee "$out_dir/$name.ldd"
# glibc's own libraries, the loader and the GCC runtime only.
allowed='linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so'
if grep -vE "$allowed" "$out_dir/$name.ldd" | grep -q .; then
  if [ "$bundle" = 0 ]; then
    echo "error: libraries beyond glibc remain (no static archive for them here):" >&2
    grep -vE "$allowed" "$out_dir/$name.ldd" >&2
    echo "rerun with --bundle-shared to copy them into $out_dir" >&2
    exit 1
  fi
  # Copy each remaining library (ldd lists transitive ones too) next to hloc.
  grep -vE "$allowed" "$out_dir/$name.ldd" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
    # Already there when an earlier target bundled it into the same folder.
    [ "$(cd "$(dirname "$lib")" && pwd)" = "$lib_dir" ] && continue
    cp -L "$lib" "$lib_dir/"
    echo "bundled $(basename "$lib") ($(du -hL "$lib" | cut -f1))"
  done
  # A bundled library's own dependencies (libmpi's libopen-rte, say) are
  # found through the loader's path, which the check run sets to DIR, as
  # tools/gpu_device_check.sh does where the binaries run.
  LD_LIBRARY_PATH="$lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$out_dir/$name" | tee "$out_dir/$name.ldd"
  if grep -vE "$allowed" "$out_dir/$name.ldd" | grep -v "$out_dir/" | grep -q .; then
    echo "error: libraries outside $out_dir remain" >&2
    exit 1
  fi
fi
# LAPACK is opened with dlopen (hlo/lapack/lapack_library.h), so ldd does not
# list it: bundle it and what it needs, so JAX's lapack_*_ffi calls run where
# the binaries go (the executable's $ORIGIN rpath also serves dlopen).
if [ "$bundle" = 1 ] && [ -e /usr/lib/x86_64-linux-gnu/liblapack.so.3 ]; then
  lapack=$(readlink -f /usr/lib/x86_64-linux-gnu/liblapack.so.3)
  [ -e "$lib_dir/liblapack.so.3" ] || { cp -L "$lapack" "$lib_dir/liblapack.so.3" && echo "bundled liblapack.so.3"; }
  ldd "$lapack" | grep -vE "$allowed" | awk '$3 ~ /^\// {print $1, $3}' | while read -r soname lib; do
    [ -e "$lib_dir/$soname" ] || { cp -L "$lib" "$lib_dir/$soname" && echo "bundled $soname"; }
  done
fi
if [ "$target" = //tools:hloc ]; then
  "$out_dir/$name" --help >/dev/null
  echo "ok: hloc --help runs; beyond glibc it needs only what is in $out_dir"
else
  echo "ok: beyond glibc $name needs only what is in $out_dir"
fi
