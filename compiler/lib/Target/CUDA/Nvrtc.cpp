//===- Nvrtc.cpp - CUDA C++ to PTX and cubin with NVRTC -------------------===//

#include "tessera/Target/CUDA/Nvrtc.h"

#include "tessera/Target/CUDA/Assembler.h"
#include "tessera/Target/CUDA/CudaLibraries.h"

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace tessera;
using namespace tessera::cuda;

namespace {

/// Destroys an NVRTC program on every return path and reads its outputs.
class Program {
public:
  explicit Program(const NvrtcApi &api) : api(api) {}
  ~Program() {
    if (program)
      (void)api.nvrtcDestroyProgram(&program);
  }
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  Status check(NvrtcCode rc, const char *call) const {
    if (rc == kNvrtcSuccess)
      return okStatus();
    return internalError("NVRTC: %s failed with %s", call,
                         api.nvrtcGetErrorString(rc));
  }

  std::string log() const {
    size_t size = 0;
    if (api.nvrtcGetProgramLogSize(program, &size) != kNvrtcSuccess ||
        size == 0)
      return {};
    std::string text(size, '\0');
    if (api.nvrtcGetProgramLog(program, text.data()) != kNvrtcSuccess)
      return {};
    text.resize(std::strlen(text.c_str()));
    return text;
  }

  /// PTX (a NUL-terminated text; the terminator is dropped) or cubin bytes.
  StatusOr<std::string> output(bool cubin) const {
    size_t size = 0;
    TESSERA_RETURN_IF_ERROR(
        check(cubin ? api.nvrtcGetCUBINSize(program, &size)
                    : api.nvrtcGetPTXSize(program, &size),
              cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize"));
    std::string bytes(size, '\0');
    if (size == 0)
      return bytes;
    TESSERA_RETURN_IF_ERROR(check(cubin
                                      ? api.nvrtcGetCUBIN(program, bytes.data())
                                      : api.nvrtcGetPTX(program, bytes.data()),
                                  cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX"));
    if (!cubin)
      bytes.resize(std::strlen(bytes.c_str()));
    return bytes;
  }

  const NvrtcApi &api;
  NvrtcProgram program = nullptr;
};

bool hasOption(const std::vector<std::string> &options,
               std::initializer_list<std::string_view> prefixes) {
  return std::any_of(options.begin(), options.end(),
                     [&](const std::string &option) {
                       for (std::string_view prefix : prefixes)
                         if (std::string_view(option).starts_with(prefix))
                           return true;
                       return false;
                     });
}

} // namespace

Status tessera::cuda::nvrtcAvailable() { return loadNvrtc().status(); }

StatusOr<NvrtcResult> tessera::cuda::compileCuda(std::string_view source,
                                                 std::string_view name,
                                                 const NvrtcOptions &options) {
  bool realArch = std::string_view(options.arch).starts_with("sm_");
  if (realArch) {
    TESSERA_RETURN_IF_ERROR(checkRealArch(options.arch));
  } else if (!std::string_view(options.arch).starts_with("compute_")) {
    return invalidArgument("NVRTC: '%s' is neither a real (sm_<N>) nor a "
                           "virtual (compute_<N>) architecture",
                           options.arch.c_str());
  }
  if (hasOption(options.options, {"-arch", "--gpu-architecture"}))
    return invalidArgument(
        "NVRTC: pass the architecture in NvrtcOptions::arch, "
        "not as an option");
  TESSERA_ASSIGN_OR_RETURN(const NvrtcApi *api, loadNvrtc());
  auto start = std::chrono::steady_clock::now();

  std::vector<const char *> headerNames, headerContents;
  for (const auto &[headerName, contents] : options.headers) {
    headerNames.push_back(headerName.c_str());
    headerContents.push_back(contents.c_str());
  }
  std::string text(source);
  std::string fileName(name);

  // For a real arch NVRTC also runs ptxas; -Xptxas=-v puts its resource lines
  // into the program log. An NVRTC that rejects the option is retried
  // without it and the PTX is assembled separately.
  bool wantPtxasLog = realArch && !hasOption(options.options, {"-Xptxas=-v"});
  for (int attempt = 0; attempt < 2; ++attempt) {
    Program program(*api);
    TESSERA_RETURN_IF_ERROR(program.check(
        api->nvrtcCreateProgram(&program.program, text.c_str(),
                                fileName.c_str(),
                                static_cast<int>(headerNames.size()),
                                headerContents.data(), headerNames.data()),
        "nvrtcCreateProgram"));
    for (const std::string &expr : options.nameExpressions)
      TESSERA_RETURN_IF_ERROR(program.check(api->nvrtcAddNameExpression(
                                                program.program, expr.c_str()),
                                            "nvrtcAddNameExpression"),
                              "name expression '%s'", expr.c_str());

    std::vector<std::string> args = {"-arch=" + options.arch};
    if (wantPtxasLog)
      args.push_back("-Xptxas=-v");
    args.insert(args.end(), options.options.begin(), options.options.end());
    std::vector<const char *> argv;
    for (const std::string &arg : args)
      argv.push_back(arg.c_str());

    NvrtcCode rc = api->nvrtcCompileProgram(
        program.program, static_cast<int>(argv.size()), argv.data());
    std::string log = program.log();
    if (rc == kNvrtcErrorInvalidOption && wantPtxasLog && attempt == 0) {
      wantPtxasLog = false;
      continue;
    }
    if (rc == kNvrtcErrorCompilation || rc == kNvrtcErrorInvalidOption)
      return invalidArgument("NVRTC: compiling '%s' failed with %s:\n%s",
                             fileName.c_str(), api->nvrtcGetErrorString(rc),
                             log.c_str());
    TESSERA_RETURN_IF_ERROR(program.check(rc, "nvrtcCompileProgram"),
                            "compiling '%s'%s%s", fileName.c_str(),
                            log.empty() ? "" : "; log:\n", log.c_str());

    NvrtcResult result;
    result.log = std::move(log);
    TESSERA_ASSIGN_OR_RETURN(result.ptx, program.output(false));
    if (realArch) {
      TESSERA_ASSIGN_OR_RETURN(result.cubin, program.output(true));
    }
    for (const std::string &expr : options.nameExpressions) {
      const char *lowered = nullptr;
      TESSERA_RETURN_IF_ERROR(
          program.check(
              api->nvrtcGetLoweredName(program.program, expr.c_str(), &lowered),
              "nvrtcGetLoweredName"),
          "name expression '%s'", expr.c_str());
      result.loweredNames[expr] = lowered ? lowered : "";
    }

    if (realArch) {
      result.functions = parseResourceLog(result.log);
      if (result.cubin.empty() || result.functions.empty()) {
        // This NVRTC gave no cubin or no resource lines: assemble the PTX.
        TESSERA_ASSIGN_OR_RETURN(CubinResult assembled,
                                 assemblePtx(result.ptx, options.arch));
        result.cubin = std::move(assembled.cubin);
        result.functions = std::move(assembled.functions);
        result.usage = std::move(assembled.usage);
      } else {
        result.usage = summarizeResourceUsage(result.functions, result.log);
      }
    }
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return result;
  }
  return internalError("NVRTC: compiling '%s' did not converge",
                       fileName.c_str());
}
