// The HLO text parser's shared state, split across three files by concept:
//   text_parser.cc            modules, computations, instructions, operands,
//                             name and callee resolution, entry points
//   text_parser_attributes.cc the per-instruction `name=value` attributes and
//                             which opcodes accept them
//   text_parser_values.cc     numbers, lists, strings, shapes, layouts,
//                             literals
//   text_parser_structured.cc windows, dim labels, shardings, metadata,
//                             frontend attributes and other structured values
// Not part of hloc's API; include text_parser.h instead.
#ifndef HLOC_HLO_TEXT_PARSER_INTERNAL_H_
#define HLOC_HLO_TEXT_PARSER_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "hlo/hlo.pb.h"
#include "hlo/module.h"
#include "hlo/text_lexer.h"
#include "hlo/text_parser.h"

namespace hloc {
namespace text_internal {

// Deepest nesting of tuples, shardings and literals the parser follows before
// reporting an error (keeps hostile input from overflowing the stack).
inline constexpr int kMaxNesting = 64;

// Every instruction attribute the parser knows: enum name and text name.
#define HLOC_TEXT_ATTRIBUTE_LIST(V)                               \
  V(kSharding, "sharding")                                        \
  V(kFrontendAttributes, "frontend_attributes")                   \
  V(kStatistics, "statistics")                                    \
  V(kParameterReplication, "parameter_replication")               \
  V(kControlPredecessors, "control-predecessors")                 \
  V(kOrigin, "origin")                                            \
  V(kOriginalValue, "original_value")                             \
  V(kMetadata, "metadata")                                        \
  V(kBackendConfig, "backend_config")                             \
  V(kResultAccuracy, "result_accuracy")                           \
  V(kDimensions, "dimensions")                                    \
  V(kIndex, "index")                                              \
  V(kIotaDimension, "iota_dimension")                             \
  V(kInferredDimension, "inferred_dimension")                     \
  V(kSlice, "slice")                                              \
  V(kDynamicSliceSizes, "dynamic_slice_sizes")                    \
  V(kWindow, "window")                                            \
  V(kDimLabels, "dim_labels")                                     \
  V(kFeatureGroupCount, "feature_group_count")                    \
  V(kBatchGroupCount, "batch_group_count")                        \
  V(kLhsContractingDims, "lhs_contracting_dims")                  \
  V(kRhsContractingDims, "rhs_contracting_dims")                  \
  V(kLhsBatchDims, "lhs_batch_dims")                              \
  V(kRhsBatchDims, "rhs_batch_dims")                              \
  V(kLhsRaggedDims, "lhs_ragged_dims")                            \
  V(kRhsGroupDims, "rhs_group_dims")                              \
  V(kOperandPrecision, "operand_precision")                       \
  V(kAlgorithm, "algorithm")                                      \
  V(kSparsity, "sparsity")                                        \
  V(kOffsetDims, "offset_dims")                                   \
  V(kCollapsedSliceDims, "collapsed_slice_dims")                  \
  V(kStartIndexMap, "start_index_map")                            \
  V(kIndexVectorDim, "index_vector_dim")                          \
  V(kSliceSizes, "slice_sizes")                                   \
  V(kOperandBatchingDims, "operand_batching_dims")                \
  V(kStartIndicesBatchingDims, "start_indices_batching_dims")     \
  V(kIndicesAreSorted, "indices_are_sorted")                      \
  V(kUpdateWindowDims, "update_window_dims")                      \
  V(kInsertedWindowDims, "inserted_window_dims")                  \
  V(kScatterDimsToOperandDims, "scatter_dims_to_operand_dims")    \
  V(kInputBatchingDims, "input_batching_dims")                    \
  V(kScatterIndicesBatchingDims, "scatter_indices_batching_dims") \
  V(kUniqueIndices, "unique_indices")                             \
  V(kPadding, "padding")                                          \
  V(kDirection, "direction")                                      \
  V(kType, "type")                                                \
  V(kKind, "kind")                                                \
  V(kCalls, "calls")                                              \
  V(kToApply, "to_apply")                                         \
  V(kCondition, "condition")                                      \
  V(kBody, "body")                                                \
  V(kTrueComputation, "true_computation")                         \
  V(kFalseComputation, "false_computation")                       \
  V(kBranchComputations, "branch_computations")                   \
  V(kSelect, "select")                                            \
  V(kScatter, "scatter")                                          \
  V(kCalledComputations, "called_computations")                   \
  V(kCustomCallTarget, "custom_call_target")                      \
  V(kCustomCallHasSideEffect, "custom_call_has_side_effect")      \
  V(kApiVersion, "api_version")                                   \
  V(kSchedule, "schedule")                                        \
  V(kOutputToOperandAliasing, "output_to_operand_aliasing")       \
  V(kOperandLayoutConstraints, "operand_layout_constraints")      \
  V(kPaddingType, "padding_type")                                 \
  V(kLiteral, "literal")                                          \
  V(kOpaque, "opaque")                                            \
  V(kDistribution, "distribution")                                \
  V(kExponentBits, "exponent_bits")                               \
  V(kMantissaBits, "mantissa_bits")                               \
  V(kFftType, "fft_type")                                         \
  V(kFftLength, "fft_length")                                     \
  V(kLeftSide, "left_side")                                       \
  V(kLower, "lower")                                              \
  V(kUnitDiagonal, "unit_diagonal")                               \
  V(kTransposeA, "transpose_a")                                   \
  V(kIsStable, "is_stable")                                       \
  V(kNumCarries, "num_carries")                                   \
  V(kIsReverse, "is_reverse")                                     \
  V(kIsAssociative, "is_associative")                             \
  V(kK, "k")                                                      \
  V(kLargest, "largest")                                          \
  V(kEpsilon, "epsilon")                                          \
  V(kFeatureIndex, "feature_index")                               \
  V(kChannelId, "channel_id")                                     \
  V(kReplicaGroups, "replica_groups")                             \
  V(kSourceTargetPairs, "source_target_pairs")                    \
  V(kConstrainLayout, "constrain_layout")                         \
  V(kUseGlobalDeviceIds, "use_global_device_ids")                 \
  V(kIsHostTransfer, "is_host_transfer")                          \
  V(kInfeedConfig, "infeed_config")                               \
  V(kOutfeedConfig, "outfeed_config")                             \
  V(kOutfeedShape, "outfeed_shape")                               \
  V(kDomain, "domain")                                            \
  V(kIsComposite, "is_composite")                                 \
  V(kAsyncExecutionThread, "async_execution_thread")              \
  V(kCrossProgramPrefetchIndex, "cross_program_prefetch_index")   \
  V(kDelta, "delta")

enum class Attr : uint8_t {
#define HLOC_DECLARE_ATTR(id, text) id,
  HLOC_TEXT_ATTRIBUTE_LIST(HLOC_DECLARE_ATTR)
#undef HLOC_DECLARE_ATTR
      kCount
};
static_assert(static_cast<int>(Attr::kCount) <= 128, "InstructionContext::seen holds 128 bits");
std::optional<Attr> AttrFromName(absl::string_view name);
absl::string_view AttrName(Attr attr);

// A computation named by an attribute, resolved once the whole module is read.
struct CalleeRef {
  absl::string_view name;
  size_t offset = 0;
};

// Computations an instruction names, gathered while its attributes are read
// and then placed in XLA's called_computations order.
struct Callees {
  CalleeRef to_apply, calls, condition, body, true_computation, false_computation, select, scatter;
  std::vector<CalleeRef> list;  // branch_computations or called_computations
  bool has_list = false;
};

// What the attribute parsers know about the instruction being read.
struct InstructionContext {
  HloInstruction* instruction = nullptr;
  absl::string_view name;
  size_t offset = 0;          // Where the instruction's name is.
  bool shape_given = true;    // false when the text omitted the result shape
  uint64_t seen[2] = {0, 0};  // Attributes already read (bit per Attr).
  Callees callees;
  bool Seen(Attr a) const {
    int i = static_cast<int>(a);
    return (seen[i / 64] >> (i % 64)) & 1;
  }
  void MarkSeen(Attr a) {
    int i = static_cast<int>(a);
    seen[i / 64] |= uint64_t{1} << (i % 64);
  }
};

class Parser {
 public:
  Parser(absl::string_view text, size_t begin, size_t end, const ParseOptions& options);

