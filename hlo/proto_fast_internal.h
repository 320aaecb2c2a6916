// The fast proto reader's view of one HloInstructionProto, decoded straight
// from wire bytes, and the builder that turns it into an IR instruction.
// Shared by proto_fast_reader.cc (modules) and proto_fast_instruction.cc
// (instructions, shapes, literals). Not a public API.
//
// The view keeps each field the fast builder understands as a value or as a
// span of the input bytes. Any field outside that set, or anything unusual
// (a field repeated where the builder expects one, a non-ASCII string, a
// field that would land in the carried proto fields), marks the instruction
// `needs_reference`: it is then parsed with protobuf and built by
// InstructionFromProto, the reference path, so the IR comes out the same.
#ifndef HLOC_HLO_PROTO_FAST_INTERNAL_H_
#define HLOC_HLO_PROTO_FAST_INTERNAL_H_

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "hlo/computation.h"
#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "hlo/shape.h"

namespace hloc {
namespace proto_fast_internal {

struct FastInstruction {
  // The accessors ReadModule (proto_io_module_reader.h) uses.
  absl::string_view name() const { return name_; }
  int64_t id() const { return id_; }
  absl::string_view opcode() const { return opcode_; }
  int64_t parameter_number() const { return parameter_number_; }
  absl::Span<const int64_t> operand_ids() const { return operand_ids_; }
  int operand_ids_size() const { return static_cast<int>(operand_ids_.size()); }
  absl::Span<const int64_t> control_predecessor_ids() const { return control_predecessor_ids_; }
  absl::Span<const int64_t> called_computation_ids() const { return called_computation_ids_; }

  absl::string_view bytes;  // The whole message, for the reference path.
  bool needs_reference = false;

  absl::string_view name_, opcode_;
  int64_t id_ = 0;
  int64_t parameter_number_ = 0;
  absl::InlinedVector<int64_t, 3> operand_ids_;
  absl::InlinedVector<int64_t, 1> control_predecessor_ids_;
  absl::InlinedVector<int64_t, 2> called_computation_ids_;

  // Spans of message, bytes and packed fields (data() == nullptr: absent).
  absl::string_view shape, metadata, literal, frontend_attributes, backend_config, sharding;
  absl::string_view window, convolution_dimension_numbers, padding_config, dot_dimension_numbers,
      gather_dimension_numbers, scatter_dimension_numbers, precision_config;
  absl::string_view dimensions, dynamic_slice_sizes, gather_slice_sizes, fft_length;
  absl::string_view fusion_kind, comparison_direction, comparison_type, custom_call_target,
      async_execution_thread, infeed_config, outfeed_config;
  std::vector<std::array<int64_t, 3>> slices;  // (start, limit, stride)

  int64_t tuple_index = 0, feature_group_count = 0, batch_group_count = 0, feature_index = 0,
          channel_id = 0, k = 0, num_carries = 0;
  int32_t exponent_bits = 0, mantissa_bits = 0, distribution = 0, fft_type = 0,
          rng_algorithm = 0, custom_call_schedule = 0, custom_call_api_version = 0,
          is_associative = 0;
  uint32_t epsilon_bits = 0;
  bool is_composite = false, indices_are_sorted = false, unique_indices = false,
       is_stable = false, custom_call_has_side_effect = false, is_host_transfer = false,
       use_global_device_ids = false, constrain_layout = false, largest = false,
       is_reverse = false;
  // Some field of HloAttributes appeared (at any value).
  bool has_attributes = false;
};

// Decodes one instruction message. False when the bytes are not well formed
// (the caller then leaves the whole module to protobuf).
bool DecodeInstruction(absl::string_view bytes, FastInstruction* out);

// Metadata already decoded during one load, by its wire bytes (views into
// the input): instructions with the same bytes share one OpMetadata. Models
// repeat a few metadata across thousands of instructions.
struct MetadataCache {
  absl::flat_hash_map<absl::string_view, std::shared_ptr<const xla::OpMetadata>> by_bytes;
  // The last one used: neighbors often share metadata, and comparing bytes
  // is cheaper than hashing them.
  absl::string_view last_bytes;
  std::shared_ptr<const xla::OpMetadata> last;
};

// The instruction InstructionFromProto would build, or nullptr when the
// fast path cannot tell (the caller then takes the reference path).
// `metadata_cache` may be null (nothing shared).
std::unique_ptr<HloInstruction> BuildFastInstruction(
    const FastInstruction& p, absl::Span<HloInstruction* const> operands,
    absl::Span<HloComputation* const> called_computations,
    MetadataCache* metadata_cache = nullptr);

// ShapeFromProto on wire bytes, for shapes that ShapeToProto would write
// back byte for byte ("canonical"); false otherwise or when invalid.
bool DecodeCanonicalShape(absl::string_view bytes, Shape* shape);

// LiteralFromProto on wire bytes for the common case (one array of a
// standard type, row-major, canonical shape); nullopt when not that case or
// invalid.
std::optional<Literal> DecodeSimpleLiteral(absl::string_view bytes);

// ProgramShapeProto bytes (proto_fast_program_shape.cc). True when protobuf
// would parse them; false when unsure (then ask protobuf).
bool WellFormedProgramShape(absl::string_view bytes);
// ProgramShapeFromProto on the bytes, for canonical shapes and ASCII names;
// false when not that case or invalid (then ask protobuf).
bool DecodeProgramShape(absl::string_view bytes, ProgramShape* out);

// How many instructions took which path (for tests).
struct FastReadStats {
  int fast_instructions = 0;
  int reference_instructions = 0;
};

// ModuleFromProtoBytes without the fallback: any error (including "not for
// the fast path") means the reference reader must decide.
absl::StatusOr<std::unique_ptr<HloModule>> TryFastModule(absl::string_view bytes,
                                                         FastReadStats* stats = nullptr);

}  // namespace proto_fast_internal
}  // namespace hloc

#endif  // HLOC_HLO_PROTO_FAST_INTERNAL_H_
