// The fusion rules: one object that every fusion pass consults, so the policy
// (what may fuse with what, how big a fused kernel may grow, what the user
// forbids) lives apart from the algorithms that search the graph.
//
// Every instruction gets an op pattern kind. Kinds are ordered: a group's kind
// is the largest kind among its members.
//
//   kElementwise   out[i] = f(a[i], b[i], ...)            add, exp, convert
//   kBroadcast     out[i] = a[drop_dims(i)]                broadcast
//   kInjective     out[i] = a[g(i)], g a cheap index map   reshape, transpose, slice, pad
//   kReduction     out[j] = fold over a[j, k...]           reduce
//   kOutElementwiseFusable  dot, convolution: only an elementwise epilogue fuses
//   kOpaque        never fused: parameters, calls, loops, custom calls, side effects
//
// Along an edge producer -> consumer the edge table says whether the two kinds
// may share a kernel and names the rule that allows it (a reshape or bitcast
// consumer counts as elementwise: it reads its operand once, in order):
//
//              consumer:  E     B     I     R          O            X
//   producer E           loop  loop  loop  prologue   (prologue)    -
//            B           loop  loop  loop  prologue   (prologue)    -
//            I           loop  loop  loop  prologue   (prologue)    -
//            R           epil.  -     -     -          -            -
//            O           epil.  -     -     -          -            -
//            X            -     -     -     -          -            -
//   (prologue into dot/convolution is off by default: see set_fuse_into_dot_prologue)
//
// On top of the table:
//  - budgets: instructions and distinct operands per fused kernel, outputs of
//    a multi-output kernel, copies of a duplicated producer, copies of one
//    instruction's code inside a kernel;
//  - one hero per kernel: at most one reduction and at most one dot/convolution;
//  - reuse: an expensive value (exp, divide, reduce, dot, ...) is never fused
//    into a consumer that reads each of its elements several times
//    (broadcast, gather, reduce-window, the operands of dot/convolution),
//    because the kernel would recompute it for every read;
//  - overrides: opcodes and instruction names that never fuse, and the frontend
//    attribute _hloc_no_fusion="true" that makes one instruction a barrier
//    (nothing fuses into, out of or across it);
//  - extra rules: callbacks that may veto any edge or instruction, so a
//    backend can add constraints without touching the passes.
//
// A decision is a FusionDecision: a verdict plus the rule that produced it and
// a human-readable reason. The passes record decisions in the ledger.
#ifndef HLOC_PASSES_FUSION_FUSION_RULES_H_
#define HLOC_PASSES_FUSION_FUSION_RULES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "hlo/instruction.h"

