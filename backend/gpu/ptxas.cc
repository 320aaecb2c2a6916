// PTX -> cubin through ptxas, run as a subprocess (argv, no shell) in a
// private temporary directory (see kernel_codegen.h).
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backend/gpu/kernel_codegen.h"

extern char** environ;

namespace hloc {
namespace gpu {
namespace {

bool WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

// Removes the files it was told about and the directory, on every path out.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(base != nullptr && *base != '\0' ? base : "/tmp", "/hloc-ptxas-XXXXXX");
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) != nullptr) path_ = buffer.data();
  }
  ~TempDir() {
    for (const std::string& file : files_) unlink(file.c_str());
    if (!path_.empty()) rmdir(path_.c_str());
  }
  bool ok() const { return !path_.empty(); }
  std::string File(const std::string& name) {
    files_.push_back(absl::StrCat(path_, "/", name));
    return files_.back();
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

}  // namespace

std::string PtxasPath(const GpuCompileOptions& options) {
  if (!options.ptxas_path.empty()) return options.ptxas_path;
  const char* env = std::getenv("HLOC_PTXAS");
  if (env != nullptr && *env != '\0') return env;
  return "/usr/local/cuda/bin/ptxas";
}

absl::StatusOr<std::string> AssemblePtx(const std::string& ptx, int compute_capability,
                                        const std::string& ptxas_path) {
  if (access(ptxas_path.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("ptxas not found at ", ptxas_path));
  }
  TempDir dir;
  if (!dir.ok()) return absl::InternalError(absl::StrCat("mkdtemp: ", std::strerror(errno)));
  const std::string input = dir.File("kernel.ptx");
  const std::string output = dir.File("kernel.cubin");
  const std::string log = dir.File("ptxas.log");
  if (!WriteFile(input, ptx)) return absl::InternalError(absl::StrCat("cannot write ", input));
  const std::string arch = absl::StrCat("-arch=sm_", compute_capability);
  std::vector<std::string> args = {ptxas_path, arch, "-O3", input, "-o", output};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, ptxas_path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::InternalError(
        absl::StrCat("cannot run ", ptxas_path, ": ", std::strerror(spawned)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string messages = ReadFile(log);
    if (messages.size() > 4000) messages.resize(4000);
    return absl::InternalError(absl::StrCat(
        "ptxas ", arch, " rejected the PTX (",
        WIFEXITED(status) ? absl::StrCat("exit ", WEXITSTATUS(status)) : std::string("killed"),
        "): ", messages));
  }
  std::string cubin = ReadFile(output);
  if (cubin.empty()) return absl::InternalError("ptxas produced an empty cubin");
  return cubin;
}

}  // namespace gpu
}  // namespace hloc
