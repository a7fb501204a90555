//===- Assembler.cpp - PTX to cubin with nvJitLink or ptxas ---------------===//

#include "tessera/Target/CUDA/Assembler.h"

#include "tessera/Support/Files.h"
#include "tessera/Support/Process.h"
#include "tessera/Target/CUDA/CudaLibraries.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace tessera;
using namespace tessera::cuda;

const char *tessera::cuda::assemblerBackendName(AssemblerBackend backend) {
  switch (backend) {
  case AssemblerBackend::kAuto:
    return "auto";
  case AssemblerBackend::kNvJitLink:
    return "nvjitlink";
  case AssemblerBackend::kPtxas:
    return "ptxas";
  }
  return "unknown";
}

Status tessera::cuda::checkRealArch(std::string_view arch) {
  std::string_view digits = arch;
  bool ok = digits.starts_with("sm_");
  if (ok) {
    digits.remove_prefix(3);
    if (!digits.empty() && (digits.back() == 'a' || digits.back() == 'f'))
      digits.remove_suffix(1);
    ok = !digits.empty() && digits.size() <= 4 &&
         digits.find_first_not_of("0123456789") == std::string_view::npos;
  }
  if (!ok)
    return invalidArgument("'%.*s' is not a real GPU architecture "
                           "(expected sm_<N>, e.g. sm_80 or sm_90a)",
                           static_cast<int>(arch.size()), arch.data());
  return okStatus();
}

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

//===----------------------------------------------------------------------===//
// nvJitLink
//===----------------------------------------------------------------------===//

/// Destroys an nvJitLink handle on every return path.
class LinkHandle {
public:
  explicit LinkHandle(const NvJitLinkApi &api) : api(api) {}
  ~LinkHandle() {
    if (handle)
      (void)api.nvJitLinkDestroy(&handle);
  }
  LinkHandle(const LinkHandle &) = delete;
  LinkHandle &operator=(const LinkHandle &) = delete;

  std::string errorLog() const { return readLog(false); }
  std::string infoLog() const { return readLog(true); }

  const NvJitLinkApi &api;
  NvJitLinkHandle handle = nullptr;

private:
  std::string readLog(bool info) const {
    size_t size = 0;
    if (!handle ||
        (info ? api.nvJitLinkGetInfoLogSize(handle, &size)
              : api.nvJitLinkGetErrorLogSize(handle, &size)) !=
            kNvJitLinkSuccess ||
        size == 0)
      return {};
    std::string log(size, '\0');
    if ((info ? api.nvJitLinkGetInfoLog(handle, log.data())
              : api.nvJitLinkGetErrorLog(handle, log.data())) !=
        kNvJitLinkSuccess)
      return {};
    log.resize(std::strlen(log.c_str()));
    return log;
  }
};

/// Errors the caller can fix (bad PTX, options or arch) versus tool failures.
Status nvJitLinkError(NvJitLinkCode result, const char *call,
                      const std::string &log) {
  StatusCode code = StatusCode::kInternal;
  switch (result) {
  case 1:  // UNRECOGNIZED_OPTION
  case 2:  // MISSING_ARCH
  case 3:  // INVALID_INPUT
  case 4:  // PTX_COMPILE
  case 11: // INCOMPATIBLE_OPTIONS
  case 13: // ARCH_MISMATCH
  case 16: // UNRECOGNIZED_ARCH
  case 17: // UNSUPPORTED_ARCH
    code = StatusCode::kInvalidArgument;
    break;
  default:
    break;
  }
  return makeStatus(code, "nvJitLink: %s failed with %s%s%s", call,
                    nvJitLinkResultName(result), log.empty() ? "" : ":\n",
                    log.c_str());
}

