// Random valid HLO modules for differential testing (differential_test.cc).
//
// A module is grown one instruction at a time, through the IR (never text),
// from a pool of typed values that starts with a few parameters: each step
// picks an op kind and builds it from values of the pool whose shapes fit,
// adding a parameter when none does. Op kinds: elementwise unary/binary,
// compare, select, convert, broadcast, reshape, transpose, slice,
// concatenate, pad, reverse, iota, constant, dot, reduce, reduce-window,
// dynamic-slice, dynamic-update-slice, sort, clamp, gather and scatter (with
// out-of-range indices), convolution (1-d/2-d, strides, padding, dilations,
// feature groups), select-and-scatter, complex (c64) arithmetic, while (a
// counted loop) and conditional (by a pred or an s32 branch index). Element
// types: f32, f64, f16, bf16, s8, s16, s32, s64, u8, u16, u32, u64, pred, c64,
// and with narrow_types also s4, u4 and the f8/f4 kinds.
//
// Each value records whether it is "exact": computed by ops whose result
// every correct backend must reproduce bit for bit (data movement, min/max,
// negate/abs/floor/ceil, integer arithmetic, converts of exact values).
// Comparisons and float->int converts only read exact values, so a rounding
// difference allowed by the tolerance can never flip a pred and become a
// large mismatch downstream.
//
// f8/f4 values are compared bit for bit (one rounding step of f8e4m3fn is
// 12.5%, past any useful tolerance), so they are built only from exact
// values and only by ops that every correct backend reproduces exactly:
// data movement, compare, clamp, select, max/min reductions and the
// correctly rounded add, subtract, multiply, divide and sqrt (computed in f32
// and rounded once). Sums in an order of the backend's choosing (reduce and
// scatter adds, dot, convolution) are not drawn for them.
//
// The same seed gives the same module on every machine (std::mt19937_64 with
// hand-written draws; no std:: distribution, whose results differ between
// standard libraries).
#ifndef HLOC_TESTS_RANDOM_RANDOM_MODULE_H_
#define HLOC_TESTS_RANDOM_RANDOM_MODULE_H_

#include <cstdint>
#include <memory>

#include "hlo/module.h"

namespace hloc::random_hlo {

struct RandomModuleOptions {
  int max_instructions = 14;  // ops added to the entry (parameters not counted)
  int max_parameters = 5;
  int max_rank = 3;
  int max_dimension = 6;
  bool control_flow = true;  // while and conditional
  // Draw s4, u4 and the f8/f4 kinds as element types too. Off by default so
  // that a seed's module stays what it was for users of the plain types.
  bool narrow_types = false;
  // Also bitcasts that reinterpret memory through non-row-major layouts
  // (transposes in disguise, as in XLA's optimized modules), with copies
  // into and out of random layouts around them. Off by default for the same
  // reason.
  bool layouts = false;
};

std::unique_ptr<HloModule> GenerateRandomModule(uint64_t seed,
                                                const RandomModuleOptions& options = {});

}  // namespace hloc::random_hlo

#endif  // HLOC_TESTS_RANDOM_RANDOM_MODULE_H_
