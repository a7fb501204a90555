//===- Process.h - Running a child process without a shell -----*- C++ -*-===//
//
// Plain C++ (no LLVM): the one place Tessera starts programs (ptxas, the
// report's Python script). An argument vector goes to posix_spawn, so no
// shell ever sees a file name.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_SUPPORT_PROCESS_H
#define TESSERA_SUPPORT_PROCESS_H

#include "tessera/Support/Status.h"

#include <string>
#include <vector>

namespace tessera {

/// How a child process ended.
struct ExitStatus {
  int code = 0;   ///< exit code when `signal` is 0
  int signal = 0; ///< the signal that ended it, or 0
  bool success() const { return signal == 0 && code == 0; }
  /// "exit status 3" or "killed by signal 9 (Killed)".
  std::string describe() const;
};

struct ProcessOptions {
  /// Where the child's stdout and stderr go.
  enum class Output {
    Inherit, ///< ours
    Discard, ///< /dev/null
    File     ///< `outputPath`, created or truncated (mode 0600)
  };
  Output output = Output::Inherit;
  std::string outputPath;
  /// argv[0] is looked up on PATH when it contains no slash.
  bool searchPath = false;
};

/// Runs `argv` with stdin from /dev/null and waits for it. UNAVAILABLE when
/// it cannot be started (not found, not executable), INTERNAL when waiting
/// fails; otherwise how it ended.
StatusOr<ExitStatus> runProcess(const std::vector<std::string> &argv,
                                const ProcessOptions &options = {});

} // namespace tessera

#endif // TESSERA_SUPPORT_PROCESS_H