StatusOr<CubinResult> assembleWithNvJitLink(const NvJitLinkApi &api,
                                            std::string_view ptx,
                                            std::string_view arch,
                                            const AssembleOptions &options) {
  std::vector<std::string> args;
  args.push_back("-arch=" + std::string(arch));
  // -verbose makes the info log carry ptxas's per-function resource lines.
  args.push_back("-verbose");
  if (options.optLevel == 0 || options.optLevel == 3)
    args.push_back("-O" + std::to_string(options.optLevel));
  else
    args.push_back("-Xptxas=-O" + std::to_string(options.optLevel));
  if (options.maxRegisters)
    args.push_back("-maxrregcount=" + std::to_string(*options.maxRegisters));
  if (options.lineInfo)
    args.push_back("-lineinfo");
  for (const std::string &extra : options.extraPtxasOptions)
    args.push_back("-Xptxas=" + extra);
  std::vector<const char *> argv;
  for (const std::string &arg : args)
    argv.push_back(arg.c_str());

  LinkHandle link(api);
  NvJitLinkCode rc = api.nvJitLinkCreate(
      &link.handle, static_cast<uint32_t>(argv.size()), argv.data());
  if (rc != kNvJitLinkSuccess)
    return nvJitLinkError(rc, "nvJitLinkCreate", link.errorLog());
  // The PTX is handed over NUL-terminated, as nvJitLink expects for text.
  std::string text(ptx);
  rc = api.nvJitLinkAddData(link.handle, kNvJitLinkInputPtx, text.c_str(),
                            text.size() + 1, "tessera.ptx");
  if (rc != kNvJitLinkSuccess)
    return nvJitLinkError(rc, "nvJitLinkAddData", link.errorLog());
  rc = api.nvJitLinkComplete(link.handle);
  if (rc != kNvJitLinkSuccess)
    return nvJitLinkError(rc, "nvJitLinkComplete", link.errorLog());

  size_t size = 0;
  rc = api.nvJitLinkGetLinkedCubinSize(link.handle, &size);
  if (rc != kNvJitLinkSuccess)
    return nvJitLinkError(rc, "nvJitLinkGetLinkedCubinSize", link.errorLog());
  CubinResult result;
  result.cubin.resize(size);
  rc = api.nvJitLinkGetLinkedCubin(link.handle, result.cubin.data());
  if (rc != kNvJitLinkSuccess)
    return nvJitLinkError(rc, "nvJitLinkGetLinkedCubin", link.errorLog());
  std::string log = link.infoLog();
  result.functions = parseResourceLog(log);
  result.usage = summarizeResourceUsage(result.functions, log);
  result.backend = AssemblerBackend::kNvJitLink;
  return result;
}

//===----------------------------------------------------------------------===//
// ptxas
//===----------------------------------------------------------------------===//

StatusOr<CubinResult> assembleWithPtxas(const std::string &ptxas,
                                        std::string_view ptx,
                                        std::string_view arch,
                                        const AssembleOptions &options) {
  TESSERA_ASSIGN_OR_RETURN(TempDir dir, TempDir::create("tessera-ptxas"));
  std::string input = dir.file("kernel.ptx");
  std::string output = dir.file("kernel.cubin");
  std::string logPath = dir.file("ptxas.log");
  TESSERA_RETURN_IF_ERROR(writeFile(input, ptx));

  std::vector<std::string> args = {ptxas, "-v", "--gpu-name", std::string(arch),
                                   "-O" + std::to_string(options.optLevel)};
  if (options.maxRegisters) {
    args.push_back("--maxrregcount");
    args.push_back(std::to_string(*options.maxRegisters));
  }
  if (options.lineInfo)
    args.push_back("-lineinfo");
  for (const std::string &extra : options.extraPtxasOptions)
    args.push_back(extra);
  args.insert(args.end(), {"-o", output, input});

  ProcessOptions po;
  po.output = ProcessOptions::Output::File;
  po.outputPath = logPath;
  TESSERA_ASSIGN_OR_RETURN(ExitStatus status, runProcess(args, po));
  StatusOr<std::string> log = readFile(logPath);
  std::string logText = log.ok() ? *log : std::string();
  if (status.signal)
    return internalError("ptxas '%s' was killed by signal %d:\n%s",
                         ptxas.c_str(), status.signal, logText.c_str());
  if (status.code != 0)
    return invalidArgument("ptxas failed (exit status %d):\n%s", status.code,
                           logText.c_str());

  CubinResult result;
  TESSERA_ASSIGN_OR_RETURN(result.cubin, readFile(output));
  result.functions = parseResourceLog(logText);
  result.usage = summarizeResourceUsage(result.functions, logText);
  result.backend = AssemblerBackend::kPtxas;
  result.wholeProgram = true;
  return result;
}

} // namespace

