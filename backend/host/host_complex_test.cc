// c64 and c128 on the host with no interpreter fallback (the elemental
// emitter's complex arithmetic, backend/llvm/elemental_complex_ops.cc),
// against the interpreter within the default tolerances: every elementwise
// op XLA defines on complex numbers, complex/real/imag, converts to complex
// (the verifier refuses complex -> real), compare, select, broadcast of complex constants, a reduction and
// a dot, on random arguments and on special values (zeros, negative reals,
// a zero divisor).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "backend/host/host_test_util.h"
#include "gtest/gtest.h"
#include "hlo/evaluator/random_arguments.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace {

using host_testing::ExpectClose;
using host_testing::ParseLiteralText;

std::vector<Literal> RandomArguments(const std::string& hlo, uint64_t seed) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << hlo;
  if (!module.ok()) return {};
  absl::StatusOr<std::vector<Literal>> args = MakeRandomArguments(**module, seed);
  EXPECT_TRUE(args.ok()) << args.status();
  return args.ok() ? *std::move(args) : std::vector<Literal>{};
}

std::string Unary(const std::string& type, const std::string& out_type, const std::string& op) {
  return absl::StrCat("HloModule m\nENTRY e {\n  p = ", type, "[37] parameter(0)\n  ROOT r = ",
                      out_type, "[37] ", op, "(p)\n}\n");
}

std::string Binary(const std::string& type, const std::string& out_type, const std::string& op,
                   const std::string& attrs = "") {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", type, "[37] parameter(0)\n  b = ", type,
                      "[37] parameter(1)\n  ROOT r = ", out_type, "[37] ", op, "(a, b)", attrs,
                      "\n}\n");
}

const char* kComplexTypes[] = {"c64", "c128"};

std::string Real(const std::string& complex_type) { return complex_type == "c64" ? "f32" : "f64"; }

TEST(HostComplexTest, UnaryOpsMatchTheInterpreter) {
  for (const std::string type : kComplexTypes) {
    for (const char* op : {"negate", "sign", "exponential", "exponential-minus-one", "log",
                           "log-plus-one", "logistic", "sqrt", "rsqrt", "sine", "cosine", "tan",
                           "tanh", "copy"}) {
      const std::string hlo = Unary(type, type, op);
      ExpectClose(hlo, RandomArguments(hlo, 3));
    }
    for (const char* op : {"abs", "real", "imag"}) {
      const std::string hlo = Unary(type, Real(type), op);
      ExpectClose(hlo, RandomArguments(hlo, 4));
    }
  }
}

TEST(HostComplexTest, BinaryOpsMatchTheInterpreter) {
  for (const std::string type : kComplexTypes) {
    for (const char* op : {"add", "subtract", "multiply", "divide", "power", "atan2"}) {
      const std::string hlo = Binary(type, type, op);
      ExpectClose(hlo, RandomArguments(hlo, 6));
    }
    for (const char* direction : {"EQ", "NE"}) {
      const std::string hlo = Binary(type, "pred", "compare", absl::StrCat(", direction=", direction));
      std::vector<Literal> args = RandomArguments(hlo, 7);
      ExpectClose(hlo, args);
      ExpectClose(hlo, std::vector<Literal>{args[0], args[0]});
    }
    const std::string complex = Binary(Real(type), type, "complex");
    ExpectClose(complex, RandomArguments(complex, 8));
  }
}

TEST(HostComplexTest, SpecialValuesMatchTheInterpreter) {
  const std::string values =
      "{(0, 0), (-0, 0), (-4, 0), (-4, -0), (0, 3), (1, 0), (2, -0), (-1, 1e-30), (1e30, 1e30), "
      "(3, 4)}";
  const std::string divisors =
      "{(0, 0), (0, 0), (1, 0), (0, 1), (1e-30, 1e30), (1, 0), (2, 0), (-1, 0), (1e30, -1e30), "
      "(0, -0)}";
  for (const std::string type : kComplexTypes) {
    const std::vector<Literal> args = {ParseLiteralText(absl::StrCat(type, "[10] ", values))};
    for (const char* op : {"sqrt", "sign", "exponential", "log", "negate", "tanh"}) {
      ExpectClose(absl::StrReplaceAll(Unary(type, type, op), {{"[37]", "[10]"}}), args);
    }
    ExpectClose(absl::StrReplaceAll(Unary(type, Real(type), "abs"), {{"[37]", "[10]"}}), args);
    const std::vector<Literal> pair = {ParseLiteralText(absl::StrCat(type, "[10] ", values)),
                                       ParseLiteralText(absl::StrCat(type, "[10] ", divisors))};
    ExpectClose(absl::StrReplaceAll(Binary(type, type, "divide"), {{"[37]", "[10]"}}), pair);
  }
}

TEST(HostComplexTest, ConvertsMatchTheInterpreter) {
  struct Case {
    const char* from;
    const char* to;
  };
  for (const Case& c : {Case{"c64", "c128"}, Case{"c128", "c64"}, Case{"f32", "c64"},
                        Case{"f64", "c64"}, Case{"s32", "c128"}, Case{"bf16", "c64"},
                        Case{"pred", "c64"}, Case{"u8", "c128"}}) {
    const std::string hlo = Unary(c.from, c.to, "convert");
    ExpectClose(hlo, RandomArguments(hlo, 9));
  }
}

TEST(HostComplexTest, DataMovementAndReductionsMatchTheInterpreter) {
  const std::string fused = R"(HloModule m
add {
  x = c64[] parameter(0)
  y = c64[] parameter(1)
  ROOT s = c64[] add(x, y)
}
ENTRY e {
  a = c64[6,40] parameter(0)
  b = c64[40,6] parameter(1)
  p = pred[6,40] parameter(2)
  k = c64[6] constant({(1, 2), (0, -1), (3, 0), (-2, 0.5), (0, 0), (1e-3, 7)})
  kb = c64[6,40] broadcast(k), dimensions={0}
  t = c64[6,40] transpose(b), dimensions={1,0}
  s = c64[6,40] select(p, a, t)
  m = c64[6,40] multiply(s, kb)
  r = c64[40,6] reverse(b), dimensions={0}
  zero = c64[] constant((0, 0))
  sum = c64[6] reduce(m, zero), dimensions={1}, to_apply=add
  d = c64[6,6] dot(a, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (c64[6], c64[6,6], c64[6,40]) tuple(sum, d, m)
}
)";
  ExpectClose(fused, RandomArguments(fused, 10));
  const std::string wide = R"(HloModule m
mul {
  x = c128[] parameter(0)
  y = c128[] parameter(1)
  ROOT s = c128[] multiply(x, y)
}
ENTRY e {
  a = c128[3,5,7] parameter(0)
  one = c128[] constant((1, 0))
  ROOT r = c128[3,7] reduce(a, one), dimensions={1}, to_apply=mul
}
)";
  ExpectClose(wide, RandomArguments(wide, 11));
}

}  // namespace
}  // namespace hloc
