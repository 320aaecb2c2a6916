// Executable (hloc.h): what every target shares when running — checking the
// caller's arguments, allocating results, donation, and for bounded dynamic
// shapes padding the arguments and cutting the result (DeclaredResult, the
// code HostProgram and GpuProgram run too) — around the target's
// ExecutableImpl::Run.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/api_internal.h"
#include "api/hloc.h"
#include "backend/common/declared_result.h"
#include "backend/common/literal_leaves.h"

namespace hloc {
namespace api {

absl::Status MarkCompileError(absl::Status status) {
  if (!status.ok()) status.SetPayload(kCompileErrorPayload, absl::Cord("1"));
  return status;
}

bool IsCompileError(const absl::Status& status) {
  return status.GetPayload(kCompileErrorPayload).has_value();
}

namespace {

// Arguments and results are checked as views, whether they came as Buffers
// or as views: one set of checks for every way in.
using Views = absl::InlinedVector<ArrayView, 8>;
using Flags = absl::InlinedVector<char, 8>;

int64_t ViewBytes(const ArrayView& view) {
  int64_t bytes = ElementByteSize(view.type);
  for (int64_t d : view.dims) bytes *= d;
  return bytes;
}

std::string ViewString(const ArrayView& view) {
  ArraySpec spec;
  spec.type = view.type;
  spec.dims.assign(view.dims.begin(), view.dims.end());
  return spec.ToString();
}

bool SameDims(absl::Span<const int64_t> a, const std::vector<int64_t>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// `a_place`, `b_place`: 0 host memory, 1 the executable's device (addresses
// in different places never overlap).
bool Overlap(const ArrayView& a, char a_place, const ArrayView& b, char b_place) {
  if (a_place != b_place) return false;
  const int64_t a_bytes = ViewBytes(a), b_bytes = ViewBytes(b);
  if (a_bytes == 0 || b_bytes == 0) return false;
  const auto* pa = static_cast<const char*>(a.data);
  const auto* pb = static_cast<const char*>(b.data);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

// Views of the buffers (a device buffer's view holds its device address)
// and where each is: 0 host, 1 the executable's device. A device buffer
// anywhere else is an error.
absl::Status BufferViews(absl::Span<const Buffer> buffers, const char* what,
                         const ExecutableImpl& impl, Views* views, Flags* places) {
  views->reserve(buffers.size());
  places->assign(buffers.size(), 0);
  const Location target = impl.location();
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& buffer = buffers[i];
    if (!buffer.valid()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " ", i, " is an empty Buffer"));
    }
    if (buffer.on_device()) {
      const Location where = buffer.location();
      if (target.is_host()) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " ", i, " is on ", where.ToString(), "; this executable (",
            BackendName(impl.stats.backend),
            " backend) takes host buffers (Buffer::ToHost copies one to the host)"));
      }
      if (where != target) {
        return absl::InvalidArgumentError(absl::StrCat(what, " ", i, " is on ", where.ToString(),
                                                       ", the executable runs on ",
                                                       target.ToString()));
      }
      (*places)[i] = 1;
    }
    views->push_back(ArrayView{buffer.type(), buffer.dims(), BufferAccess::address(buffer)});
  }
  return absl::OkStatus();
}

bool Any(const Flags& flags) {
  return std::any_of(flags.begin(), flags.end(), [](char f) { return f != 0; });
}

// The caller's device memory among `buffers` may still be in use by work
// on its streams: one wait for the whole device covers every such buffer of
// the call (and lets the device's cache reuse what was released before).
absl::Status WaitForCallersDeviceWork(const ExecutableImpl& impl,
                                      absl::Span<const Buffer> arguments,
                                      absl::Span<const Buffer> results = {}) {
  const bool any = std::any_of(arguments.begin(), arguments.end(), HoldsCallersDeviceMemory) ||
                   std::any_of(results.begin(), results.end(), HoldsCallersDeviceMemory);
  return any ? impl.WaitForDeviceWork() : absl::OkStatus();
}