namespace hloc {

enum class OpPatternKind : uint8_t {
  kElementwise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kReduction = 3,
  kOutElementwiseFusable = 4,
  kOpaque = 5,
};
inline constexpr int kOpPatternKindCount = 6;
absl::string_view OpPatternKindName(OpPatternKind kind);  // "elementwise", ...

// Stable rule identifiers used in decisions and in the ledger.
namespace fusion_rule {
inline constexpr absl::string_view kLoop = "loop";
inline constexpr absl::string_view kReductionPrologue = "reduction-prologue";
inline constexpr absl::string_view kReductionEpilogue = "reduction-epilogue";
inline constexpr absl::string_view kDotPrologue = "dot-prologue";
inline constexpr absl::string_view kDotEpilogue = "dot-epilogue";
inline constexpr absl::string_view kKindTable = "kind-table";
inline constexpr absl::string_view kOpaque = "opaque";
inline constexpr absl::string_view kOverrideOpcode = "override-opcode";
inline constexpr absl::string_view kOverrideName = "override-name";
inline constexpr absl::string_view kOverrideAttribute = "override-attribute";
inline constexpr absl::string_view kSideEffect = "side-effect";
inline constexpr absl::string_view kControlDependency = "control-dependency";
inline constexpr absl::string_view kTupleValue = "tuple-value";
inline constexpr absl::string_view kUnused = "unused";
inline constexpr absl::string_view kMultiOutputProducer = "multi-output-producer";
inline constexpr absl::string_view kCustomFusion = "custom-fusion";
inline constexpr absl::string_view kBudgetInstructions = "budget-instructions";
inline constexpr absl::string_view kBudgetOperands = "budget-operands";
inline constexpr absl::string_view kBudgetOutputs = "budget-outputs";
inline constexpr absl::string_view kBudgetDuplication = "budget-duplication";
inline constexpr absl::string_view kBudgetCodeCopies = "budget-code-copies";
inline constexpr absl::string_view kBudgetSearch = "budget-search";
inline constexpr absl::string_view kOneHero = "one-hero";
inline constexpr absl::string_view kExpensiveIntoReuse = "expensive-into-reuse";
inline constexpr absl::string_view kCycle = "cycle";
inline constexpr absl::string_view kOutsideUse = "outside-use";
inline constexpr absl::string_view kPartialDuplication = "partial-duplication";
inline constexpr absl::string_view kNotDuplicable = "not-duplicable";
inline constexpr absl::string_view kNoPostDominator = "no-post-dominator";
inline constexpr absl::string_view kIterationSpace = "iteration-space";
inline constexpr absl::string_view kNotSmall = "not-small";
inline constexpr absl::string_view kFreeLeaf = "free-leaf";
inline constexpr absl::string_view kSibling = "sibling";
inline constexpr absl::string_view kProducerOutput = "producer-output";
inline constexpr absl::string_view kHorizontal = "horizontal";
inline constexpr absl::string_view kCommitted = "committed";
inline constexpr absl::string_view kExtraRule = "extra-rule";
inline constexpr absl::string_view kInPlaceUpdate = "in-place-update";
}  // namespace fusion_rule

// A fusion verdict with its reason. `rule` is one of fusion_rule::* (or the
// name of an extra rule); `reason` says it in words for the ledger.
class FusionDecision {
 public:
  static FusionDecision Allow(absl::string_view rule, std::string reason = "") {
    return FusionDecision(true, rule, std::move(reason));
  }
  static FusionDecision Refuse(absl::string_view rule, std::string reason) {
    return FusionDecision(false, rule, std::move(reason));
  }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const std::string& rule() const { return rule_; }
  const std::string& reason() const { return reason_; }
  // "fused (loop)" / "refused (budget-operands): 70 operands > 64".
  std::string ToString() const;

