// HloInstruction: one node of an HLO computation. It holds its opcode, result
// shape, operands, users, control edges, called computations and the per-op
// attributes of HloAttributes. Attributes that XLA defines as proto messages
// (window, dimension numbers, sharding, ...) are stored as those messages, so
// the text and proto forms share one definition of their fields.
#ifndef HLOC_HLO_INSTRUCTION_H_
#define HLOC_HLO_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hlo/boxed.h"
#include "hlo/hlo.pb.h"
#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace hloc {

class HloComputation;
class HloModule;

enum class FusionKind { kLoop, kInput, kOutput, kCustom };
absl::string_view FusionKindName(FusionKind kind);  // "kLoop", ...
std::optional<FusionKind> FusionKindFromName(absl::string_view name);

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
absl::string_view ComparisonDirectionName(ComparisonDirection direction);  // "EQ", ...
std::optional<ComparisonDirection> ComparisonDirectionFromName(absl::string_view name);

// kDefault means "as the operand type implies" (what text without type= says).
enum class ComparisonType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
absl::string_view ComparisonTypeName(ComparisonType type);  // "FLOAT", "TOTALORDER", ...
std::optional<ComparisonType> ComparisonTypeFromName(absl::string_view name);

// A path of tuple indices into a shape ({} is the whole value).
using ShapeIndex = std::vector<int64_t>;

// output_to_operand_aliasing entry: output at `output` may share the buffer of
// operand `operand_number` at `operand_index`.
struct OutputOperandAlias {
  ShapeIndex output;
  int64_t operand_number = 0;
  ShapeIndex operand_index;
  bool operator==(const OutputOperandAlias& o) const {
    return output == o.output && operand_number == o.operand_number &&
           operand_index == o.operand_index;
  }
};

// Per-opcode attributes. An instruction uses the members its opcode defines
// and leaves the rest at their defaults; the printer prints a member only
// where the opcode defines it (see hlo/text_printer.cc). The protobuf-message
// members are Boxed (hlo/boxed.h): allocated only once written, read through
// `->`/`*` (an unwritten one reads as the message's default); rare optional
// members are BoxedOptional. This keeps the struct under 1 KB.
struct HloAttributes {
  // broadcast, transpose, reduce, reverse, concatenate (one entry), sort and
  // scan (one entry), map, reduce-scatter/all-gather/all-to-all (split dimension).
  std::vector<int64_t> dimensions;
  int64_t parameter_number = 0;
  int64_t tuple_index = 0;   // get-tuple-element
  int64_t iota_dimension = 0;
  std::optional<Literal> literal;  // constant
  // slice
  std::vector<int64_t> slice_starts, slice_limits, slice_strides;
  std::vector<int64_t> dynamic_slice_sizes;  // dynamic-slice
  std::vector<int64_t> gather_slice_sizes;   // gather
  Boxed<xla::Window> window;  // convolution, reduce-window, select-and-scatter
  bool has_window = false;
  Boxed<xla::ConvolutionDimensionNumbers> convolution_dimension_numbers;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  Boxed<xla::DotDimensionNumbers> dot_dimension_numbers;
  Boxed<xla::RaggedDotDimensionNumbers> ragged_dot_dimension_numbers;
  Boxed<xla::PrecisionConfig> precision_config;
  Boxed<xla::GatherDimensionNumbers> gather_dimension_numbers;
  Boxed<xla::ScatterDimensionNumbers> scatter_dimension_numbers;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  Boxed<xla::PaddingConfig> padding_config;  // pad
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;
  ComparisonType comparison_type = ComparisonType::kDefault;
  FusionKind fusion_kind = FusionKind::kLoop;
  // custom-call
  std::string custom_call_target;
  bool custom_call_has_side_effect = false;
  xla::CustomCallApiVersion custom_call_api_version = xla::API_VERSION_ORIGINAL;
  xla::CustomCallSchedule custom_call_schedule = xla::SCHEDULE_NONE;
  std::vector<OutputOperandAlias> output_to_operand_aliasing;
  std::optional<std::vector<Shape>> operand_layout_constraints;
  std::string opaque;  // custom-call's legacy opaque string
  // rng, rng-bit-generator
  xla::RandomDistribution distribution = xla::RNG_INVALID;
  xla::RandomAlgorithm rng_algorithm = xla::RNG_DEFAULT;
  // reduce-precision
  int32_t exponent_bits = 0;
  int32_t mantissa_bits = 0;
  // fft
  xla::FftType fft_type = xla::FFT;
  std::vector<int64_t> fft_length;
  Boxed<xla::TriangularSolveOptions> triangular_solve_options;
  Boxed<xla::CholeskyOptions> cholesky_options;
  // scan: the scanned dimension is dimensions[0]; the last num_carries
  // operands are the initial carries (see InferScanShape).
  bool is_reverse = false;
  int64_t num_carries = 0;
  xla::TriState is_associative = xla::TRI_STATE_UNSPECIFIED;
  // sort, topk
  bool is_stable = false;
  int64_t k = 0;
  bool largest = true;
  // batch-norm-*
  float epsilon = 0;
  int64_t feature_index = 0;
  // Collectives, send/recv, infeed/outfeed, domain: carried without semantics.
  std::optional<int64_t> channel_id;
  // replica_groups={{0,1},{2,3}} (explicit), replica_groups=[2,2]<=[4] (iota)
  // or replica_groups=mesh['x'=2,'y'=2] {'y'} (mesh axes, hlo/mesh_replica_groups.h);
  // at most one is set.
  std::optional<std::vector<std::vector<int64_t>>> replica_groups;
  BoxedOptional<xla::IotaReplicaGroupListProto> iota_replica_groups;
  BoxedOptional<xla::MeshAxesReplicaGroupListProto> mesh_replica_groups;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  bool constrain_layout = false;
  bool use_global_device_ids = false;
  bool is_host_transfer = false;
  std::string infeed_config;
  std::string outfeed_config;
  BoxedOptional<Shape> outfeed_shape;
  std::optional<bool> is_cross_program_prefetch;
  Boxed<xla::OpSharding> domain_entry_sharding;
  Boxed<xla::OpSharding> domain_exit_sharding;
  std::string domain_kind;
  std::string async_execution_thread;
  Boxed<xla::ResultAccuracy> result_accuracy;
  bool has_result_accuracy = false;
};