// Whether `dims` fit parameter `i` of an executable with dynamic entry
// parameters: its dynamic dimensions up to the bound, the others equal.
// A size past a bound is the error naming it.
absl::StatusOr<bool> WithinDynamicBounds(absl::Span<const int64_t> dims, size_t i,
                                         const ExecutableImpl& impl) {
  if (i >= impl.dynamic_dims.size()) return false;
  const std::vector<int64_t>& bounds = impl.parameters[i].dims;
  const std::vector<bool>& dynamic = impl.dynamic_dims[i];
  if (dims.size() != bounds.size() || dynamic.size() != bounds.size()) return false;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!dynamic[d] && dims[d] != bounds[d]) return false;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!dynamic[d] || (dims[d] >= 0 && dims[d] <= bounds[d])) continue;
    const std::string which =
        i < impl.argument_names.size() ? absl::StrCat(" (", impl.argument_names[i], ")") : "";
    if (dims[d] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, which, " dimension ", d,
                                                     " has negative size ", dims[d]));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "argument ", i, which, " dimension ", d, " has size ", dims[d], ", above its bound ",
        bounds[d], " (the parameter is ", impl.parameters[i].ToString(), " with dimension ", d,
        " dynamic)"));
  }
  return true;
}

absl::Status CheckArguments(absl::Span<const ArrayView> arguments, const ExecutableImpl& impl) {
  const std::vector<ArraySpec>& parameters = impl.parameters;
  if (arguments.size() != parameters.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the executable takes ", parameters.size(), " argument", parameters.size() == 1 ? "" : "s",
        ", got ", arguments.size()));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const ArrayView& argument = arguments[i];
    if (argument.type != parameters[i].type) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " has element type ", PrimitiveTypeName(argument.type),
          ", the parameter is ", parameters[i].ToString()));
    }
    absl::StatusOr<bool> dynamic_fit = WithinDynamicBounds(argument.dims, i, impl);
    if (!dynamic_fit.ok()) return dynamic_fit.status();
    if (!SameDims(argument.dims, parameters[i].dims) && !*dynamic_fit) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " has shape ",
                                                     ViewString(argument), ", the parameter is ",
                                                     parameters[i].ToString()));
    }
    if (argument.data == nullptr && ViewBytes(argument) > 0) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " has no memory"));
    }
  }
  return absl::OkStatus();
}

// Which arguments the caller donates, checked: in range, and sharing no
// memory with another argument (a donated argument's bytes get overwritten).
absl::StatusOr<Flags> DonatedArguments(absl::Span<const ArrayView> arguments,
                                       const Flags& places, const ExecuteOptions& options) {
  Flags donated(arguments.size(), 0);
  for (int index : options.donated_arguments) {
    if (index < 0 || static_cast<size_t>(index) >= arguments.size()) {
      return absl::InvalidArgumentError(absl::StrCat("donated argument ", index,
                                                     " is out of range (", arguments.size(),
                                                     " arguments)"));
    }
    for (size_t k = 0; k < arguments.size(); ++k) {
      if (k != static_cast<size_t>(index) && Overlap(arguments[index], places[index], arguments[k], places[k])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "donated argument ", index, " shares memory with argument ", k));
      }
    }
    donated[index] = 1;
  }
  return donated;
}

absl::InlinedVector<const void*, 8> ArgumentPointers(absl::Span<const ArrayView> arguments) {
  absl::InlinedVector<const void*, 8> pointers;
  pointers.reserve(arguments.size());
  for (const ArrayView& argument : arguments) pointers.push_back(argument.data);
  return pointers;
}


// Whether the executable has bounded dynamic entry parameters whose
// arguments are padded before Run (not a target that runs the declared
// module).
bool PadsArguments(const ExecutableImpl& impl) {
  return !impl.dynamic_dims.empty() && !impl.runs_declared;
}

// `declared` with each array leaf at the dims of the next argument (made
// static): the runtime shape of one entry parameter.
Shape RuntimeShape(const Shape& declared, absl::Span<const ArrayView> arguments, size_t* next) {
  if (declared.IsTuple()) {
    std::vector<Shape> elements;
    for (const Shape& element : declared.tuple_shapes()) {
      elements.push_back(RuntimeShape(element, arguments, next));
    }
    return Shape::Tuple(std::move(elements));
  }
  if (!declared.IsArray() || *next >= arguments.size()) return declared;
  const ArrayView& view = arguments[(*next)++];
  return Shape(declared.element_type(), std::vector<int64_t>(view.dims.begin(), view.dims.end()));
}

