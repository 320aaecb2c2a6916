// Conversion between hloc's IR and XLA's serialized forms: ShapeProto,
// LiteralProto, HloModuleProto and HloSnapshot.
//
// Reading treats the proto as untrusted input: every id, count and size is
// checked before it is used, and a bad proto gives an absl::Status naming the
// computation or instruction at fault, never a crash or a huge allocation.
//
// Round trips. Fields the IR models are converted both ways; everything else
// XLA wrote (statistics, original values, stack frame tables, device
// assignment, layout details such as sparse dim levels, unknown fields of
// newer XLA versions, ...) rides along in the instruction's carried proto
// fields and HloModuleConfig::carried. Every dump in tests/jax/zoo comes back
// exactly, ids aside. What does change:
//   - ids: written as the IR's unique ids, so they (and all references to
//     them) are renumbered; CanonicalizeProtoIds makes such protos comparable;
//   - written the way XLA writes them: metadata, frontend_attributes,
//     statistics_viz, host_program_shape, input_output_alias, buffer_donor
//     always present; a compare's comparison_type and a collective's device
//     list always present; feature/batch_group_count 0 read as 1;
//     custom-call api version UNSPECIFIED read as ORIGINAL;
//   - a deprecated replica_groups list comes back as collective_device_list,
//     is_cross_program_prefetch as cross_program_prefetch_index 0;
//   - HloComputationProto: unknown fields are dropped and
//     is_fusion_computation is recomputed from the fusions that exist;
//   - a constant's literal shape loses layout details the IR does not model;
//   - a custom-call's legacy `opaque` string is written as backend_config.
// Module settings that XLA keeps in HloModuleConfigProto rather than
// HloModuleProto (replica_count, num_partitions, spmd propagation flags) are
// not written. Once written by ModuleToProto, a proto is a fixed point:
// reading and writing it again gives the same proto, ids included.
//
// Instruction ordering: instructions are written operands-first (insertion
// order when that is already topological), computations callees-first, as
// XLA's reader requires; the reader accepts any order and resolves by id.
// The while loop's callees are (body, condition) in the proto, as XLA writes
// them, and (condition, body) in the IR.
#ifndef HLOC_HLO_PROTO_IO_H_
#define HLOC_HLO_PROTO_IO_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hlo/hlo.pb.h"
#include "hlo/literal.h"
#include "hlo/module.h"
#include "hlo/shape.h"
#include "hlo/xla_data.pb.h"

namespace hloc {

// Shapes. ShapeFromProto validates (ValidateShape plus tile and rank limits).
// ShapeToProto writes what XLA writes: one is_dynamic_dimension per
// dimension, layouts with tail_padding_alignment_in_elements = 1.
absl::StatusOr<Shape> ShapeFromProto(const xla::ShapeProto& proto);
xla::ShapeProto ShapeToProto(const Shape& shape);

absl::StatusOr<ProgramShape> ProgramShapeFromProto(const xla::ProgramShapeProto& proto);
xla::ProgramShapeProto ProgramShapeToProto(const ProgramShape& program_shape);

// Literals. XLA stores array data in the order of the literal's layout
// (minor_to_major, physical order); hloc keeps literals row-major, so data is
// permuted on the way in and out. Sub-byte integers and narrow floats take one
// byte per element, 16-bit types are packed little-endian, complex values are
// interleaved (real, imag). A shape without a layout is written with the
// row-major layout, since XLA refuses literals without one.
absl::StatusOr<Literal> LiteralFromProto(const xla::LiteralProto& proto);
xla::LiteralProto LiteralToProto(const Literal& literal);

// Parses `bytes` into `message` with protobuf's own logging silenced
// ("[libprotobuf ERROR ...] invalid UTF-8" and the like): hloc reports a
// failed parse as a Status, and probing which kind of proto a file holds must
// print nothing. False when the bytes do not parse.
bool ParseProtoQuietly(absl::string_view bytes, google::protobuf::MessageLite* message);

// Modules.
absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromProto(const xla::HloModuleProto& proto);
absl::StatusOr<xla::HloModuleProto> ModuleToProto(const HloModule& module);

// The same results (modules, errors) as parsing `bytes` with protobuf and
// calling ModuleFromProto / SnapshotFromProto on the message, several times
// faster: the bytes are decoded straight into the IR, and only what the
// fast reader does not model goes through protobuf's generated messages
// (see proto_fast_reader.cc). A DataLoss error when protobuf would not
// parse the bytes at all. ModuleFromHloProtoBytes reads XLA's HloProto
// (--xla_dump_hlo_as_proto), whose module is its field hlo_module.
absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromProtoBytes(absl::string_view bytes);
absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromHloProtoBytes(absl::string_view bytes);

// Renumbers ids by position: computation k gets id k + 1 and its j-th
// instruction (k + 1) << 32 | (j + 1), as recent XLA numbers them; every
// reference (operands, control predecessors, callees, roots, entry,
// schedule) follows. Protos that differ only in numbering become equal.
void CanonicalizeProtoIds(xla::HloModuleProto* proto);

// A module with the arguments of one run and, when recorded, its result.
struct LoadedSnapshot {
  std::unique_ptr<HloModule> module;
  std::vector<Literal> arguments;
  std::optional<Literal> result;
  std::string execution_platform;
};

// The module comes from snapshot.hlo.hlo_module; the buffer assignment a
// snapshot may carry refers to XLA's ids and is not kept.
absl::StatusOr<LoadedSnapshot> SnapshotFromProto(const xla::HloSnapshot& proto);
absl::StatusOr<xla::HloSnapshot> SnapshotToProto(const LoadedSnapshot& snapshot);
absl::StatusOr<LoadedSnapshot> SnapshotFromProtoBytes(absl::string_view bytes);  // As above.

}  // namespace hloc

#endif  // HLOC_HLO_PROTO_IO_H_