class HloInstruction {
 public:
  // A detached instruction; add it to a computation with AddInstruction.
  static std::unique_ptr<HloInstruction> Create(HloOpcode opcode, Shape shape,
                                                absl::Span<HloInstruction* const> operands = {});
  static std::unique_ptr<HloInstruction> CreateParameter(int64_t number, Shape shape,
                                                         std::string name);
  static std::unique_ptr<HloInstruction> CreateConstant(Literal literal);
  static std::unique_ptr<HloInstruction> CreateGetTupleElement(HloInstruction* tuple,
                                                               int64_t index);
  static std::unique_ptr<HloInstruction> CreateTuple(absl::Span<HloInstruction* const> elements);
  static std::unique_ptr<HloInstruction> CreateBroadcast(Shape shape, HloInstruction* operand,
                                                         std::vector<int64_t> dimensions);
  // call (or fusion) of `computation` with `operands`; result shape is the
  // computation's root shape.
  static std::unique_ptr<HloInstruction> CreateCall(HloComputation* computation,
                                                    absl::Span<HloInstruction* const> operands);
  static std::unique_ptr<HloInstruction> CreateFusion(HloComputation* fused, FusionKind kind,
                                                      absl::Span<HloInstruction* const> operands);

  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  // Renaming does not check uniqueness; HloModule::UniquifyName does.
  void set_name(std::string name) { name_ = std::move(name); }
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  const Shape& shape() const { return shape_; }
  Shape* mutable_shape() { return &shape_; }
  void set_shape(Shape shape) { shape_ = std::move(shape); }

  HloComputation* parent() const { return parent_; }

  // Operands and users. Users are unique and kept in first-use order.
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  const std::vector<HloInstruction*>& operands() const { return operands_; }
  const std::vector<HloInstruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  void AppendOperand(HloInstruction* operand);
  // Room for `n` users without reallocation (for readers that know the count).
  void ReserveUsers(int64_t n) { users_.reserve(static_cast<size_t>(n)); }
  // Replaces operand i with `new_operand` (shapes must be compatible; the
  // caller is responsible, the verifier checks).
  void ReplaceOperandWith(int64_t i, HloInstruction* new_operand);
  // Replaces every use of this instruction as an operand by `replacement`
  // (in all users, and as the root of its computation).
  absl::Status ReplaceAllUsesWith(HloInstruction* replacement);
  // As above but only in `user`.
  void ReplaceUseWith(HloInstruction* user, HloInstruction* replacement);
  // Drops all operand edges (before removal from the computation).
  void DetachOperands();
  // Index of `operand` among the operands (first occurrence), or -1.
  int64_t OperandIndex(const HloInstruction* operand) const;

  // Control dependencies: this instruction runs after each predecessor.
  const std::vector<HloInstruction*>& control_predecessors() const { return control_predecessors_; }
  const std::vector<HloInstruction*>& control_successors() const { return control_successors_; }
  void AddControlDependencyTo(HloInstruction* successor);
  void RemoveControlDependencyTo(HloInstruction* successor);
  void DropAllControlDeps();

  // Called computations in XLA's order: while (condition, body),
  // conditional (branches), select-and-scatter (select, scatter), all others
  // (to_apply / calls / fused computation) first.
  const std::vector<HloComputation*>& called_computations() const { return called_computations_; }
  void AppendCalledComputation(HloComputation* c) { called_computations_.push_back(c); }
  void set_called_computation(int64_t i, HloComputation* c) { called_computations_[i] = c; }
  void ClearCalledComputations() { called_computations_.clear(); }
  HloComputation* to_apply() const;        // call, map, reduce, sort, scatter, ...
  HloComputation* fused_computation() const;  // fusion
  HloComputation* while_condition() const;
  HloComputation* while_body() const;