// The arguments (array leaves, checked by CheckArguments, in host memory)
// as one literal per declared entry parameter, at their runtime sizes.
absl::StatusOr<std::vector<Literal>> DeclaredArguments(const ExecutableImpl& impl,
                                                       absl::Span<const ArrayView> arguments,
                                                       const Flags& places) {
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (places[i] != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " is on the device; an executable with dynamic entry parameters ",
          "takes host arguments (Buffer::ToHost copies one to the host)"));
    }
  }
  std::vector<Shape> shapes;
  size_t next = 0;
  for (const Shape& parameter : impl.declared_parameters) {
    shapes.push_back(RuntimeShape(parameter, arguments, &next));
  }
  if (next != arguments.size()) {
    return absl::InternalError(absl::StrCat("the declared parameters hold ", next,
                                            " arrays for ", arguments.size(), " arguments"));
  }
  return backend::LiteralsFromBuffers(shapes, ArgumentPointers(arguments));
}

// The arguments of an executable with dynamic entry parameters as its
// program takes them: copied into host arrays of their bounds, their sizes
// appended, by DeclaredResult::PadArguments (the code HostProgram and
// GpuProgram run too).
struct PaddedArguments {
  std::vector<Literal> literals;
  absl::InlinedVector<const void*, 8> pointers;
  Flags places;  // All host memory.
};

absl::StatusOr<PaddedArguments> PadArguments(const ExecutableImpl& impl,
                                             absl::Span<const ArrayView> arguments,
                                             const Flags& places) {
  absl::StatusOr<std::vector<Literal>> declared = DeclaredArguments(impl, arguments, places);
  if (!declared.ok()) return declared.status();
  PaddedArguments padded;
  absl::StatusOr<std::vector<Literal>> literals = impl.dynamic_entry->PadArguments(*declared);
  if (!literals.ok()) return literals.status();
  padded.literals = *std::move(literals);
  for (const void* leaf : backend::ArgumentLeafData(padded.literals)) {
    padded.pointers.push_back(leaf);
  }
  padded.places.assign(padded.pointers.size(), 0);
  return padded;
}

// A run of a target that runs the declared module (runs_declared): the
// arguments at their runtime sizes in, the result at its runtime sizes out.
absl::StatusOr<Literal> RunDeclared(const ExecutableImpl& impl,
                                    absl::Span<const ArrayView> arguments, const Flags& places,
                                    const ExecuteOptions& options) {
  absl::StatusOr<std::vector<Literal>> declared = DeclaredArguments(impl, arguments, places);
  if (!declared.ok()) return declared.status();
  return impl.RunDeclared(*declared, options);
}

// Host Buffers holding the array leaves of `result`.
absl::StatusOr<std::vector<Buffer>> LeafBuffers(const Literal& result) {
  std::vector<const Literal*> leaves;
  backend::CollectLiteralLeaves(result, &leaves);
  std::vector<Buffer> buffers;
  buffers.reserve(leaves.size());
  for (const Literal* leaf : leaves) {
    absl::StatusOr<Buffer> buffer =
        Buffer::AllocateHost(leaf->shape().element_type(), leaf->shape().dimensions());
    if (!buffer.ok()) return buffer.status();
    if (leaf->size_bytes() > 0) {
      std::memcpy(BufferAccess::address(*buffer), leaf->raw(), leaf->size_bytes());
    }
    buffers.push_back(*std::move(buffer));
  }
  return buffers;
}