 private:
  FusionDecision(bool ok, absl::string_view rule, std::string reason)
      : ok_(ok), rule_(rule.data(), rule.size()), reason_(std::move(reason)) {}
  bool ok_;
  std::string rule_;
  std::string reason_;
};

struct FusionBudgets {
  // Instructions in one fused computation (its parameters, scalar constants
  // and broadcasts of scalars not counted).
  int64_t max_instructions = 256;
  // Distinct values a fused kernel reads (its parameters).
  int64_t max_operands = 64;
  // Values a multi-output or horizontal kernel writes.
  int64_t max_outputs = 16;
  // Kernels a cheap producer with several users may be copied into.
  int64_t max_duplicated_users = 8;
  // Copies of one instruction's code in a fused kernel. The kernel computes
  // each element from its inputs, so a value read at several different
  // indices (a slice and the whole, a dynamic-slice of the array a
  // dynamic-update-slice then writes) is emitted once per index, and a chain
  // of such reads doubles at every step: JAX's MoE dispatch (8 expert
  // outputs accumulated into one buffer, each step reading it back) made a
  // kernel with 2^8 copies of its first step, 0.07 GB/s. Reads at the
  // reader's own index (elementwise) share one copy.
  int64_t max_code_copies = 16;
  // A dynamic-update-slice whose update has at most 1/ratio of its elements
  // is never fused into its consumers (rule in-place-update): alone, a
  // backend writes just the update into the array's bytes; fused, every
  // element of the array is recomputed through it, and a chain of them
  // (JAX's MoE combine adds 8 expert outputs into one buffer) re-reads
  // each step at every element.
  int64_t min_in_place_update_ratio = 4;
  // Constants up to this many elements are copied into every kernel that uses
  // them instead of being passed in (a parameter costs more than a literal).
  int64_t max_duplicated_constant_elements = 1;
  // Horizontal fusion: a kernel with at most this many output elements is
  // small enough to share a launch; at most this many kernels per launch.
  int64_t max_horizontal_elements = int64_t{1} << 16;
  int64_t max_horizontal_members = 32;
  // Bounded graph searches (paths to a post-dominator, reachability for
  // multi-output and horizontal fusion): give up and refuse past this many
  // visited instructions, so no pass is quadratic.
  int64_t max_search_nodes = 512;
};

// What the rules know about one instruction (or one existing fusion, whose
// fused computation is summarised).
struct NodeTraits {
  OpPatternKind kind = OpPatternKind::kOpaque;
  // False when the instruction may not be in any fusion; `why_not` says why.
  bool fusible = false;
  absl::string_view why_not_rule;
  std::string why_not;
  // Computing it is expensive enough that it must not be recomputed.
  bool expensive = false;
  // A constant small enough, or an iota: copying it anywhere is free.
  bool free_leaf = false;
  // Cheap enough to copy into several consumers (XLA's duplication).
  bool duplicable = false;
  // An existing fusion instruction.
  bool is_fusion = false;
  // An existing fusion with a tuple of outputs (read through get-tuple-element).
  bool multi_output = false;
  // A fusion made by horizontal fusion (its outputs do not share an index space).
  bool horizontal = false;
  // Instructions it contributes to a fused computation (scalar constants
  // and broadcasts of scalars count 0: they cost the kernel no code per
  // element).
  int64_t size = 1;
  int64_t reductions = 0;  // heroes it contains
  int64_t dots = 0;
  int64_t expensive_ops = 0;  // expensive instructions it contains
};

// How a consumer uses one of its operands: the kind the producer's value
// meets (for a fusion, the largest kind downstream of that parameter inside
// it), and whether the consumer reads each element of it more than once.
struct OperandUse {
  OpPatternKind kind = OpPatternKind::kOpaque;
  bool reuses = false;
};

// The running description of a candidate group, checked against the budgets.
struct GroupSummary {
  int64_t instructions = 0;
  int64_t operands = 0;
  int64_t outputs = 1;
  int64_t reductions = 0;
  int64_t dots = 0;
  int64_t expensive_ops = 0;
  OpPatternKind kind = OpPatternKind::kElementwise;
  // Several reductions are fine when they iterate over one index space
  // (sibling reductions of multi-output fusion); the planner vouches for it.
  bool reductions_share_space = false;
  void Add(const NodeTraits& traits);
  void Merge(const GroupSummary& other);
};

// Marker that fallback fusion puts in backend_config (see fallback_fusion.h).
inline constexpr absl::string_view kFallbackBackendConfig = "{\"hloc_fallback\":true}";
// Marker of fusions made by horizontal fusion (see horizontal_fusion.h).
inline constexpr absl::string_view kHorizontalBackendConfig = "{\"hloc_horizontal\":true}";
bool IsFallbackFusion(const HloInstruction& instruction);
bool IsHorizontalFusion(const HloInstruction& instruction);
// A kernel a backend can run as an update in place: a dynamic-update-slice,
// or a fusion whose root is a dynamic-update-slice of a parameter read
// nowhere else but in the update's window (hlo/update_window_reads.h). Alone, it writes only the update into its operand's buffer;
// as one output of a multi-output or horizontal fusion it would write the
// whole array (a scan's stacked outputs: the whole array per step), so
// those passes leave it out.
bool UpdatesInPlace(const HloInstruction& kernel);

class FusionRules {
 public:
  using EdgeRule = std::function<FusionDecision(const HloInstruction& producer,
                                                const HloInstruction& consumer)>;
  using InstructionRule = std::function<FusionDecision(const HloInstruction& instruction)>;

  // The default policy described at the top of this file.
  FusionRules();

  // ---- tuning ----
  FusionBudgets& budgets() { return budgets_; }
  const FusionBudgets& budgets() const { return budgets_; }
  // Allows or forbids fusing a `producer` kind into a `consumer` kind; `rule`
  // names the permission in decisions (kept when empty).
  void SetEdge(OpPatternKind producer, OpPatternKind consumer, bool allowed,
               absl::string_view rule = "");
  bool EdgeAllowed(OpPatternKind producer, OpPatternKind consumer) const;
  // Elementwise/broadcast/injective producers into dot and convolution.
  void set_fuse_into_dot_prologue(bool on);
  // Reduction -> elementwise and dot/convolution -> elementwise.
  void set_fuse_reduction_epilogue(bool on);
  void set_fuse_dot_epilogue(bool on);
  // Library calls (outlined composite calls) stay opaque to the fusion
  // passes; with this on, LibraryEpilogueFusion (passes/outlining) first lets
  // a gemm/convolution call absorb the elementwise epilogue its library fuses
  // (alpha scale, bias, batch-norm scale/shift, relu, GELU). On by default:
  // cuBLASLt, cuDNN and oneDNN apply these in the op's own epilogue, which
  // saves a kernel and a round trip of the result through memory, and a
  // backend without the library inlines the call back to the same HLO.
  void set_fuse_library_epilogues(bool on) { fuse_library_epilogues_ = on; }
  bool fuse_library_epilogues() const { return fuse_library_epilogues_; }

