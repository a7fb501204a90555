//===- BenchCliUtil.h - Running tessera-bench from a test -------*- C++ -*-===//
//
// A scratch folder per test process (removed when the tests end), the exit
// status of `tessera-bench ARGS` (TESSERA_BENCH_BINARY) with its output in
// the scratch folder's out.txt, and that output.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TESTS_BENCH_CLI_UTIL_H
#define TESSERA_TESTS_BENCH_CLI_UTIL_H

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace tessera::bench::testing {

inline std::string tempDir() {
  static std::string dir = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("tessera-bench-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

/// Removes the scratch folder when the tests are done.
class ScratchCleanup : public ::testing::Environment {
public:
  void TearDown() override { std::filesystem::remove_all(tempDir()); }
};
inline ::testing::Environment *const kScratchCleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

/// Exit status of `tessera-bench args` (tuning cache in the scratch
/// folder); its output goes to out.txt there.
inline int run(const std::string &args) {
  std::string cmd = "TESSERA_CACHE_DIR=" + tempDir() + "/cache " +
                    TESSERA_BENCH_BINARY + " " + args + " > " + tempDir() +
                    "/out.txt 2>&1";
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/// What the last run() printed.
inline std::string outputText() {
  std::ifstream out(tempDir() + "/out.txt");
  return std::string((std::istreambuf_iterator<char>(out)),
                     std::istreambuf_iterator<char>());
}

} // namespace tessera::bench::testing

#endif // TESSERA_TESTS_BENCH_CLI_UTIL_H
