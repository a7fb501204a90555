//===- ReplayMain.cpp - Re-runs fuzz inputs without libFuzzer -------------===//
//
//   tessera-fuzz-replay <file-or-directory>...
//
// Feeds every file (directories: every regular file in them, recursively,
// in sorted order) to the frontend fuzz target's LLVMFuzzerTestOneInput.
// Built in ordinary (non-clang, non-fuzzer) builds and registered as the
// `fuzz-regressions` ctest, so the saved reproducers in
// tests/fuzz/regressions/ are rechecked by `make test`. A regression shows
// up as a crash, a sanitizer report (asan preset) or an abort.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <file-or-directory>...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p(argv[i]);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto &e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().filename() != "README.md")
          files.push_back(e.path());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "error: no such file or directory: %s\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path &f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "error: cannot read %s\n", f.c_str());
      return 2;
    }
    std::string data((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay %s (%zu bytes)\n", f.c_str(), data.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(data.data()),
                           data.size());
  }
  std::printf("tessera-fuzz-replay: %zu input(s) ran cleanly\n", files.size());
  return 0;
}