  // ---- user overrides ----
  void NeverFuseOpcode(HloOpcode opcode) { never_opcodes_.insert(opcode); }
  void NeverFuseInstruction(std::string name) { never_names_.insert(std::move(name)); }
  // Frontend attribute that marks a barrier (value "true"); "_hloc_no_fusion".
  const std::string& no_fusion_attribute() const { return no_fusion_attribute_; }
  void set_no_fusion_attribute(std::string key) { no_fusion_attribute_ = std::move(key); }

  // ---- extension ----
  // Extra vetoes, consulted after the built-in rules; a refusal wins.
  void AddEdgeRule(std::string name, EdgeRule rule);
  void AddInstructionRule(std::string name, InstructionRule rule);
  // Fallback fusion sets this: its own kCustom fusions then count as ordinary
  // fusions (other kCustom fusions stay opaque).
  void set_fallback_fusions_are_fusible(bool on) { fallback_fusible_ = on; }

  // ---- queries the passes make ----
  NodeTraits Describe(const HloInstruction& instruction) const;
  OpPatternKind KindOf(const HloInstruction& instruction) const;
  bool IsExpensive(const HloInstruction& instruction) const;
  // Whether `consumer` (not a fusion) reads each element of its operand
  // `operand_index` more than once (an expensive producer would be recomputed).
  bool ReusesOperand(const HloInstruction& consumer, int64_t operand_index) const;
  // How `consumer` uses operand `operand_index`. For a fusion this walks the
  // fused computation; OperandUsesOfFusion does all operands in one walk.
  OperandUse UseOf(const HloInstruction& consumer, int64_t operand_index) const;
  std::vector<OperandUse> OperandUsesOfFusion(const HloInstruction& fusion) const;
  // Edge check given both instructions' traits and how the consumer uses the
  // producer (built-in table, tuple and multi-output restrictions, extra rules).
  FusionDecision CheckEdge(const HloInstruction& producer, const NodeTraits& producer_traits,
                           const HloInstruction& consumer, const NodeTraits& consumer_traits,
                           const OperandUse& use) const;
  // Budget and hero checks of a would-be group.
  FusionDecision CheckGroup(const GroupSummary& group) const;
  // The fusion kind of a finished group: kOutput with a dot/convolution,
  // kInput with a reduction or an output that is a real transpose, else kLoop.
  static FusionKind KindForGroup(const GroupSummary& group, bool has_transpose_output);
  // A transpose that moves data (not a relabelling of size-1 dimensions).
  static bool IsRealTranspose(const HloInstruction& instruction);
  // A reshape or bitcast: element i of the result is element i of the
  // operand in row-major order. Its operand edge counts as elementwise, so a
  // reduction or dot epilogue may reshape its result.
  static bool IsOrderPreservingReshape(const HloInstruction& instruction);

 private:
  struct EdgeEntry {
    bool allowed = false;
    std::string rule;
  };
  NodeTraits DescribeFusion(const HloInstruction& fusion) const;
  FusionDecision CheckOverrides(const HloInstruction& instruction) const;

  FusionBudgets budgets_;
  EdgeEntry table_[kOpPatternKindCount][kOpPatternKindCount];
  absl::flat_hash_set<HloOpcode> never_opcodes_;
  absl::flat_hash_set<std::string> never_names_;
  std::string no_fusion_attribute_ = "_hloc_no_fusion";
  std::vector<std::pair<std::string, EdgeRule>> edge_rules_;
  std::vector<std::pair<std::string, InstructionRule>> instruction_rules_;
  bool fallback_fusible_ = false;
  bool fuse_library_epilogues_ = true;
};

}  // namespace hloc

#endif  // HLOC_PASSES_FUSION_FUSION_RULES_H_
