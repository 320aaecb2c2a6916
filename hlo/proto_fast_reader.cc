// ModuleFromProtoBytes and friends: serialized HloModuleProto / HloProto /
// HloSnapshot straight into the IR, without first building protobuf's
// generated messages for the computations and instructions.
//
// How it stays exact. The bytes are decoded into light views of the
// computations and instructions (spans into the input plus a few values;
// proto_fast_internal.h) that ReadModule (proto_io_module_reader.h), the
// same code ModuleFromProto runs, walks to build the IR. Module-level fields
// other than the computations are few and small: they are cut out of the
// bytes and parsed by protobuf into the module header. Instructions the fast
// builder does not fully understand are parsed by protobuf one by one and
// built by the reference InstructionFromProto. And whenever anything fails
// (malformed bytes, invalid content, anything the strict wire reader
// refuses) the whole input is read again the reference way, so errors,
// and every case the fast path does not cover, are exactly ModuleFromProto's.
#include <climits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hlo/proto_fast_internal.h"
#include "hlo/proto_fast_wire.h"
#include "hlo/proto_io.h"
#include "hlo/proto_io_internal.h"
#include "hlo/proto_io_module_reader.h"

namespace hloc {
namespace proto_fast_internal {
namespace {

struct FastComputation {
  absl::string_view name() const { return name_; }
  int64_t id() const { return id_; }
  int64_t root_id() const { return root_id_; }
  absl::string_view execution_thread() const { return execution_thread_; }
  int instructions_size() const { return static_cast<int>(instructions_.size()); }
  const FastInstruction& instructions(int j) const { return instructions_[j]; }

  absl::string_view name_, execution_thread_;
  int64_t id_ = 0, root_id_ = 0;
  std::vector<FastInstruction> instructions_;
};

struct FastModule {
  absl::string_view name() const { return header.name(); }
  int64_t entry_computation_id() const { return header.entry_computation_id(); }
  absl::string_view entry_computation_name() const { return header.entry_computation_name(); }
  int computations_size() const { return static_cast<int>(computations_.size()); }
  const FastComputation& computations(int i) const { return computations_[i]; }

