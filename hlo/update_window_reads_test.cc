#include "hlo/update_window_reads.h"

#include <memory>

#include "gtest/gtest.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

// The entry root of `body` (an ENTRY computation over buf f32[16,4] and
// x f32[3,4] and s s32[]): whether its array may be updated in place.
bool RootReadsOnlyItsWindow(const char* body) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(
      std::string("HloModule m\nENTRY e {\n  buf = f32[16,4] parameter(0)\n"
                  "  x = f32[3,4] parameter(1)\n  s = s32[] parameter(2)\n"
                  "  t = s32[] parameter(3)\n  z = s32[] constant(0)\n") +
      body + "}\n");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return false;
  return ReadsUpdatedArrayOnlyInItsWindow(*(*module)->entry()->root());
}

TEST(UpdateWindowReads, AccumulationIntoTheWindowIsInPlace) {
  EXPECT_TRUE(RootReadsOnlyItsWindow(R"(
  w = f32[3,4] dynamic-slice(buf, s, z), dynamic_slice_sizes={3,4}
  a = f32[3,4] add(w, x)
  n = f32[3,4] negate(a)
  ROOT u = f32[16,4] dynamic-update-slice(buf, n, s, z)
)"));
  // No other read at all.
  EXPECT_TRUE(RootReadsOnlyItsWindow(
      "  ROOT u = f32[16,4] dynamic-update-slice(buf, x, s, z)\n"));
}

TEST(UpdateWindowReads, OtherReadsAreNot) {
  // Another start.
  EXPECT_FALSE(RootReadsOnlyItsWindow(R"(
  w = f32[3,4] dynamic-slice(buf, t, z), dynamic_slice_sizes={3,4}
  a = f32[3,4] add(w, x)
  ROOT u = f32[16,4] dynamic-update-slice(buf, a, s, z)
)"));
  // Another index inside the window.
  EXPECT_FALSE(RootReadsOnlyItsWindow(R"(
  w = f32[3,4] dynamic-slice(buf, s, z), dynamic_slice_sizes={3,4}
  r = f32[3,4] reverse(w), dimensions={0}
  a = f32[3,4] add(r, x)
  ROOT u = f32[16,4] dynamic-update-slice(buf, a, s, z)
)"));
  // A read of the whole array.
  EXPECT_FALSE(RootReadsOnlyItsWindow(R"(
  n = f32[16,4] negate(buf)
  w = f32[3,4] slice(n), slice={[0:3], [0:4]}
  ROOT u = f32[16,4] dynamic-update-slice(buf, w, s, z)
)"));
  // The window read also decides a start index.
  EXPECT_FALSE(RootReadsOnlyItsWindow(R"(
  w = f32[3,4] dynamic-slice(buf, s, z), dynamic_slice_sizes={3,4}
  c = s32[3,4] convert(w)
  e = s32[1,1] slice(c), slice={[0:1], [0:1]}
  i = s32[] reshape(e)
  a = f32[3,4] add(w, x)
  ROOT u = f32[16,4] dynamic-update-slice(buf, a, i, z)
)"));
  // A smaller window.
  EXPECT_FALSE(RootReadsOnlyItsWindow(R"(
  w = f32[2,4] dynamic-slice(buf, s, z), dynamic_slice_sizes={2,4}
  p = f32[3,4] pad(w, f32[] constant(0)), padding=0_1x0_0
  a = f32[3,4] add(p, x)
  ROOT u = f32[16,4] dynamic-update-slice(buf, a, s, z)
)"));
}

}  // namespace
}  // namespace hloc