// ExecuteInto's checks and run, for arguments and results in `*_places`
// (0 host, 1 the executable's device).
absl::Status ExecuteIntoPlaces(const ExecutableImpl& impl, absl::Span<const ArrayView> arguments,
                               const Flags& argument_places, absl::Span<const ArrayView> results,
                               const Flags& result_places, const ExecuteOptions& options) {
  if (absl::Status ok = CheckArguments(arguments, impl); !ok.ok()) return ok;
  if (impl.padded_result) {
    return absl::InvalidArgumentError(absl::StrCat(
        "this executable's result ", impl.result_shape.ToString(false),
        " has runtime sizes or runtime size checks: Execute returns it at its runtime sizes; "
        "ExecuteInto takes results of fixed shape"));
  }
  absl::StatusOr<Flags> donated = DonatedArguments(arguments, argument_places, options);
  if (!donated.ok()) return donated.status();
  // Padded copies run: nothing is computed in an argument's memory.
  if (PadsArguments(impl)) donated->assign(arguments.size(), 0);
  if (results.size() != impl.results.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the executable has ", impl.results.size(),
                                                   " results, got ", results.size(),
                                                   " result buffers"));
  }
  Flags used(arguments.size(), 0);
  absl::InlinedVector<void*, 8> outputs;
  outputs.reserve(results.size());
  for (size_t j = 0; j < results.size(); ++j) {
    const ArrayView& result = results[j];
    const ArraySpec& spec = impl.results[j];
    if (result.type != spec.type || !SameDims(result.dims, spec.dims)) {
      return absl::InvalidArgumentError(absl::StrCat("result buffer ", j, " is ",
                                                     ViewString(result), ", result ", j, " is ",
                                                     spec.ToString()));
    }
    if (result.data == nullptr && ViewBytes(result) > 0) {
      return absl::InvalidArgumentError(absl::StrCat("result buffer ", j, " has no memory"));
    }
    for (size_t i = 0; i < j; ++i) {
      if (Overlap(result, result_places[j], results[i], result_places[i])) {
        return absl::InvalidArgumentError(
            absl::StrCat("result buffers ", i, " and ", j, " share memory"));
      }
    }
    const int64_t aliased = impl.AliasedParameter(static_cast<int64_t>(j));
    for (size_t k = 0; k < arguments.size(); ++k) {
      if (!Overlap(result, result_places[j], arguments[k], argument_places[k])) continue;
      const bool allowed = static_cast<int64_t>(k) == aliased && (*donated)[k] && !used[k] &&
                           result.data == arguments[k].data &&
                           ViewBytes(result) == ViewBytes(arguments[k]);
      if (!allowed) {
        return absl::InvalidArgumentError(absl::StrCat(
            "result buffer ", j, " shares memory with argument ", k,
            " (allowed only for a donated argument the module aliases with that result)"));
      }
      used[k] = 1;
    }
    outputs.push_back(result.data);
  }
  if (impl.runs_declared) {
    absl::StatusOr<Literal> result = RunDeclared(impl, arguments, argument_places, options);
    if (!result.ok()) return result.status();
    std::vector<const Literal*> leaves;
    backend::CollectLiteralLeaves(*result, &leaves);
    for (size_t j = 0; j < leaves.size() && j < outputs.size(); ++j) {
      if (leaves[j]->size_bytes() != ViewBytes(results[j])) {
        return absl::InternalError(absl::StrCat("result ", j, " is ",
                                                leaves[j]->shape().ToString(false), ", not ",
                                                impl.results[j].ToString()));
      }
      if (leaves[j]->size_bytes() > 0) {
        std::memcpy(outputs[j], leaves[j]->raw(), leaves[j]->size_bytes());
      }
    }
    return absl::OkStatus();
  }
  if (PadsArguments(impl)) {
    absl::StatusOr<PaddedArguments> padded = PadArguments(impl, arguments, argument_places);
    if (!padded.ok()) return padded.status();
    if (Any(result_places)) {
      return impl.RunWithDeviceMemory(padded->pointers, outputs, padded->places, result_places,
                                      options);
    }
    return impl.Run(padded->pointers, outputs, options);
  }
  if (Any(argument_places) || Any(result_places)) {
    return impl.RunWithDeviceMemory(ArgumentPointers(arguments), outputs, argument_places,
                                    result_places, options);
  }
  return impl.Run(ArgumentPointers(arguments), outputs, options);
}

// Execute for an executable whose program returns (result at its bound,
// sizes, checks): run into host memory of that shape, then the result cut
// to its runtime sizes by DeclaredResult::FromRun (a failed size check is
// its error), copied into host Buffers of those sizes.
absl::StatusOr<std::vector<Buffer>> PaddedResultRun(const ExecutableImpl& impl,
                                                    absl::Span<const ArrayView> arguments,
                                                    const Flags& places,
                                                    const PaddedArguments* padded,
                                                    const ExecuteOptions& options) {
  absl::StatusOr<backend::ResultLiteral> program_result =
      backend::CreateResultLiteral(impl.program_result_shape);
  if (!program_result.ok()) return program_result.status();
  const absl::InlinedVector<void*, 8> outputs(program_result->outputs.begin(),
                                              program_result->outputs.end());
  absl::Status ran;
  if (padded != nullptr) {
    ran = impl.Run(padded->pointers, outputs, options);
  } else if (Any(places)) {
    ran = impl.RunWithDeviceMemory(ArgumentPointers(arguments), outputs, places,
                                   Flags(outputs.size(), 0), options);
  } else {
    ran = impl.Run(ArgumentPointers(arguments), outputs, options);
  }
  if (!ran.ok()) return ran;
  absl::StatusOr<Literal> result = impl.dynamic_entry->FromRun(std::move(program_result->literal));
  if (!result.ok()) return result.status();
  return LeafBuffers(*result);
}

}  // namespace

