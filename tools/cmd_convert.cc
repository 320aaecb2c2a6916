// hloc convert IN OUT: text <-> binary HloModuleProto.
#include "hlo/status_macros.h"
#include "tools/command.h"
#include "tools/module_files.h"

namespace hloc::tools {
namespace {

absl::Status RunConvert(const Args& args) {
  const std::string& in = args.positional[0];
  const std::string& out = args.positional[1];
  HLOC_ASSIGN_OR_RETURN(FileFormat format, FormatFromFlag(args.Get("to"), out));
  HLOC_ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, LoadSingleModule(in));
  return WriteModule(*module, out, format);
}

}  // namespace

Command ConvertCommand() {
  return {"convert", "convert a module between HLO text and binary HloModuleProto",
          "usage: hloc convert IN OUT [--to=text|proto]\n"
          "  Reads IN (HLO text, or a binary HloModuleProto / HloProto / HloSnapshot) and\n"
          "  writes OUT. The output format follows OUT's extension (.pb = proto, anything\n"
          "  else = text) unless --to says otherwise.\n",
          {{"to", false}}, 2, 2, RunConvert};
}

}  // namespace hloc::tools
