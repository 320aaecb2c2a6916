// hloc graph FILE: draw a module (after an optional pipeline) as Graphviz,
// each fusion's fused computation as a cluster, library calls highlighted.
#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "hlo/status_macros.h"
#include "passes/standard_pipelines.h"
#include "tools/command.h"
#include "tools/module_files.h"

namespace hloc::tools {
namespace {

std::string Quote(absl::string_view text) {
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}}), "\"");
}

std::string NodeId(const HloInstruction* i) { return absl::StrCat("n", i->unique_id()); }

std::string Label(const HloInstruction* i) {
  std::string label = absl::StrCat(i->name(), "\n", HloOpcodeName(i->opcode()));
  if (const std::string* name = i->FindFrontendAttribute("composite.name")) {
    absl::StrAppend(&label, " ", *name);
  }
  absl::StrAppend(&label, "\n", i->shape().ToString(/*print_layout=*/false));
  return label;
}

// Emits the nodes and edges of `computation`; fusions become clusters whose
// parameters take the fusion's operands and whose root feeds its users.
void EmitComputation(const HloComputation& computation, std::string* out) {
  for (const HloInstruction* i : computation.MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kFusion && i->fused_computation()) {
      const HloComputation* fused = i->fused_computation();
      absl::StrAppend(out, "  subgraph cluster_", NodeId(i), " {\n    label=",
                      Quote(absl::StrCat(i->name(), " (", FusionKindName(i->fusion_kind()), ")")),
                      "; style=filled; color=lightblue;\n");
      for (const HloInstruction* f : fused->MakeInstructionPostOrder()) {
        absl::StrAppend(out, "    ", NodeId(f), " [label=", Quote(Label(f)), "];\n");
        for (const HloInstruction* operand : f->operands()) {
          absl::StrAppend(out, "    ", NodeId(operand), " -> ", NodeId(f), ";\n");
        }
      }
      absl::StrAppend(out, "  }\n");
      for (int64_t k = 0; k < i->operand_count() && k < fused->num_parameters(); ++k) {
        absl::StrAppend(out, "  ", NodeId(i->operand(k)), " -> ", NodeId(fused->parameter(k)),
                        ";\n");
      }
      // Users of the fusion read the fused root.
      absl::StrAppend(out, "  ", NodeId(i), " [shape=point];\n  ", NodeId(fused->root()), " -> ",
                      NodeId(i), ";\n");
      continue;
    }
    bool library = i->is_composite();
    absl::StrAppend(out, "  ", NodeId(i), " [label=", Quote(Label(i)),
                    library ? ", style=filled, fillcolor=orange" : "",
                    i->opcode() == HloOpcode::kParameter ? ", shape=box" : "", "];\n");
    for (const HloInstruction* operand : i->operands()) {
      absl::StrAppend(out, "  ", NodeId(operand), " -> ", NodeId(i), ";\n");
    }
  }
}

absl::Status RunGraph(const Args& args) {
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, LoadSingleVerifiedModule(args.positional[0]));
  if (args.Has("pipeline")) {
    HLOC_ASSIGN_OR_RETURN(auto pipeline,
                          MakeStandardPipeline(args.Get("pipeline"), PipelineOptions{}, nullptr));
    HLOC_RETURN_IF_ERROR(pipeline->Run(*module).status());
  }
  std::string dot = absl::StrCat("digraph ", Quote(module->name()),
                                 " {\n  node [shape=ellipse, fontsize=10];\n");
  EmitComputation(*module->entry(), &dot);
  dot += "}\n";
  const std::string format = args.Get("format", "dot");
  const std::string output = args.Get("output", "-");
  if (format == "dot") {
    if (output == "-") {
      std::fwrite(dot.data(), 1, dot.size(), stdout);
      return absl::OkStatus();
    }
    std::ofstream out(output);
    out << dot;
    if (!out) return absl::DataLossError(absl::StrCat("cannot write ", output));
    return absl::OkStatus();
  }
  if (format != "svg") {
    return absl::InvalidArgumentError(absl::StrCat("unknown format '", format, "' (dot or svg)"));
  }
  // Graphviz renders; its input is our text, its output our file or stdout.
  std::string command = output == "-" ? "dot -Tsvg" : "dot -Tsvg -o \"$HLOC_GRAPH_OUT\"";
  if (output != "-") setenv("HLOC_GRAPH_OUT", output.c_str(), 1);
  FILE* pipe = popen(command.c_str(), "w");
  if (pipe == nullptr) return absl::UnavailableError("cannot start Graphviz 'dot'");
  std::fwrite(dot.data(), 1, dot.size(), pipe);
  int status = pclose(pipe);
  if (status != 0) {
    return absl::UnavailableError(
        "Graphviz 'dot' failed or is not installed (tools/setup.sh installs graphviz)");
  }
  return absl::OkStatus();
}

}  // namespace

Command GraphCommand() {
  return {"graph", "draw a module with fusion groups as clusters (Graphviz)",
          "usage: hloc graph FILE [--format=dot|svg] [--pipeline=NAME] [--output=F]\n"
          "  Draws the entry computation: each fusion's fused computation is a cluster,\n"
          "  library (composite) calls are orange. --pipeline runs a pipeline first (e.g.\n"
          "  default). svg needs Graphviz's 'dot'.\n",
          {{"format", false}, {"pipeline", false}, {"output", false}}, 1, 1, RunGraph};
}

}  // namespace hloc::tools
