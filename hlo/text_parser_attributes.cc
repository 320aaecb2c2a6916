// The `name=value` attributes after an instruction's operands: which opcodes
// accept each one, how each value is read into the IR, which ones an opcode
// cannot do without, and where named callees go in called_computations.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "hlo/computation.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser_internal.h"

namespace hloc {
namespace text_internal {
namespace {

struct AttrEntry {
  absl::string_view name;
  Attr attr;
};

constexpr AttrEntry kAttrEntries[] = {
#define HLOC_ATTR_ENTRY(id, text) {text, Attr::id},
    HLOC_TEXT_ATTRIBUTE_LIST(HLOC_ATTR_ENTRY)
#undef HLOC_ATTR_ENTRY
};

// Attribute names sorted once for binary search.
const std::array<AttrEntry, static_cast<size_t>(Attr::kCount)>& SortedAttrEntries() {
  static const auto* sorted = [] {
    auto* table = new std::array<AttrEntry, static_cast<size_t>(Attr::kCount)>();
    std::copy(std::begin(kAttrEntries), std::end(kAttrEntries), table->begin());
    std::sort(table->begin(), table->end(),
              [](const AttrEntry& a, const AttrEntry& b) { return a.name < b.name; });
    return table;
  }();
  return *sorted;
}

using O = HloOpcode;

bool OneOf(HloOpcode op, std::initializer_list<HloOpcode> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// True when `op` accepts attribute `attr`.
bool AttributeApplies(Attr attr, HloOpcode op) {
  switch (attr) {
    case Attr::kSharding:
    case Attr::kFrontendAttributes:
    case Attr::kStatistics:
    case Attr::kParameterReplication:
    case Attr::kControlPredecessors:
    case Attr::kOrigin:
    case Attr::kOriginalValue:
    case Attr::kMetadata:
    case Attr::kBackendConfig:
      return true;
    case Attr::kResultAccuracy:
      return OneOf(op, {O::kExp, O::kExpm1, O::kLog, O::kLog1p, O::kLogistic, O::kSqrt, O::kCbrt,
                        O::kRsqrt, O::kTanh, O::kErf, O::kSin, O::kCos, O::kTan});
    case Attr::kDimensions:
      return OneOf(
          op, {O::kBroadcast, O::kTranspose, O::kReverse, O::kReduce, O::kConcatenate, O::kSort,
               O::kScan, O::kMap, O::kReduceScatter, O::kAllGather, O::kAllGatherStart, O::kAllToAll,
               O::kRaggedAllToAll, O::kGetDimensionSize, O::kSetDimensionSize});
    case Attr::kIndex:
      return op == O::kGetTupleElement;
    case Attr::kIotaDimension:
      return op == O::kIota;
    case Attr::kInferredDimension:
      return op == O::kReshape;
    case Attr::kSlice:
      return op == O::kSlice;
    case Attr::kDynamicSliceSizes:
      return op == O::kDynamicSlice;
    case Attr::kWindow:
      return OneOf(op, {O::kConvolution, O::kReduceWindow, O::kSelectAndScatter, O::kCustomCall});
    case Attr::kDimLabels:
    case Attr::kFeatureGroupCount:
    case Attr::kBatchGroupCount:
      return op == O::kConvolution || op == O::kCustomCall;
    case Attr::kLhsContractingDims:
    case Attr::kRhsContractingDims:
    case Attr::kLhsBatchDims:
    case Attr::kRhsBatchDims:
      return op == O::kDot || op == O::kRaggedDot;
    case Attr::kLhsRaggedDims:
    case Attr::kRhsGroupDims:
      return op == O::kRaggedDot;
    case Attr::kOperandPrecision:
      return OneOf(op, {O::kDot, O::kRaggedDot, O::kConvolution, O::kCustomCall});
    case Attr::kAlgorithm:
      return op == O::kDot || op == O::kRngBitGenerator;
    case Attr::kSparsity:
      return op == O::kDot;
    case Attr::kOffsetDims:
    case Attr::kCollapsedSliceDims:
    case Attr::kStartIndexMap:
    case Attr::kSliceSizes:
    case Attr::kOperandBatchingDims:
    case Attr::kStartIndicesBatchingDims:
      return op == O::kGather;
    case Attr::kIndexVectorDim:
    case Attr::kIndicesAreSorted:
      return op == O::kGather || op == O::kScatter;
    case Attr::kUpdateWindowDims:
    case Attr::kInsertedWindowDims:
    case Attr::kScatterDimsToOperandDims:
    case Attr::kInputBatchingDims:
    case Attr::kScatterIndicesBatchingDims:
    case Attr::kUniqueIndices:
      return op == O::kScatter;
    case Attr::kPadding:
      return op == O::kPad;
    case Attr::kDirection:
    case Attr::kType:
      return op == O::kCompare;
    case Attr::kKind:
      return op == O::kFusion;
    case Attr::kCalls:
      return OneOf(op, {O::kFusion, O::kAsyncStart, O::kAsyncUpdate, O::kAsyncDone});
    case Attr::kAsyncExecutionThread:
      return OneOf(op, {O::kAsyncStart, O::kAsyncUpdate, O::kAsyncDone});
    case Attr::kToApply:
      return OneOf(op, {O::kCall, O::kMap, O::kReduce, O::kReduceWindow, O::kScan, O::kScatter,
                        O::kSort, O::kAllReduce, O::kAllReduceStart, O::kReduceScatter, O::kCustomCall});
    case Attr::kCondition:
    case Attr::kBody:
      return op == O::kWhile;
    case Attr::kTrueComputation:
    case Attr::kFalseComputation:
    case Attr::kBranchComputations:
      return op == O::kConditional;
    case Attr::kSelect:
    case Attr::kScatter:
      return op == O::kSelectAndScatter;
    case Attr::kCalledComputations:
    case Attr::kCustomCallTarget:
    case Attr::kCustomCallHasSideEffect:
    case Attr::kApiVersion:
    case Attr::kSchedule:
    case Attr::kOperandLayoutConstraints:
    case Attr::kPaddingType:
    case Attr::kLiteral:
    case Attr::kOpaque:
      return op == O::kCustomCall;
    case Attr::kOutputToOperandAliasing:
      return op == O::kFusion || op == O::kCustomCall;
    case Attr::kDistribution:
      return op == O::kRng;
    case Attr::kExponentBits:
    case Attr::kMantissaBits:
      return op == O::kReducePrecision;
    case Attr::kFftType:
    case Attr::kFftLength:
      return op == O::kFft;
    case Attr::kLeftSide:
    case Attr::kUnitDiagonal:
    case Attr::kTransposeA:
      return op == O::kTriangularSolve;
    case Attr::kLower:
      return op == O::kTriangularSolve || op == O::kCholesky;
    case Attr::kIsStable:
      return op == O::kSort;
    case Attr::kNumCarries:
    case Attr::kIsReverse:
    case Attr::kIsAssociative:
      return op == O::kScan;
    case Attr::kK:
    case Attr::kLargest:
      return op == O::kTopK;
    case Attr::kEpsilon:
    case Attr::kFeatureIndex:
      return OneOf(op, {O::kBatchNormGrad, O::kBatchNormInference, O::kBatchNormTraining});
    case Attr::kChannelId:
      return OneOf(op, {O::kAllReduce, O::kAllReduceStart, O::kAllGather, O::kAllGatherStart,
                        O::kReduceScatter, O::kAllToAll, O::kRaggedAllToAll, O::kCollectivePermute,
                        O::kCollectivePermuteStart, O::kCollectiveBroadcast, O::kSend, O::kSendDone,
                        O::kRecv, O::kRecvDone});
    case Attr::kReplicaGroups:
      return OneOf(op,
                   {O::kAllReduce, O::kAllReduceStart, O::kAllGather, O::kAllGatherStart,
                    O::kReduceScatter, O::kAllToAll, O::kRaggedAllToAll, O::kCollectiveBroadcast});
    case Attr::kSourceTargetPairs:
      return op == O::kCollectivePermute || op == O::kCollectivePermuteStart;
    case Attr::kConstrainLayout:
      return OneOf(op, {O::kAllReduce, O::kAllReduceStart, O::kAllGather, O::kAllGatherStart,
                        O::kReduceScatter, O::kAllToAll});
    case Attr::kUseGlobalDeviceIds:
      return OneOf(op, {O::kAllReduce, O::kAllReduceStart, O::kAllGather, O::kAllGatherStart,
                        O::kReduceScatter});
    case Attr::kIsHostTransfer:
      return OneOf(op, {O::kSend, O::kSendDone, O::kRecv, O::kRecvDone});
    case Attr::kInfeedConfig:
      return op == O::kInfeed;
    case Attr::kOutfeedConfig:
    case Attr::kOutfeedShape:
      return op == O::kOutfeed;
    case Attr::kDomain:
      return op == O::kDomain;
    case Attr::kIsComposite:
      return op == O::kCall;
    case Attr::kCrossProgramPrefetchIndex:
      return op == O::kCopyStart;
    case Attr::kDelta:
      return op == O::kRngGetAndUpdateState;
    case Attr::kCount:
      return false;
  }
  return false;
}

void Assign(google::protobuf::RepeatedField<int64_t>* field, const std::vector<int64_t>& values) {
  field->Clear();
  field->Add(values.begin(), values.end());
}

}  // namespace

std::optional<Attr> AttrFromName(absl::string_view name) {
  const auto& table = SortedAttrEntries();
  auto it = std::lower_bound(table.begin(), table.end(), name,
                             [](const AttrEntry& e, absl::string_view n) { return e.name < n; });
  if (it == table.end() || it->name != name) return std::nullopt;
  return it->attr;
}

absl::string_view AttrName(Attr attr) {
  for (const AttrEntry& e : kAttrEntries) {
    if (e.attr == attr) return e.name;
  }
  return "?";
}

absl::Status Parser::ParseAttributes(InstructionContext* context) {
  HloInstruction* instruction = context->instruction;
  while (Eat(TokenKind::kComma)) {
    const Token key = tok();
    if (key.kind != TokenKind::kName || key.percent) return Expected("an attribute name");
    std::optional<Attr> attr = AttrFromName(key.text);
    if (!attr) {
      return ErrorAt(key.offset, absl::StrCat("unknown attribute '", key.text,
                                              "' for instruction %", context->name));
    }
    if (!AttributeApplies(*attr, instruction->opcode())) {
      return ErrorAt(
          key.offset,
          absl::StrCat("unexpected attribute '", key.text, "' for ",
                       HloOpcodeName(instruction->opcode()), " instruction %", context->name, " (",
                       HloOpcodeName(instruction->opcode()), " does not take it)"));
    }
    if (context->Seen(*attr)) {
      return ErrorAt(key.offset, absl::StrCat("attribute '", key.text,
                                              "' appears twice on instruction %", context->name));
    }
    context->MarkSeen(*attr);
    lexer_.Next();
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, absl::StrCat("'=' after '", key.text, "'")));
    HLOC_RETURN_IF_ERROR(ParseAttribute(*attr, context));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseAttribute(Attr attr, InstructionContext* context) {
  HloInstruction* instruction = context->instruction;
  const HloOpcode op = instruction->opcode();
  const size_t offset = tok().offset;
  // An enumerator spelled as a bare name; `parse` maps its text to a value.
  auto parse_enum = [&](absl::string_view what, auto parse, auto* out) -> absl::Status {
    if (!At(TokenKind::kName) || tok().percent) return Expected(what);
    if (!parse(tok().text, out)) {
      return ErrorAt(tok().offset, absl::StrCat("expected ", what, ", got '", tok().text, "'"));
    }
    lexer_.Next();
    return absl::OkStatus();
  };
  auto upper = [](absl::string_view s) { return absl::AsciiStrToUpper(s); };
  auto callee = [&](CalleeRef* ref) -> absl::Status {
    if (At(TokenKind::kLbrace)) {
      return ErrorAt(tok().offset, "inline computations are not supported; name a computation");
    }
    if (!At(TokenKind::kName)) return Expected("a computation name");
    *ref = {tok().text, tok().offset};
    lexer_.Next();
    return absl::OkStatus();
  };
  auto callee_list = [&]() -> absl::Status {
    context->callees.has_list = true;
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a list of computations"));
    if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
    do {
      context->callees.list.emplace_back();
      HLOC_RETURN_IF_ERROR(callee(&context->callees.list.back()));
    } while (Eat(TokenKind::kComma));
    return Expect(TokenKind::kRbrace, "',' or '}' in a list of computations");
  };
  xla::DotDimensionNumbers* dot_dnums =
      op == O::kRaggedDot ? instruction->mutable_attrs()
                                ->ragged_dot_dimension_numbers->mutable_dot_dimension_numbers()
                          : nullptr;
  std::vector<int64_t> list;
  auto read_list = [&](google::protobuf::RepeatedField<int64_t>* field) -> absl::Status {
    HLOC_RETURN_IF_ERROR(ParseInt64List(&list));
    Assign(field, list);
    return absl::OkStatus();
  };

  switch (attr) {
    // ---- any instruction
    case Attr::kSharding: {
      xla::OpSharding sharding;
      HLOC_RETURN_IF_ERROR(ParseSharding(&sharding));
      instruction->set_sharding(std::move(sharding));
      return absl::OkStatus();
    }
    case Attr::kFrontendAttributes:
      return ParseFrontendAttributes(instruction->mutable_frontend_attributes());
    case Attr::kStatistics:
      return ParseStatistics(instruction->mutable_carried_proto_fields()->mutable_statistics_viz());
    case Attr::kParameterReplication: {
      std::vector<bool> values;
      HLOC_RETURN_IF_ERROR(ParseBoolList(&values));
      auto* replication =
          instruction->mutable_carried_proto_fields()->mutable_parameter_replication();
      replication->Clear();
      for (bool v : values) replication->add_replicated_at_leaf_buffers(v);
      return absl::OkStatus();
    }
    case Attr::kControlPredecessors: {
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start control-predecessors"));
      if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
      do {
        if (!At(TokenKind::kName)) return Expected("an instruction name");
        HLOC_ASSIGN_OR_RETURN(HloInstruction * predecessor, LookupInstruction(tok()));
        lexer_.Next();
        predecessor->AddControlDependencyTo(instruction);
      } while (Eat(TokenKind::kComma));
      return Expect(TokenKind::kRbrace, "',' or '}' in control-predecessors");
    }
    case Attr::kOrigin:
    case Attr::kOriginalValue:
      if (context->Seen(attr == Attr::kOrigin ? Attr::kOriginalValue : Attr::kOrigin)) {
        return ErrorAt(offset, "origin given twice");
      }
      return ParseOriginalValue(
          instruction->mutable_carried_proto_fields()->mutable_original_value());
    case Attr::kMetadata:
      return ParseMetadata(instruction->mutable_metadata());
    case Attr::kBackendConfig: {
      std::string config;
      HLOC_RETURN_IF_ERROR(ParseStringOrBraced(&config));
      instruction->set_backend_config(std::move(config));
      return absl::OkStatus();
    }
    case Attr::kResultAccuracy: {
      HloAttributes* attrs = instruction->mutable_attrs();
      attrs->has_result_accuracy = true;
      return ParseResultAccuracy(attrs->result_accuracy.mutable_value());
    }
    default:
      break;
  }

  HloAttributes* attrs = instruction->mutable_attrs();
  switch (attr) {
    case Attr::kDimensions:
      return ParseInt64List(&attrs->dimensions);
    case Attr::kIndex:
      return ParseInt64(&attrs->tuple_index);
    case Attr::kIotaDimension:
      return ParseInt64(&attrs->iota_dimension);
    case Attr::kInferredDimension: {
      int64_t d;
      HLOC_RETURN_IF_ERROR(ParseInt64(&d));
      attrs->dimensions = {d};
      return absl::OkStatus();
    }
    case Attr::kSlice:
      return ParseSliceRanges(attrs);
    case Attr::kDynamicSliceSizes:
      return ParseInt64List(&attrs->dynamic_slice_sizes);
    case Attr::kWindow:
      attrs->has_window = true;
      return ParseWindow(attrs->window.mutable_value());
    case Attr::kDimLabels:
      return ParseConvolutionDimensionNumbers(attrs->convolution_dimension_numbers.mutable_value());
    case Attr::kFeatureGroupCount:
      return ParseInt64(&attrs->feature_group_count);
    case Attr::kBatchGroupCount:
      return ParseInt64(&attrs->batch_group_count);
    case Attr::kLhsContractingDims:
    case Attr::kRhsContractingDims:
    case Attr::kLhsBatchDims:
    case Attr::kRhsBatchDims: {
      xla::DotDimensionNumbers* d =
          dot_dnums ? dot_dnums : attrs->dot_dimension_numbers.mutable_value();
      if (attr == Attr::kLhsContractingDims)
        return read_list(d->mutable_lhs_contracting_dimensions());
      if (attr == Attr::kRhsContractingDims)
        return read_list(d->mutable_rhs_contracting_dimensions());
      if (attr == Attr::kLhsBatchDims) return read_list(d->mutable_lhs_batch_dimensions());
      return read_list(d->mutable_rhs_batch_dimensions());
    }
    case Attr::kLhsRaggedDims:
      return read_list(attrs->ragged_dot_dimension_numbers->mutable_lhs_ragged_dimensions());
    case Attr::kRhsGroupDims:
      return read_list(attrs->ragged_dot_dimension_numbers->mutable_rhs_group_dimensions());
    case Attr::kOperandPrecision: {
      auto* precisions = attrs->precision_config->mutable_operand_precision();
      precisions->Clear();
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start operand_precision"));
      if (Eat(TokenKind::kRbrace)) return absl::OkStatus();
      do {
        xla::PrecisionConfig::Precision p;
        HLOC_RETURN_IF_ERROR(parse_enum(
            "a precision (default, high, highest)",
            [&](absl::string_view s, xla::PrecisionConfig::Precision* out) {
              return xla::PrecisionConfig::Precision_Parse(upper(s), out);
            },
            &p));
        precisions->Add(p);
      } while (Eat(TokenKind::kComma));
      return Expect(TokenKind::kRbrace, "',' or '}' in operand_precision");
    }
    case Attr::kAlgorithm:
      if (op == O::kRngBitGenerator) {
        return parse_enum(
            "an RNG algorithm (rng_default, rng_three_fry, rng_philox)",
            [&](absl::string_view s, xla::RandomAlgorithm* out) {
              return xla::RandomAlgorithm_Parse(upper(s), out);
            },
            &attrs->rng_algorithm);
      } else {
        xla::PrecisionConfig::Algorithm algorithm;
        HLOC_RETURN_IF_ERROR(parse_enum(
            "a dot algorithm such as dot_bf16_bf16_f32",
            [&](absl::string_view s, xla::PrecisionConfig::Algorithm* out) {
              std::string name = upper(s);
              if (name.rfind("ALG_", 0) != 0) name = "ALG_" + name;
              return xla::PrecisionConfig::Algorithm_Parse(name, out);
            },
            &algorithm));
        attrs->precision_config->set_algorithm(algorithm);
        return absl::OkStatus();
      }
    case Attr::kSparsity:
      return ParseSparsity(instruction->mutable_carried_proto_fields()->mutable_sparsity_config());
    case Attr::kOffsetDims:
      return read_list(attrs->gather_dimension_numbers->mutable_offset_dims());
    case Attr::kCollapsedSliceDims:
      return read_list(attrs->gather_dimension_numbers->mutable_collapsed_slice_dims());
    case Attr::kStartIndexMap:
      return read_list(attrs->gather_dimension_numbers->mutable_start_index_map());
    case Attr::kOperandBatchingDims:
      return read_list(attrs->gather_dimension_numbers->mutable_operand_batching_dims());
    case Attr::kStartIndicesBatchingDims:
      return read_list(attrs->gather_dimension_numbers->mutable_start_indices_batching_dims());
    case Attr::kSliceSizes:
      return ParseInt64List(&attrs->gather_slice_sizes);
    case Attr::kIndexVectorDim: {
      int64_t d;
      HLOC_RETURN_IF_ERROR(ParseInt64(&d));
      if (op == O::kGather) {
        attrs->gather_dimension_numbers->set_index_vector_dim(d);
      } else {
        attrs->scatter_dimension_numbers->set_index_vector_dim(d);
      }
      return absl::OkStatus();
    }
    case Attr::kIndicesAreSorted:
      return ParseBool(&attrs->indices_are_sorted);
    case Attr::kUpdateWindowDims:
      return read_list(attrs->scatter_dimension_numbers->mutable_update_window_dims());
    case Attr::kInsertedWindowDims:
      return read_list(attrs->scatter_dimension_numbers->mutable_inserted_window_dims());
    case Attr::kScatterDimsToOperandDims:
      return read_list(attrs->scatter_dimension_numbers->mutable_scatter_dims_to_operand_dims());
    case Attr::kInputBatchingDims:
      return read_list(attrs->scatter_dimension_numbers->mutable_input_batching_dims());
    case Attr::kScatterIndicesBatchingDims:
      return read_list(attrs->scatter_dimension_numbers->mutable_scatter_indices_batching_dims());
    case Attr::kUniqueIndices:
      return ParseBool(&attrs->unique_indices);
    case Attr::kPadding:
      return ParsePaddingConfig(attrs->padding_config.mutable_value());
    case Attr::kDirection:
      return parse_enum(
          "a comparison direction (EQ, NE, GE, GT, LE, LT)",
          [](absl::string_view s, ComparisonDirection* out) {
            auto d = ComparisonDirectionFromName(s);
            if (d) *out = *d;
            return d.has_value();
          },
          &attrs->comparison_direction);
    case Attr::kType:
      return parse_enum(
          "a comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED)",
          [](absl::string_view s, ComparisonType* out) {
            auto t = ComparisonTypeFromName(s);
            if (t) *out = *t;
            return t.has_value();
          },
          &attrs->comparison_type);
    case Attr::kKind:
      return parse_enum(
          "a fusion kind (kLoop, kInput, kOutput, kCustom)",
          [](absl::string_view s, FusionKind* out) {
            auto k = FusionKindFromName(s);
            if (k) *out = *k;
            return k.has_value();
          },
          &attrs->fusion_kind);
    case Attr::kCalls:
      return callee(&context->callees.calls);
    case Attr::kToApply:
      return callee(&context->callees.to_apply);
    case Attr::kCondition:
      return callee(&context->callees.condition);
    case Attr::kBody:
      return callee(&context->callees.body);
    case Attr::kTrueComputation:
      return callee(&context->callees.true_computation);
    case Attr::kFalseComputation:
      return callee(&context->callees.false_computation);
    case Attr::kSelect:
      return callee(&context->callees.select);
    case Attr::kScatter:
      return callee(&context->callees.scatter);
    case Attr::kBranchComputations:
    case Attr::kCalledComputations:
      return callee_list();
    case Attr::kCustomCallTarget:
      return ParseString(&attrs->custom_call_target);
    case Attr::kCustomCallHasSideEffect:
      return ParseBool(&attrs->custom_call_has_side_effect);
    case Attr::kApiVersion:
      return parse_enum(
          "a custom-call API version such as API_VERSION_TYPED_FFI",
          [](absl::string_view s, xla::CustomCallApiVersion* out) {
            return xla::CustomCallApiVersion_Parse(std::string(s), out) &&
                   *out != xla::API_VERSION_UNSPECIFIED;
          },
          &attrs->custom_call_api_version);
    case Attr::kSchedule:
      return parse_enum(
          "a custom-call schedule such as SCHEDULE_LATEST",
          [](absl::string_view s, xla::CustomCallSchedule* out) {
            return xla::CustomCallSchedule_Parse(std::string(s), out);
          },
          &attrs->custom_call_schedule);
    case Attr::kOutputToOperandAliasing:
      return ParseOutputOperandAliasing(&attrs->output_to_operand_aliasing);
    case Attr::kOperandLayoutConstraints: {
      std::vector<Shape> shapes;
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start operand_layout_constraints"));
      if (!Eat(TokenKind::kRbrace)) {
        do {
          shapes.emplace_back();
          HLOC_RETURN_IF_ERROR(ParseValidatedShape(&shapes.back()));
        } while (Eat(TokenKind::kComma));
        HLOC_RETURN_IF_ERROR(
            Expect(TokenKind::kRbrace, "',' or '}' in operand_layout_constraints"));
      }
      attrs->operand_layout_constraints = std::move(shapes);
      return absl::OkStatus();
    }
    case Attr::kPaddingType: {
      xla::PaddingType type;
      HLOC_RETURN_IF_ERROR(parse_enum(
          "a padding type (PADDING_VALID, PADDING_SAME)",
          [](absl::string_view s, xla::PaddingType* out) {
            return xla::PaddingType_Parse(std::string(s), out);
          },
          &type));
      instruction->mutable_carried_proto_fields()->set_padding_type(type);
      return absl::OkStatus();
    }
    case Attr::kLiteral: {
      Shape shape;
      HLOC_RETURN_IF_ERROR(ParseValidatedShape(&shape));
      Literal literal;
      HLOC_RETURN_IF_ERROR(ParseLiteral(shape, &literal));
      attrs->literal = std::move(literal);
      return absl::OkStatus();
    }
    case Attr::kOpaque:
      return ParseString(&attrs->opaque);
    case Attr::kDistribution:
      return parse_enum(
          "a distribution (rng_uniform, rng_normal)",
          [&](absl::string_view s, xla::RandomDistribution* out) {
            return xla::RandomDistribution_Parse(upper(s), out) && *out != xla::RNG_INVALID;
          },
          &attrs->distribution);
    case Attr::kExponentBits:
      return ParseInt32(&attrs->exponent_bits);
    case Attr::kMantissaBits:
      return ParseInt32(&attrs->mantissa_bits);
    case Attr::kFftType:
      return parse_enum(
          "an FFT type (FFT, IFFT, RFFT, IRFFT)",
          [](absl::string_view s, xla::FftType* out) {
            return xla::FftType_Parse(std::string(s), out);
          },
          &attrs->fft_type);
    case Attr::kFftLength:
      return ParseInt64List(&attrs->fft_length);
    case Attr::kLeftSide:
    case Attr::kLower:
    case Attr::kUnitDiagonal: {
      bool v;
      HLOC_RETURN_IF_ERROR(ParseBool(&v));
      if (attr == Attr::kLeftSide) attrs->triangular_solve_options->set_left_side(v);
      if (attr == Attr::kUnitDiagonal) attrs->triangular_solve_options->set_unit_diagonal(v);
      if (attr == Attr::kLower) {
        if (op == O::kCholesky) {
          attrs->cholesky_options->set_lower(v);
        } else {
          attrs->triangular_solve_options->set_lower(v);
        }
      }
      return absl::OkStatus();
    }
    case Attr::kTransposeA: {
      xla::TriangularSolveOptions::Transpose transpose;
      HLOC_RETURN_IF_ERROR(parse_enum(
          "NO_TRANSPOSE, TRANSPOSE or ADJOINT",
          [](absl::string_view s, xla::TriangularSolveOptions::Transpose* out) {
            return xla::TriangularSolveOptions::Transpose_Parse(std::string(s), out);
          },
          &transpose));
      attrs->triangular_solve_options->set_transpose_a(transpose);
      return absl::OkStatus();
    }
    case Attr::kIsStable:
      return ParseBool(&attrs->is_stable);
    case Attr::kNumCarries: {
      const size_t at = tok().offset;
      HLOC_RETURN_IF_ERROR(ParseInt64(&attrs->num_carries));
      if (attrs->num_carries < 0) return ErrorAt(at, "num_carries must not be negative");
      return absl::OkStatus();
    }
    case Attr::kIsReverse:
      return ParseBool(&attrs->is_reverse);
    case Attr::kIsAssociative: {
      bool v;
      HLOC_RETURN_IF_ERROR(ParseBool(&v));
      attrs->is_associative = v ? xla::TRI_STATE_TRUE : xla::TRI_STATE_FALSE;
      return absl::OkStatus();
    }
    case Attr::kK:
      return ParseInt64(&attrs->k);
    case Attr::kLargest:
      return ParseBool(&attrs->largest);
    case Attr::kEpsilon: {
      double v;
      HLOC_RETURN_IF_ERROR(ParseDouble(&v));
      if (std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max()) {
        return ErrorAt(offset, "epsilon is out of range for f32");
      }
      attrs->epsilon = static_cast<float>(v);
      return absl::OkStatus();
    }
    case Attr::kFeatureIndex:
      return ParseInt64(&attrs->feature_index);
    case Attr::kChannelId: {
      const size_t at = tok().offset;
      int64_t id;
      HLOC_RETURN_IF_ERROR(ParseInt64(&id));
      if (id < 0) return ErrorAt(at, "channel_id must not be negative");
      // 0 is XLA's "no channel": an HloInstructionProto cannot tell the two
      // apart, so neither may the module (it decides how devices group).
      if (id > 0) attrs->channel_id = id;
      return absl::OkStatus();
    }
    case Attr::kReplicaGroups:
      return ParseReplicaGroups(attrs);
    case Attr::kSourceTargetPairs: {
      std::vector<std::vector<int64_t>> pairs;
      HLOC_RETURN_IF_ERROR(ParseInt64ListList(&pairs));
      attrs->source_target_pairs.clear();
      for (const auto& pair : pairs) {
        if (pair.size() != 2)
          return ErrorAt(offset, "source_target_pairs must be {source,target} pairs");
        attrs->source_target_pairs.push_back({pair[0], pair[1]});
      }
      return absl::OkStatus();
    }
    case Attr::kConstrainLayout:
      return ParseBool(&attrs->constrain_layout);
    case Attr::kUseGlobalDeviceIds:
      return ParseBool(&attrs->use_global_device_ids);
    case Attr::kIsHostTransfer:
      return ParseBool(&attrs->is_host_transfer);
    case Attr::kInfeedConfig:
      return ParseString(&attrs->infeed_config);
    case Attr::kOutfeedConfig:
      return ParseString(&attrs->outfeed_config);
    case Attr::kOutfeedShape: {
      Shape shape;
      HLOC_RETURN_IF_ERROR(ParseValidatedShape(&shape));
      attrs->outfeed_shape = std::move(shape);
      return absl::OkStatus();
    }
    case Attr::kDomain: {
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start a domain"));
      bool kind = false, entry = false, exit = false;
      while (!At(TokenKind::kRbrace)) {
        Eat(TokenKind::kComma);
        const Token key = tok();
        if (key.kind != TokenKind::kName) return Expected("kind, entry or exit");
        lexer_.Next();
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' in a domain"));
        if (key.text == "kind" && !kind) {
          kind = true;
          HLOC_RETURN_IF_ERROR(ParseString(&attrs->domain_kind));
        } else if (key.text == "entry" && !entry) {
          entry = true;
          HLOC_RETURN_IF_ERROR(ParseSharding(attrs->domain_entry_sharding.mutable_value()));
        } else if (key.text == "exit" && !exit) {
          exit = true;
          HLOC_RETURN_IF_ERROR(ParseSharding(attrs->domain_exit_sharding.mutable_value()));
        } else {
          return ErrorAt(key.offset,
                         absl::StrCat("unexpected or repeated domain field '", key.text, "'"));
        }
      }
      if (!kind || !entry || !exit)
        return ErrorAt(offset, "a domain needs kind=, entry= and exit=");
      lexer_.Next();
      return absl::OkStatus();
    }
    case Attr::kIsComposite: {
      bool v;
      HLOC_RETURN_IF_ERROR(ParseBool(&v));
      instruction->set_is_composite(v);
      return absl::OkStatus();
    }
    case Attr::kAsyncExecutionThread:
      return ParseString(&attrs->async_execution_thread);
    case Attr::kCrossProgramPrefetchIndex: {
      int32_t index;
      HLOC_RETURN_IF_ERROR(ParseInt32(&index));
      instruction->mutable_carried_proto_fields()->set_cross_program_prefetch_index(index);
      return absl::OkStatus();
    }
    case Attr::kDelta: {
      int64_t delta;
      HLOC_RETURN_IF_ERROR(ParseInt64(&delta));
      instruction->mutable_carried_proto_fields()->set_delta(delta);
      return absl::OkStatus();
    }
    default:
      return ErrorAt(offset, "internal error: unhandled attribute");
  }
}

absl::Status Parser::CheckRequiredAttributes(const InstructionContext& context) {
  const HloInstruction* instruction = context.instruction;
  const HloOpcode op = instruction->opcode();
  auto require = [&](std::initializer_list<Attr> attrs) -> absl::Status {
    for (Attr a : attrs) {
      if (!context.Seen(a)) {
        return ErrorAt(context.offset,
                       absl::StrCat("missing attribute '", AttrName(a), "' for ", HloOpcodeName(op),
                                    " instruction %", context.name));
      }
    }
    return absl::OkStatus();
  };
  switch (op) {
    case O::kGetTupleElement:
      return require({Attr::kIndex});
    case O::kIota:
      return require({Attr::kIotaDimension});
    case O::kCompare:
      return require({Attr::kDirection});
    case O::kFusion:
      return require({Attr::kKind, Attr::kCalls});
    case O::kScan:
      if (!context.Seen(Attr::kNumCarries)) {
        scans_without_carry_count_.emplace_back(context.instruction, context.offset);
      }
      return require({Attr::kDimensions, Attr::kToApply});
    case O::kReduce:
    case O::kSort:
      return require({Attr::kDimensions, Attr::kToApply});
    case O::kWhile:
      return require({Attr::kCondition, Attr::kBody});
    case O::kCall:
    case O::kMap:
    case O::kReduceWindow:
    case O::kAllReduce:
    case O::kAllReduceStart:
      return require({Attr::kToApply});
    case O::kReduceScatter:
      return require({Attr::kToApply, Attr::kDimensions});
    case O::kSelectAndScatter:
      return require({Attr::kSelect, Attr::kScatter});
    case O::kAllGather:
    case O::kAllGatherStart:
    case O::kConcatenate:
    case O::kTranspose:
    case O::kReverse:
    case O::kGetDimensionSize:
    case O::kSetDimensionSize:
      return require({Attr::kDimensions});
    case O::kBroadcast:
      if (instruction->operand_count() == 1 && instruction->operand(0)->shape().IsScalar()) {
        return absl::OkStatus();
      }
      return require({Attr::kDimensions});
    case O::kSlice:
      return require({Attr::kSlice});
    case O::kDynamicSlice:
      return require({Attr::kDynamicSliceSizes});
    case O::kGather:
      return require({Attr::kOffsetDims, Attr::kCollapsedSliceDims, Attr::kStartIndexMap,
                      Attr::kIndexVectorDim, Attr::kSliceSizes});
    case O::kScatter:
      return require({Attr::kUpdateWindowDims, Attr::kInsertedWindowDims,
                      Attr::kScatterDimsToOperandDims, Attr::kIndexVectorDim, Attr::kToApply});
    case O::kConvolution:
      return require({Attr::kDimLabels});
    case O::kPad:
      return require({Attr::kPadding});
    case O::kCustomCall:
      return require({Attr::kCustomCallTarget});
    case O::kRng:
      return require({Attr::kDistribution});
    case O::kRngBitGenerator:
      return require({Attr::kAlgorithm});
    case O::kRngGetAndUpdateState:
      return require({Attr::kDelta});
    case O::kReducePrecision:
      return require({Attr::kExponentBits, Attr::kMantissaBits});
    case O::kFft:
      return require({Attr::kFftType, Attr::kFftLength});
    case O::kBatchNormGrad:
    case O::kBatchNormInference:
    case O::kBatchNormTraining:
      return require({Attr::kEpsilon, Attr::kFeatureIndex});
    case O::kAsyncStart:
      return require({Attr::kCalls});
    case O::kTopK:
      return require({Attr::kK});
    case O::kDomain:
      return require({Attr::kDomain});
    case O::kCollectivePermute:
    case O::kCollectivePermuteStart:
      return require({Attr::kSourceTargetPairs});
    case O::kCollectiveBroadcast:
      return require({Attr::kReplicaGroups});
    case O::kConditional:
      if (context.Seen(Attr::kBranchComputations)) {
        if (context.Seen(Attr::kTrueComputation) || context.Seen(Attr::kFalseComputation)) {
          return ErrorAt(context.offset,
                         absl::StrCat("conditional %", context.name,
                                      " has both branch_computations and true/false_computation"));
        }
        return absl::OkStatus();
      }
      return require({Attr::kTrueComputation, Attr::kFalseComputation});
    default:
      return absl::OkStatus();
  }
}

absl::Status Parser::PlaceCallees(InstructionContext* context) {
  HloInstruction* instruction = context->instruction;
  const Callees& c = context->callees;
  auto add = [&](const CalleeRef& ref) {
    if (ref.name.empty()) return;
    pending_callees_.push_back(
        {instruction, static_cast<int64_t>(instruction->called_computations().size()), ref});
    instruction->AppendCalledComputation(nullptr);
  };
  switch (instruction->opcode()) {
    case O::kWhile:
      add(c.condition);
      add(c.body);
      break;
    case O::kConditional:
      add(c.true_computation);
      add(c.false_computation);
      for (const CalleeRef& ref : c.list) add(ref);
      break;
    case O::kSelectAndScatter:
      add(c.select);
      add(c.scatter);
      break;
    case O::kFusion:
    case O::kAsyncStart:
    case O::kAsyncUpdate:
    case O::kAsyncDone:
      add(c.calls);
      break;
    case O::kCustomCall:
      if (!c.to_apply.name.empty() && c.has_list) {
        return ErrorAt(context->offset, absl::StrCat("custom-call %", context->name,
                                                     " has both to_apply and called_computations"));
      }
      add(c.to_apply);
      for (const CalleeRef& ref : c.list) add(ref);
      break;
    default:
      add(c.to_apply);
  }
  return absl::OkStatus();
}

}  // namespace text_internal
}  // namespace hloc