  xla::HloModuleProto header;  // Everything but the computations (and the below).
  std::vector<FastComputation> computations_;
  // host_program_shape when DecodeProgramShape could read it (it is then
  // not in `header`).
  std::optional<ProgramShape> host_program_shape;
};

bool Parse(absl::string_view bytes, google::protobuf::MessageLite* message) {
  return ParseProtoQuietly(bytes, message);
}

bool DecodeComputation(absl::string_view bytes, FastComputation* out) {
  WireReader reader(bytes);
  std::vector<absl::string_view> instructions;
  while (!reader.done()) {
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type)) return false;
    absl::string_view payload;
    uint64_t value;
    if (wire_type == kLengthDelimited && (field == 1 || field == 2 || field == 4 || field == 8)) {
      if (!reader.ReadLengthDelimited(&payload)) return false;
      if (field == 1 || field == 8) {
        if (!IsAscii(payload)) return false;
        (field == 1 ? out->name_ : out->execution_thread_) = payload;
      } else if (field == 2) {
        instructions.push_back(payload);
      } else {
        // program_shape is rewritten from the IR; only its validity matters.
        xla::ProgramShapeProto program_shape;
        if (!WellFormedProgramShape(payload) && !Parse(payload, &program_shape)) return false;
      }
    } else if (wire_type == kVarint && (field == 5 || field == 6 || field == 7)) {
      if (!reader.ReadVarint(&value)) return false;
      if (field == 5) out->id_ = static_cast<int64_t>(value);
      if (field == 6) out->root_id_ = static_cast<int64_t>(value);
      // 7, is_fusion_computation, is recomputed from the fusions.
    } else if (!reader.Skip(wire_type)) {  // Unknown fields are dropped.
      return false;
    }
  }
  out->instructions_.resize(instructions.size());
  for (size_t j = 0; j < instructions.size(); ++j) {
    if (!DecodeInstruction(instructions[j], &out->instructions_[j])) return false;
  }
  return true;
}

bool DecodeModule(absl::string_view bytes, FastModule* out) {
  WireReader reader(bytes);
  std::vector<absl::string_view> computations;
  std::string header_bytes;
  // host_program_shape (4) with its tag, when there is exactly one.
  absl::string_view program_shape_field, program_shape;
  int program_shapes = 0;
  while (!reader.done()) {
    const char* start = reader.position();
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type)) return false;
    if ((field == 3 || field == 4) && wire_type == kLengthDelimited) {
      absl::string_view payload;
      if (!reader.ReadLengthDelimited(&payload)) return false;
      if (field == 3) {
        computations.push_back(payload);
        continue;
      }
      if (++program_shapes == 1) {
        program_shape = payload;
        program_shape_field = absl::string_view(start, reader.position() - start);
        continue;
      }
      // Protobuf merges repeated occurrences: leave them all to it.
      if (program_shapes == 2) absl::StrAppend(&header_bytes, program_shape_field);
    } else if (!reader.Skip(wire_type)) {
      return false;
    }
    header_bytes.append(start, reader.position() - start);
  }
  if (program_shapes == 1) {
    out->host_program_shape.emplace();
    if (!DecodeProgramShape(program_shape, &*out->host_program_shape)) {
      out->host_program_shape.reset();
      absl::StrAppend(&header_bytes, program_shape_field);
    }
  }
  if (!Parse(header_bytes, &out->header)) return false;
  out->computations_.resize(computations.size());
  for (size_t i = 0; i < computations.size(); ++i) {
    if (!DecodeComputation(computations[i], &out->computations_[i])) return false;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<HloInstruction>> MakeInstruction(
    const FastInstruction& instruction, absl::Span<HloInstruction* const> operands,
    absl::Span<HloComputation* const> called, MetadataCache* metadata_cache,
    FastReadStats* stats) {
  if (std::unique_ptr<HloInstruction> fast =
          BuildFastInstruction(instruction, operands, called, metadata_cache)) {
    if (stats) ++stats->fast_instructions;
    return fast;
  }
  if (stats) ++stats->reference_instructions;
  xla::HloInstructionProto proto;
  if (!Parse(instruction.bytes, &proto)) return absl::DataLossError("malformed instruction");
  return proto_io_internal::InstructionFromProto(proto, operands, called);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HloModule>> TryFastModule(absl::string_view bytes,
                                                         FastReadStats* stats) {
  FastModule module;
  if (bytes.size() > INT_MAX || !DecodeModule(bytes, &module)) {
    return absl::UnimplementedError("not for the fast path");
  }
  MetadataCache metadata_cache;
  return proto_io_internal::ReadModule(
      module, module.header,
      [stats, &metadata_cache](const FastInstruction& instruction,
                               absl::Span<HloInstruction* const> operands,
                               absl::Span<HloComputation* const> called) {
        return MakeInstruction(instruction, operands, called, &metadata_cache, stats);
      },
      std::move(module.host_program_shape));
}

namespace {

absl::StatusOr<Literal> FastLiteral(absl::string_view bytes) {
  if (std::optional<Literal> literal = DecodeSimpleLiteral(bytes)) return *std::move(literal);
  xla::LiteralProto proto;
  if (!Parse(bytes, &proto)) return absl::DataLossError("malformed literal");
  return LiteralFromProto(proto);
}

// Splits an HloProto into its module's bytes and a check of the rest.
bool FindModuleInHloProto(absl::string_view bytes, absl::string_view* module) {
  WireReader reader(bytes);
  bool found = false;
  std::string rest;
  while (!reader.done()) {
    const char* start = reader.position();
    uint32_t field, wire_type;
    if (!reader.ReadTag(&field, &wire_type)) return false;
    if (field == 1 && wire_type == kLengthDelimited) {
      if (found || !reader.ReadLengthDelimited(module)) return false;  // Two would merge.
      found = true;
      continue;
    }
    if (!reader.Skip(wire_type)) return false;
    rest.append(start, reader.position() - start);
  }
  xla::HloProto others;
  return found && Parse(rest, &others);
}

absl::StatusOr<LoadedSnapshot> TryFastSnapshot(absl::string_view bytes) {
  const absl::Status not_fast = absl::UnimplementedError("not for the fast path");
  if (bytes.size() > INT_MAX) return not_fast;
  WireReader reader(bytes);
  absl::string_view hlo, result, platform;
  bool has_hlo = false, has_result = false;
  std::vector<absl::string_view> arguments;
  while (!reader.done()) {
    uint32_t field, wire_type;
    absl::string_view payload;
    if (!reader.ReadTag(&field, &wire_type) || wire_type != kLengthDelimited || field > 4 ||
        !reader.ReadLengthDelimited(&payload)) {
      return not_fast;
    }
    switch (field) {
      case 1:
        if (has_hlo) return not_fast;
        has_hlo = true;
        hlo = payload;
        break;
      case 2: arguments.push_back(payload); break;
      case 3:
        if (has_result) return not_fast;
        has_result = true;
        result = payload;
        break;
      case 4:
        if (!IsAscii(payload)) return not_fast;
        platform = payload;
        break;
    }
  }
  absl::string_view module_bytes;
  if (!has_hlo || !FindModuleInHloProto(hlo, &module_bytes)) return not_fast;
  LoadedSnapshot snapshot;
  HLOC_ASSIGN_OR_RETURN(snapshot.module, TryFastModule(module_bytes));
  snapshot.arguments.reserve(arguments.size());
  for (absl::string_view argument : arguments) {
    HLOC_ASSIGN_OR_RETURN(Literal literal, FastLiteral(argument));
    snapshot.arguments.push_back(std::move(literal));
  }
  if (has_result) {
    HLOC_ASSIGN_OR_RETURN(snapshot.result, FastLiteral(result));
  }
  snapshot.execution_platform = std::string(platform);
  return snapshot;
}

absl::Status TooLarge(absl::string_view what) {
  return absl::ResourceExhaustedError(
      absl::StrCat(what, " is larger than the 2 GiB protobuf can parse"));
}

}  // namespace
}  // namespace proto_fast_internal

absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromProtoBytes(absl::string_view bytes) {
  auto fast = proto_fast_internal::TryFastModule(bytes);
  if (fast.ok()) return fast;
  if (bytes.size() > INT_MAX) return proto_fast_internal::TooLarge("HloModuleProto");
  xla::HloModuleProto proto;
  if (!ParseProtoQuietly(bytes, &proto)) {
    return absl::DataLossError("not a valid HloModuleProto (protobuf parse failed)");
  }
  return ModuleFromProto(proto);
}

absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromHloProtoBytes(absl::string_view bytes) {
  absl::string_view module;
  if (bytes.size() <= INT_MAX && proto_fast_internal::FindModuleInHloProto(bytes, &module)) {
    auto fast = proto_fast_internal::TryFastModule(module);
    if (fast.ok()) return fast;
  }
  if (bytes.size() > INT_MAX) return proto_fast_internal::TooLarge("HloProto");
  xla::HloProto proto;
  if (!ParseProtoQuietly(bytes, &proto)) {
    return absl::DataLossError("not a valid HloProto (protobuf parse failed)");
  }
  if (!proto.has_hlo_module()) return absl::InvalidArgumentError("HloProto has no hlo_module");
  return ModuleFromProto(proto.hlo_module());
}

absl::StatusOr<LoadedSnapshot> SnapshotFromProtoBytes(absl::string_view bytes) {
  auto fast = proto_fast_internal::TryFastSnapshot(bytes);
  if (fast.ok()) return fast;
  if (bytes.size() > INT_MAX) return proto_fast_internal::TooLarge("HloSnapshot");
  xla::HloSnapshot proto;
  if (!ParseProtoQuietly(bytes, &proto)) {
    return absl::DataLossError("not a valid HloSnapshot (protobuf parse failed)");
  }
  return SnapshotFromProto(proto);
}

}  // namespace hloc