StatusOr<std::string> tessera::cuda::findPtxas() {
  if (const char *override = std::getenv("TESSERA_PTXAS");
      override && *override) {
    if (isExecutable(override))
      return std::string(override);
    return unavailable("ptxas: $TESSERA_PTXAS='%s' is not an executable file",
                       override);
  }
  std::vector<std::string> dirs;
  if (const char *path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (true) {
      size_t colon = rest.find(':');
      std::string_view dir = rest.substr(0, colon);
      if (!dir.empty())
        dirs.emplace_back(dir);
      if (colon == std::string_view::npos)
        break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    dirs.push_back(std::string(home) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  for (const std::string &dir : dirs) {
    std::string candidate = dir + "/ptxas";
    if (isExecutable(candidate))
      return candidate;
  }
  return unavailable("ptxas executable not found ($TESSERA_PTXAS unset; "
                     "searched PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)");
}

Status tessera::cuda::assemblerAvailable(AssemblerBackend backend) {
  switch (backend) {
  case AssemblerBackend::kNvJitLink:
    return loadNvJitLink().status();
  case AssemblerBackend::kPtxas:
    return findPtxas().status();
  case AssemblerBackend::kAuto: {
    StatusOr<std::string> ptxas = findPtxas();
    if (ptxas.ok())
      return okStatus();
    StatusOr<const NvJitLinkApi *> api = loadNvJitLink();
    if (api.ok())
      return okStatus();
    return unavailable("no PTX assembler: %s; %s",
                       ptxas.status().message().c_str(),
                       api.status().message().c_str());
  }
  }
  return internalError("unknown assembler backend");
}

StatusOr<CubinResult>
tessera::cuda::assemblePtx(std::string_view ptx, std::string_view arch,
                           const AssembleOptions &options) {
  TESSERA_RETURN_IF_ERROR(checkRealArch(arch));
  if (options.optLevel < 0 || options.optLevel > 3)
    return invalidArgument("ptxas optimisation level %d is not in 0..3",
                           options.optLevel);
  auto start = std::chrono::steady_clock::now();
  StatusOr<CubinResult> result = unavailable("no assembler tried");
  if (options.backend == AssemblerBackend::kNvJitLink) {
    TESSERA_ASSIGN_OR_RETURN(const NvJitLinkApi *api, loadNvJitLink());
    result = assembleWithNvJitLink(*api, ptx, arch, options);
  } else {
    StatusOr<std::string> ptxas = findPtxas();
    if (ptxas.ok()) {
      result = assembleWithPtxas(*ptxas, ptx, arch, options);
    } else if (options.backend == AssemblerBackend::kPtxas) {
      return ptxas.status();
    } else {
      // kAuto: only a missing executable falls back to the library; an
      // assembly error from ptxas is the answer.
      StatusOr<const NvJitLinkApi *> api = loadNvJitLink();
      if (!api.ok())
        return unavailable("no PTX assembler: %s; %s",
                           ptxas.status().message().c_str(),
                           api.status().message().c_str());
      result = assembleWithNvJitLink(**api, ptx, arch, options);
    }
  }
  if (result.ok())
    result->seconds = secondsSince(start);
  return result;
}
