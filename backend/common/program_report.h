// What the program builder did, whatever the target: the part of
// host::HostCompileReport and gpu::GpuCompileReport both share (they derive
// from it and add their libraries' lines).
#ifndef HLOC_BACKEND_COMMON_PROGRAM_REPORT_H_
#define HLOC_BACKEND_COMMON_PROGRAM_REPORT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hloc {
namespace backend {

struct ProgramReport {
  int64_t kernels = 0;            // Kernel thunks (launches).
  int64_t fused_kernels = 0;      // Of which compile a fusion.
  int64_t unfused_fusions = 0;    // Fusions split into their ops (no fused kernel).
  int64_t library_calls = 0;      // Library thunks (oneDNN, host routines, cuBLASLt, cuDNN).
  int64_t interpreter_calls = 0;  // Interpreter ops (interpreter_ops.h).
  int64_t collectives = 0;        // Communicator thunks (collective_lowering.h).
  // Per interpreter op: "%fft.2 (fft) runs in the interpreter: no GPU kernel for fft".
  std::vector<std::string> interpreter_ops;
  // The same ops as (opcode, instruction name) pairs: ("fft", "fft.2").
  std::vector<std::pair<std::string, std::string>> interpreter_opcodes;
  // Per kernel: "%fusion.2: row-reduction", with the target's details.
  std::vector<std::string> strategies;
  // Buffer sharing (ProgramBuilderOptions::update_in_place).
  int64_t update_kernels = 0;      // Kernels writing only a dynamic-update-slice's update.
  int64_t updates_in_place = 0;    // Of which share their operand's buffer (no copy).
  int64_t loop_states_reused = 0;  // Loop state leaves living in their initial value's buffer.
  // Loop body results computed in their state leaf's buffer (no copy back).
  int64_t loop_results_in_place = 0;
  // Kernel outputs in the bytes of a temporary they read only at the index
  // they write (a chain of elementwise kernels in one buffer).
  int64_t elementwise_in_place = 0;
  int64_t shared_bytes = 0;        // Bytes of buffers living in another's.
  // The module's input_output_alias pairs: "output {0} / parameter 1 {}"
  // for those a parameter's memory holds, with the reason for the others.
  std::vector<std::string> aliased_outputs;
  std::vector<std::string> alias_refusals;

  // The lines for interpreter ops, aliasing and sharing, as both targets
  // print them.
  void AppendSharedLines(std::string* out) const;
};

}  // namespace backend
}  // namespace hloc

#endif  // HLOC_BACKEND_COMMON_PROGRAM_REPORT_H_