Executable::Executable(std::unique_ptr<ExecutableImpl> impl) : impl_(std::move(impl)) {}
Executable::~Executable() = default;

absl::StatusOr<std::vector<Buffer>> Executable::Execute(absl::Span<const Buffer> arguments,
                                                        const ExecuteOptions& options) const {
  Views views;
  Flags places;
  if (absl::Status ok = BufferViews(arguments, "argument", *impl_, &views, &places); !ok.ok()) {
    return ok;
  }
  if (absl::Status ok = CheckArguments(views, *impl_); !ok.ok()) return ok;
  absl::StatusOr<Flags> donated = DonatedArguments(views, places, options);
  if (!donated.ok()) return donated.status();
  if (absl::Status waited = WaitForCallersDeviceWork(*impl_, arguments); !waited.ok()) {
    return waited;
  }
  std::optional<PaddedArguments> padded;
  if (PadsArguments(*impl_)) {
    absl::StatusOr<PaddedArguments> made = PadArguments(*impl_, views, places);
    if (!made.ok()) return made.status();
    padded = *std::move(made);
    donated->assign(views.size(), 0);  // Padded copies run.
  }
  if (impl_->runs_declared) {
    if (options.results == ResultLocation::kDevice) {
      return absl::InvalidArgumentError(absl::StrCat(
          "results on the device were asked for, but this executable (",
          BackendName(impl_->stats.backend), " backend) runs on the host"));
    }
    absl::StatusOr<Literal> result = RunDeclared(*impl_, views, places, options);
    if (!result.ok()) return result.status();
    return LeafBuffers(*result);
  }
  if (impl_->padded_result) {
    if (options.results == ResultLocation::kDevice) {
      return absl::InvalidArgumentError(absl::StrCat(
          "results on the device were asked for, but this executable's result ",
          impl_->result_shape.ToString(false), " has runtime sizes: it comes back in host memory"));
    }
    return PaddedResultRun(*impl_, views, places, padded.has_value() ? &*padded : nullptr,
                           options);
  }
  bool on_device = false;
  switch (options.results) {
    case ResultLocation::kAuto: on_device = Any(places); break;
    case ResultLocation::kHost: on_device = false; break;
    case ResultLocation::kDevice:
      if (impl_->location().is_host()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "results on the device were asked for, but this executable (",
            BackendName(impl_->stats.backend), " backend) runs on the host"));
      }
      on_device = true;
      break;
  }

  std::vector<Buffer> results;
  results.reserve(impl_->results.size());
  Flags used(arguments.size(), 0);
  for (size_t j = 0; j < impl_->results.size(); ++j) {
    const int64_t k = impl_->AliasedParameter(static_cast<int64_t>(j));
    if (k >= 0 && static_cast<size_t>(k) < arguments.size() && (*donated)[k] && !used[k] &&
        places[k] == static_cast<char>(on_device) &&
        arguments[k].byte_size() == impl_->results[j].byte_size()) {
      used[k] = 1;
      results.push_back(BufferSharing(arguments[k], impl_->results[j]));
      continue;
    }
    absl::StatusOr<Buffer> fresh =
        on_device ? impl_->AllocateOnTargetDevice(impl_->results[j])
                  : Buffer::AllocateHost(impl_->results[j].type, impl_->results[j].dims);
    if (!fresh.ok()) return fresh.status();
    results.push_back(*std::move(fresh));
  }
  absl::InlinedVector<void*, 8> outputs;
  outputs.reserve(results.size());
  for (const Buffer& result : results) outputs.push_back(BufferAccess::address(result));
  absl::Status ran;
  if (padded.has_value()) {
    ran = on_device ? impl_->RunWithDeviceMemory(padded->pointers, outputs, padded->places,
                                                 Flags(results.size(), 1), options)
                    : impl_->Run(padded->pointers, outputs, options);
  } else if (on_device || Any(places)) {
    const Flags output_places(results.size(), static_cast<char>(on_device));
    ran = impl_->RunWithDeviceMemory(ArgumentPointers(views), outputs, places, output_places,
                                     options);
  } else {
    ran = impl_->Run(ArgumentPointers(views), outputs, options);
  }
  if (!ran.ok()) return ran;
  return results;
}