  // ---- text_parser.cc: structure ----
  absl::StatusOr<std::unique_ptr<HloModule>> ParseModule();
  absl::Status ParseModuleHeader(HloModule* module);
  absl::Status ParseStackFrameSections(HloModule* module);
  absl::Status ParseComputation();
  absl::Status ParseInstruction(HloComputation* computation, HloInstruction** root,
                                HloInstruction** last);
  // The part after "name =": [shape] opcode(operands), attributes. `shape` is
  // null when the text gives none; `name` is empty for nested instructions.
  absl::StatusOr<HloInstruction*> ParseInstructionRhs(HloComputation* computation,
                                                      absl::string_view name, size_t name_offset,
                                                      Shape* shape, bool allow_attributes);
  absl::Status ParseOperands(HloComputation* computation, InstructionContext* context,
                             std::vector<HloInstruction*>* operands);
  absl::StatusOr<HloInstruction*> LookupInstruction(const Token& name_token);
  absl::Status InferShape(InstructionContext* context);
  absl::Status ResolveCallees();
  absl::Status InferScanCarryCount(HloInstruction* scan, size_t offset);
  absl::Status ExpectEnd();

  // ---- text_parser_attributes.cc ----
  absl::Status ParseAttributes(InstructionContext* context);
  absl::Status ParseAttribute(Attr attr, InstructionContext* context);
  absl::Status CheckRequiredAttributes(const InstructionContext& context);
  absl::Status PlaceCallees(InstructionContext* context);

