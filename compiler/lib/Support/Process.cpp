//===- Process.cpp - Running a child process without a shell --------------===//

#include "tessera/Support/Process.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace tessera;

std::string ExitStatus::describe() const {
  if (signal)
    return formatString("killed by signal %d (%s)", signal, strsignal(signal));
  return formatString("exit status %d", code);
}

StatusOr<ExitStatus> tessera::runProcess(const std::vector<std::string> &argv,
                                         const ProcessOptions &options) {
  if (argv.empty())
    return invalidArgument("runProcess: no program given");
  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  using Output = ProcessOptions::Output;
  if (options.output != Output::Inherit) {
    const char *path = options.output == Output::Discard
                           ? "/dev/null"
                           : options.outputPath.c_str();
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, path,
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  // What we buffered must not appear after the child's output.
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  int err = options.searchPath ? ::posix_spawnp(&pid, args[0], &actions,
                                                nullptr, args.data(), environ)
                               : ::posix_spawn(&pid, args[0], &actions, nullptr,
                                               args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0)
    return unavailable("cannot run '%s': %s", argv[0].c_str(),
                       std::strerror(err));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return internalError("waitpid for '%s' failed: %s", argv[0].c_str(),
                           std::strerror(errno));
  }
  ExitStatus out;
  if (WIFSIGNALED(status))
    out.signal = WTERMSIG(status);
  else
    out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}