absl::Status Executable::ExecuteInto(absl::Span<const Buffer> arguments,
                                     absl::Span<const Buffer> results,
                                     const ExecuteOptions& options) const {
  Views argument_views, result_views;
  Flags argument_places, result_places;
  if (absl::Status ok =
          BufferViews(arguments, "argument", *impl_, &argument_views, &argument_places);
      !ok.ok()) {
    return ok;
  }
  if (absl::Status ok =
          BufferViews(results, "result buffer", *impl_, &result_views, &result_places);
      !ok.ok()) {
    return ok;
  }
  if (absl::Status waited = WaitForCallersDeviceWork(*impl_, arguments, results); !waited.ok()) {
    return waited;
  }
  return ExecuteIntoPlaces(*impl_, argument_views, argument_places, result_views, result_places,
                           options);
}

absl::Status Executable::ExecuteInto(absl::Span<const ArrayView> arguments,
                                     absl::Span<const ArrayView> results,
                                     const ExecuteOptions& options) const {
  return ExecuteIntoPlaces(*impl_, arguments, Flags(arguments.size(), 0), results,
                           Flags(results.size(), 0), options);
}

bool Executable::RunsOnPointers() const {
  return !PadsArguments(*impl_) && !impl_->padded_result && !impl_->runs_declared;
}

absl::Status Executable::ExecuteOnPointers(absl::Span<const void* const> arguments,
                                           absl::Span<void* const> results) const {
  if (!RunsOnPointers()) {
    return absl::FailedPreconditionError(
        "this executable pads its arguments or cuts its results to runtime sizes: use "
        "ExecuteInto");
  }
  if (arguments.size() != impl_->parameters.size() || results.size() != impl_->results.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the executable takes ", impl_->parameters.size(), " arguments and ",
        impl_->results.size(), " results, got ", arguments.size(), " and ", results.size()));
  }
  static const ExecuteOptions kDefaults;
  return impl_->Run(arguments, results, kDefaults);
}

const std::vector<ArraySpec>& Executable::parameters() const { return impl_->parameters; }
const std::vector<ArraySpec>& Executable::results() const { return impl_->results; }
int64_t Executable::AliasedArgument(int64_t result) const {
  if (result < 0 || static_cast<size_t>(result) >= impl_->results.size()) return -1;
  const int64_t k = impl_->AliasedParameter(result);
  return k >= 0 && static_cast<size_t>(k) < impl_->parameters.size() ? k : -1;
}
const Shape& Executable::result_shape() const { return impl_->result_shape; }
std::string Executable::OptimizedHloText() const { return impl_->optimized_hlo; }
std::string Executable::Ledger() const { return impl_->ledger; }
std::string Executable::Report() const { return impl_->report; }
const Stats& Executable::stats() const { return impl_->stats; }
const MeshShardings* Executable::mesh_shardings() const { return impl_->mesh_shardings.get(); }
const std::string& Executable::fingerprint() const { return impl_->fingerprint; }
Location Executable::location() const { return impl_->location(); }

std::string Stats::ToString() const {
  std::string out = absl::StrCat(
      "backend: ", BackendName(backend), "\nkernels: ", kernels, " (", fused_kernels,
      " fused)\nlibrary calls: ", library_calls, "\ninterpreter ops: ", interpreter_ops);
  if (!interpreter_op_names.empty()) {
    absl::StrAppend(&out, " (", absl::StrJoin(interpreter_op_names, ", "), ")");
  }
  if (devices != 1) absl::StrAppend(&out, "\ndevices: ", devices, " (counts per device)");
  absl::StrAppend(&out, "\npeak memory: ", peak_memory_bytes, " bytes\ncompile: ",
                  compile_seconds, " s\n");
  if (kernels_from_disk_cache + kernels_to_disk_cache > 0) {
    absl::StrAppend(&out, "disk cache: ", kernels_from_disk_cache, " kernels read, ",
                    kernels_to_disk_cache, " written\n");
  }
  return out;
}

}  // namespace api
}  // namespace hloc