  // ---- text_parser_values.cc and text_parser_structured.cc: values ----
  absl::Status ParseInt64(int64_t* value);
  absl::Status ParseInt32(int32_t* value);
  absl::Status ParseDouble(double* value);
  absl::Status ParseBool(bool* value);
  absl::Status ParseString(std::string* value);
  // A quoted string, or a balanced {...} block kept verbatim with its braces.
  absl::Status ParseStringOrBraced(std::string* value);
  absl::Status ParseInt64List(std::vector<int64_t>* values);  // {1,2,3}
  absl::Status ParseInt64ListList(std::vector<std::vector<int64_t>>* values);
  absl::Status ParseBoolList(std::vector<bool>* values);  // {true,false} or true
  absl::Status ParseShapeIndex(ShapeIndex* index);        // {0,1}
  absl::Status ParseWordToken(absl::string_view what, absl::string_view* word);

  bool AtShape() const;
  absl::Status ParseShape(Shape* shape);
  absl::Status ParseValidatedShape(Shape* shape);
  absl::Status ParseLayout(Layout* layout);
  absl::Status ParseLiteral(const Shape& shape, Literal* literal);
  absl::Status ParseArrayLiteral(const Shape& shape, Literal* literal);
  absl::Status ParseLiteralElement(Literal* literal, int64_t index);

  absl::Status ParseWindow(xla::Window* window);
  absl::Status ParseConvolutionDimensionNumbers(xla::ConvolutionDimensionNumbers* dnums);
  absl::Status ParsePaddingConfig(xla::PaddingConfig* padding);
  absl::Status ParseSliceRanges(HloAttributes* attrs);
  absl::Status ParseReplicaGroups(HloAttributes* attrs);
  absl::Status ParseMeshReplicaGroups(xla::MeshAxesReplicaGroupListProto* list);
  absl::Status ParseSharding(xla::OpSharding* sharding);
  absl::Status ParseMetadata(xla::OpMetadata* metadata);
  absl::Status ParseFrontendAttributes(xla::FrontendAttributes* attributes);
  absl::Status ParseOutputOperandAliasing(std::vector<OutputOperandAlias>* aliasing);
  absl::Status ParseResultAccuracy(xla::ResultAccuracy* accuracy);
  absl::Status ParseStatistics(xla::StatisticsViz* statistics);
  absl::Status ParseOriginalValue(xla::OriginalValueProto* value);
  absl::Status ParseSparsity(xla::SparsityConfig* sparsity);
  absl::Status ParseProgramShape(ProgramShape* program_shape);

  // ---- token helpers (text_parser_values.cc) ----
  const Token& tok() const { return lexer_.token(); }
  bool At(TokenKind kind) const { return lexer_.kind() == kind; }
  bool AtName(absl::string_view name) const {
    return lexer_.kind() == TokenKind::kName && !tok().percent && tok().text == name;
  }
  bool Eat(TokenKind kind) {
    if (lexer_.kind() != kind) return false;
    lexer_.Next();
    return true;
  }
  absl::Status Expect(TokenKind kind, absl::string_view what);
  // "FILE:LINE:COL: message".
  absl::Status ErrorAt(size_t offset, absl::string_view message) const;
  // "expected <what>, got <current token>" at the current token.
  absl::Status Expected(absl::string_view what) const;

  // Nesting guard for recursive value parsers.
  struct DepthGuard {
    explicit DepthGuard(Parser* p) : parser(p) { ++parser->depth_; }
    ~DepthGuard() { --parser->depth_; }
    Parser* parser;
  };
  absl::Status CheckDepth() const;

  Lexer lexer_;
  const ParseOptions& options_;
  int depth_ = 0;

  // Module-wide state.
  std::vector<std::unique_ptr<HloComputation>> computations_;
  absl::flat_hash_map<absl::string_view, HloComputation*> computation_by_name_;
  HloComputation* entry_ = nullptr;
  struct PendingCallee {
    HloInstruction* instruction;
    int64_t slot;
    CalleeRef ref;
  };
  std::vector<PendingCallee> pending_callees_;
  // scans written without num_carries= (and where), counted once to_apply
  // is known (ResolveCallees).
  std::vector<std::pair<HloInstruction*, size_t>> scans_without_carry_count_;

  // The computation being read: its instructions by their text names.
  absl::flat_hash_map<absl::string_view, HloInstruction*> names_;
};

}  // namespace text_internal
}  // namespace hloc

#endif  // HLOC_HLO_TEXT_PARSER_INTERNAL_H_