  // Attributes live out of line and only where set: elementwise ops, most of
  // a large graph, carry none.
  const HloAttributes& attrs() const;
  HloAttributes* mutable_attrs();
  // Shorthands for the most used attributes.
  const std::vector<int64_t>& dimensions() const { return attrs().dimensions; }
  int64_t dimensions(int64_t i) const { return attrs().dimensions[i]; }
  int64_t parameter_number() const { return attrs().parameter_number; }
  int64_t tuple_index() const { return attrs().tuple_index; }
  const Literal& literal() const { return *attrs().literal; }
  FusionKind fusion_kind() const { return attrs().fusion_kind; }

  // Attributes every instruction may carry.
  // Metadata may be shared between instructions (readers share equal
  // metadata, copies share the original's); mutable_metadata() first makes
  // this instruction's own copy, so the pointer it returns is good until the
  // instruction is copied.
  const xla::OpMetadata& metadata() const {
    return metadata_ ? *metadata_ : xla::OpMetadata::default_instance();
  }
  xla::OpMetadata* mutable_metadata();
  // For sharing one metadata between instructions without copying it. What
  // set_shared_metadata is given must have been made mutable
  // (std::make_shared<xla::OpMetadata>): mutable_metadata() writes through
  // it once nothing else shares it.
  const std::shared_ptr<const xla::OpMetadata>& shared_metadata() const { return metadata_; }
  void set_shared_metadata(std::shared_ptr<const xla::OpMetadata> metadata) {
    metadata_ = std::move(metadata);
  }
  const xla::FrontendAttributes& frontend_attributes() const { return frontend_attributes_; }
  xla::FrontendAttributes* mutable_frontend_attributes() { return &frontend_attributes_; }
  // backend_config exactly as written (JSON or any string); see backend_config.h.
  const std::string& backend_config() const { return backend_config_; }
  void set_backend_config(std::string config) { backend_config_ = std::move(config); }
  bool has_sharding() const { return sharding_ != nullptr; }
  const xla::OpSharding& sharding() const { return *sharding_; }
  void set_sharding(xla::OpSharding sharding) {
    sharding_ = std::make_unique<xla::OpSharding>(std::move(sharding));
  }
  void clear_sharding() { sharding_.reset(); }
  // XLA composite calls: `call` with is_composite=true and frontend
  // attributes composite.name / composite.attributes / composite.version.
  bool is_composite() const { return is_composite_; }
  void set_is_composite(bool v) { is_composite_ = v; }
  // The frontend attribute `key`, or nullptr.
  const std::string* FindFrontendAttribute(absl::string_view key) const;
  void SetFrontendAttribute(std::string key, std::string value);
  // Anything else XLA's proto carries that hloc does not model (original
  // value, statistics, ...): kept so proto round trips lose nothing.
  const xla::HloInstructionProto* carried_proto_fields() const { return carried_.get(); }
  xla::HloInstructionProto* mutable_carried_proto_fields();

  // True for ops with side effects that dead-code elimination must keep.
  bool HasSideEffect() const;
  // Element i of the result reads element i of each array operand (scalar
  // operands of select and clamp aside): IsElementwiseOpcode, except a
  // bitcast-convert that changes the element width, which adds or drops a
  // minor dimension.
  bool IsElementwise() const;
  // A copy with new operands (same shape, attributes and called
  // computations), detached from any computation. Name gets `suffix`.
  std::unique_ptr<HloInstruction> CloneWithNewOperands(
      const Shape& shape, absl::Span<HloInstruction* const> new_operands,
      const std::string& suffix = "") const;

  // "%name = f32[2]{0} add(f32[2]{0} %a, f32[2]{0} %b), metadata={...}"
  std::string ToString() const;

 private:
  friend class HloComputation;
  HloInstruction(HloOpcode opcode, Shape&& shape) : opcode_(opcode), shape_(std::move(shape)) {}
  void AddUser(HloInstruction* user);
  void RemoveUser(HloInstruction* user);

  HloOpcode opcode_;
  Shape shape_;
  std::string name_;
  int64_t unique_id_ = -1;
  HloComputation* parent_ = nullptr;
  int64_t index_in_parent_ = -1;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloInstruction*> control_predecessors_;
  std::vector<HloInstruction*> control_successors_;
  std::vector<HloComputation*> called_computations_;
  std::unique_ptr<HloAttributes> attrs_;
  std::shared_ptr<const xla::OpMetadata> metadata_;  // null: the default (empty)
  xla::FrontendAttributes frontend_attributes_;
  std::string backend_config_;
  std::unique_ptr<xla::OpSharding> sharding_;  // rare: kept out of line
  bool is_composite_ = false;
  std::unique_ptr<xla::HloInstructionProto> carried_;
};

}  // namespace hloc

#endif  // HLOC_HLO_INSTRUCTION_H_
