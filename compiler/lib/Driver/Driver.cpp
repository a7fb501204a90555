//===- Driver.cpp - Compiling tile-language kernels -----------------------===//

#include "tessera/Driver/Driver.h"
#include "tessera/Support/Hash.h"

#include "tessera/Frontend/Parser.h"
#include "tessera/Sema/MLIRGen.h"
#include "tessera/Sema/Signature.h"
#include "tessera/Target/CPU/Pipeline.h"
#include "tessera/Target/CUDA/Assembler.h"
#include "tessera/Target/CUDA/Occupancy.h"
#include "tessera/Target/GPU/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Parser/Parser.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <optional>

using namespace tessera;
using namespace tessera::driver;

namespace {
double millisSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

} // namespace

struct SourceModule::Impl {
  std::string name;
  SourceManager sm;
  uint32_t fileId = 0;
  std::unique_ptr<ast::Module> ast;
  sema::ConstEnv constants;
  std::vector<sema::KernelDecl> kernels;
  uint64_t hash = 0;
  double parseMs = 0;
  std::string warnings;

  const sema::KernelDecl *find(const std::string &n) const {
    for (const auto &k : kernels)
      if (k.info.name == n)
        return &k;
    return nullptr;
  }
};

namespace {
/// Parses a restriction string as an expression; null on syntax errors.
std::unique_ptr<ast::Module> parseRestriction(SourceManager &sm,
                                              const std::string &text,
                                              const ast::Expr **expr) {
  uint32_t id = sm.addFile("<restrict>", "__r = " + text + "\n");
  DiagnosticEngine diags(sm);
  auto mod = parseModule(sm, id, diags);
  if (diags.hasErrors() || mod->body.size() != 1)
    return nullptr;
  auto *assign = llvm::dyn_cast<ast::AssignStmt>(mod->body[0].get());
  if (!assign || assign->targets.size() != 1)
    return nullptr;
  *expr = assign->value.get();
  return mod;
}

/// Evaluates the grid (shape symbols bound to 1024) and the restrictions
/// (every space entry at its first value) of a kernel's default
/// specialisation, so that undefined names, non-integer grids and malformed
/// restrictions are reported with the source instead of at launch.
void checkGridAndRestrictions(const sema::KernelDecl &d,
                              const sema::ConstEnv &constants,
                              DiagnosticEngine &diags) {
  std::string err;
  Specialization spec;
  // Generic dtypes beyond dtype/accum_dtype get a placeholder.
  for (const std::string &g : d.info.genericDTypes)
    if (g != "dtype" && g != "accum_dtype")
      spec.constants[g] = ConstValue::dtype(DType::F32);
  auto env = sema::bindSpecialization(d, constants, spec, &err);
  if (!env)
    return; // reported when the kernel is compiled
  SourceLoc defLoc{d.fn->loc().file, d.info.line, 1, 1};
  for (const std::string &sym : d.info.shapeSymbols)
    (*env)[sym] = ConstValue::integer(1024);
  for (const ast::Expr *e : d.grid) {
    sema::ConstResult r = sema::evalConst(*e, *env);
    if (!r.ok())
      diags.error(r.loc.isValid() ? r.loc : e->loc(), "in grid: " + r.error);
    else if (!r.value->isInt())
      diags.error(e->loc(),
                  "grid extents must be integers, got " + r.value->toString());
  }
  if (!d.info.autotune)
    return;
  for (const std::string &text : d.info.autotune->restrictions) {
    SourceManager sm;
    const ast::Expr *expr = nullptr;
    auto mod = parseRestriction(sm, text, &expr);
    if (!mod) {
      diags.error(defLoc, "restriction '" + text + "' of kernel '" +
                              d.info.name + "' is not an expression");
      continue;
    }
    sema::ConstResult r = sema::evalConst(*expr, *env);
    if (!r.ok())
      diags.error(defLoc, "restriction '" + text + "' of kernel '" +
                              d.info.name + "': " + r.error);
  }
}
} // namespace

SourceModule::SourceModule() : impl_(std::make_unique<Impl>()) {}
SourceModule::~SourceModule() = default;

StatusOr<std::shared_ptr<const SourceModule>>
SourceModule::parse(std::string name, std::string text) {
  auto t0 = std::chrono::steady_clock::now();
  std::shared_ptr<SourceModule> m(new SourceModule());
  Impl &I = *m->impl_;
  I.name = name;
  I.hash = fnv1a(text);
  I.fileId = I.sm.addFile(std::move(name), std::move(text));
  DiagnosticEngine diags(I.sm);
  I.ast = parseModule(I.sm, I.fileId, diags);
  if (!diags.hasErrors()) {
    I.constants = sema::collectModuleConstants(*I.ast, diags);
    for (const auto &s : I.ast->body) {
      auto *fn = llvm::dyn_cast<ast::FunctionDef>(s.get());
      if (!fn || !sema::isKernelDefinition(*fn))
        continue;
      if (auto decl = sema::analyzeKernel(*fn, I.constants, diags)) {
        decl->threadLevelCall = sema::findThreadLevelCall(*I.ast, *fn);
        decl->info.simt = decl->threadLevelCall.isValid();
        checkGridAndRestrictions(*decl, I.constants, diags);
        I.kernels.push_back(std::move(*decl));
      }
    }
  }
  if (diags.hasErrors())
    return Status(StatusCode::kInvalidArgument, diags.render());
  I.warnings = diags.render();
  I.parseMs = millisSince(t0);
  return std::shared_ptr<const SourceModule>(std::move(m));
}

const std::string &SourceModule::name() const { return impl_->name; }
uint64_t SourceModule::sourceHash() const { return impl_->hash; }
std::string_view SourceModule::text() const {
  return impl_->sm.getText(impl_->fileId);
}
double SourceModule::parseMillis() const { return impl_->parseMs; }
const std::string &SourceModule::warnings() const { return impl_->warnings; }

std::vector<const KernelInfo *> SourceModule::kernels() const {
  std::vector<const KernelInfo *> out;
  for (const auto &k : impl_->kernels)
    out.push_back(&k.info);
  return out;
}

const KernelInfo *SourceModule::findKernel(const std::string &n) const {
  const sema::KernelDecl *d = impl_->find(n);
  return d ? &d->info : nullptr;
}

namespace {
/// `ptx` with `directive` after the `.maxntid` directive of every entry,
/// unless some entry already has a directive named like it (then `ptx`
/// unchanged).
std::string withEntryDirective(const std::string &ptx,
                               const std::string &directive) {
  if (ptx.find(directive.substr(0, directive.find(' '))) != std::string::npos)
    return ptx;
  std::string out;
  out.reserve(ptx.size() + 64);
  size_t pos = 0;
  while (pos < ptx.size()) {
    size_t end = ptx.find('\n', pos);
    end = end == std::string::npos ? ptx.size() : end + 1;
    std::string_view line(ptx.data() + pos, end - pos);
    out.append(line);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos &&
        line.substr(first).starts_with(".maxntid")) {
      if (out.back() != '\n')
        out += '\n';
      out += directive + "\n";
    }
    pos = end;
  }
  return out;
}

/// Bytes of machine code in `cubin`: the sizes of its executable sections
/// (0 when it cannot be read as ELF).
uint64_t codeBytes(const std::string &cubin) {
  llvm::MemoryBufferRef buffer(llvm::StringRef(cubin.data(), cubin.size()),
                               "cubin");
  auto elf = llvm::object::ELF64LEObjectFile::create(buffer);
  if (!elf) {
    llvm::consumeError(elf.takeError());
    return 0;
  }
  uint64_t bytes = 0;
  for (const llvm::object::SectionRef &section : elf->sections())
    if (section.isText())
      bytes += section.getSize();
  return bytes;
}

int64_t spillBytes(const cuda::CubinResult &c) {
  return c.usage.spillStores + c.usage.localBytes;
}

/// Whole-program ptxas aims at an occupancy of its own (e.g. two 512-thread
/// blocks per SM, 64 registers) without knowing the dynamic shared memory,
/// which often allows only one, and spills to reach it. Then `ptx` is
/// assembled again with `.minnctapersm 1`, which lets it use registers up
/// to the block-size limit, and `cubin` becomes that one when it spills
/// less. Returns whether it did.
bool reassembleWithOneBlockPerSm(const std::string &ptx,
                                 const std::string &arch,
                                 const cuda::AssembleOptions &assemble,
                                 cuda::CubinResult &cubin) {
  std::string hinted = withEntryDirective(ptx, ".minnctapersm 1");
  if (hinted == ptx)
    return false;
  auto retry = cuda::assemblePtx(hinted, arch, assemble);
  if (!retry.ok() || spillBytes(*retry) >= spillBytes(cubin))
    return false;
  cubin = std::move(*retry);
  return true;
}

/// ptxas does not aim at an occupancy step either: a kernel a few registers
/// above one (layer norm in f16 over a 4096-element row on sm_80: 64
/// registers, eight 128-thread blocks per SM where 56 fit nine) runs fewer
/// blocks than its code needs. Then `ptx` is assembled again with the
/// step's count as `.maxnreg`, and `cubin` becomes that one when it spills
/// nothing and its code grows by at most 5%. A step more than 15% below is
/// not tried, which saves an assembly that would spill (the same kernel in
/// f32 takes 63 and spills at 56, 11% below). Returns the cap taken, or 0.
int reassembleAtOccupancyStep(const std::string &ptx, const std::string &arch,
                              const cuda::AssembleOptions &assemble,
                              int blockSize, int64_t tileShared,
                              cuda::CubinResult &cubin) {
  std::optional<cuda::SmLimits> limits = cuda::smLimits(arch);
  if (!limits)
    return 0;
  int regs = cubin.usage.registers;
  std::optional<int> cap = cuda::registerCapForOneMoreBlock(
      *limits, blockSize, regs, cubin.usage.sharedBytes + tileShared);
  if (!cap || *cap * 20 < regs * 17)
    return 0;
  std::string capped =
      withEntryDirective(ptx, ".maxnreg " + std::to_string(*cap));
  if (capped == ptx)
    return 0;
  auto retry = cuda::assemblePtx(capped, arch, assemble);
  uint64_t before = codeBytes(cubin.cubin);
  if (!retry.ok() || spillBytes(*retry) != 0 || retry->usage.registers > *cap ||
      before == 0 || codeBytes(retry->cubin) * 20 > before * 21)
    return 0;
  cubin = std::move(*retry);
  return *cap;
}

Status unknownKernel(const SourceModule &m, const std::string &kernel) {
  std::string names;
  for (const KernelInfo *k : m.kernels())
    names += (names.empty() ? "" : ", ") + k->name;
  return notFound("no kernel '%s' in %s (kernels: %s)", kernel.c_str(),
                  m.name().c_str(), names.empty() ? "none" : names.c_str());
}
} // namespace

/// The names a grid or heuristic expression of `d` sees at a launch: the
/// specialisation's constants (bindSpecialization) and the shape symbols.
static StatusOr<sema::ConstEnv>
launchEnv(const sema::KernelDecl &d, const sema::ConstEnv &moduleConstants,
          const Specialization &spec,
          const std::vector<std::pair<std::string, int64_t>> &shapes) {
  std::string err;
  auto env = sema::bindSpecialization(d, moduleConstants, spec, &err);
  if (!env)
    return invalidArgument("%s", err.c_str());
  for (auto &[sym, v] : shapes)
    (*env)[sym] = ConstValue::integer(v);
  return std::move(*env);
}

StatusOr<std::vector<int64_t>> SourceModule::evaluateGrid(
    const std::string &kernel, const Specialization &spec,
    const std::vector<std::pair<std::string, int64_t>> &shapes) const {
  const sema::KernelDecl *d = impl_->find(kernel);
  if (!d)
    return unknownKernel(*this, kernel);
  if (d->grid.empty())
    return failedPrecondition(
        "kernel '%s' declares no grid; pass one at launch", kernel.c_str());
  TESSERA_ASSIGN_OR_RETURN(auto env,
                           launchEnv(*d, impl_->constants, spec, shapes));
  std::vector<int64_t> grid;
  for (const ast::Expr *e : d->grid) {
    sema::ConstResult r = sema::evalConst(*e, env);
    if (!r.ok())
      return invalidArgument("grid of '%s': %s", kernel.c_str(),
                             r.error.c_str());
    if (!r.value->isInt())
      return invalidArgument("grid of '%s' must be integers, got %s",
                             kernel.c_str(), r.value->toString().c_str());
    if (r.value->getInt() < 0)
      return invalidArgument("grid of '%s' is negative (%lld)", kernel.c_str(),
                             (long long)r.value->getInt());
    grid.push_back(r.value->getInt());
  }
  return grid;
}

std::array<int64_t, 3>
SourceModule::index32GridBound(const std::string &kernel,
                               const Specialization &spec) const {
  std::array<int64_t, 3> bound{kNoGridBound, kNoGridBound, kNoGridBound};
  const sema::KernelDecl *d = impl_->find(kernel);
  if (!d)
    return bound;
  std::vector<std::pair<std::string, int64_t>> shapes;
  for (const std::string &sym : d->info.shapeSymbols)
    shapes.emplace_back(sym, std::numeric_limits<int32_t>::max());
  auto env = launchEnv(*d, impl_->constants, spec, shapes);
  if (!env.ok())
    return bound;
  for (size_t i = 0; i < d->grid.size() && i < bound.size(); ++i) {
    sema::ConstResult r = sema::evalConst(*d->grid[i], *env);
    if (r.ok() && r.value->isInt() && r.value->getInt() >= 0)
      bound[i] = std::min(r.value->getInt(), kNoGridBound);
  }
  return bound;
}

StatusOr<std::vector<std::pair<std::string, ConstValue>>>
SourceModule::evaluateHeuristics(
    const std::string &kernel, const Specialization &spec,
    const std::vector<std::pair<std::string, int64_t>> &shapes) const {
  const sema::KernelDecl *d = impl_->find(kernel);
  if (!d)
    return unknownKernel(*this, kernel);
  std::vector<std::pair<std::string, ConstValue>> out;
  if (d->heuristics.empty())
    return out;
  // The expressions see the specialisation without their own names (the
  // parameters' defaults would otherwise shadow nothing useful).
  Specialization base = spec;
  for (const auto &[name, expr] : d->heuristics)
    base.constants.erase(name);
  TESSERA_ASSIGN_OR_RETURN(auto env,
                           launchEnv(*d, impl_->constants, base, shapes));
  for (const auto &[name, expr] : d->heuristics) {
    sema::ConstResult r = sema::evalConst(*expr, env);
    if (!r.ok())
      return invalidArgument("@heuristics %s of '%s': %s", name.c_str(),
                             kernel.c_str(), r.error.c_str());
    if (!r.value->isBool() && !r.value->isInt())
      return invalidArgument("@heuristics %s of '%s' must be a bool or an "
                             "integer, got %s",
                             name.c_str(), kernel.c_str(),
                             r.value->toString().c_str());
    env[name] = *r.value;
    out.emplace_back(name, *r.value);
  }
  return out;
}

StatusOr<bool>
SourceModule::satisfiesRestrictions(const std::string &kernel,
                                    const Specialization &spec) const {
  const sema::KernelDecl *d = impl_->find(kernel);
  if (!d)
    return unknownKernel(*this, kernel);
  if (!d->info.autotune)
    return true;
  std::string err;
  auto env = sema::bindSpecialization(*d, impl_->constants, spec, &err);
  if (!env)
    return invalidArgument("%s", err.c_str());
  for (const std::string &text : d->info.autotune->restrictions) {
    SourceManager sm;
    const ast::Expr *expr = nullptr;
    auto mod = parseRestriction(sm, text, &expr);
    if (!mod)
      return invalidArgument("bad restriction '%s'", text.c_str());
    sema::ConstResult r = sema::evalConst(*expr, *env);
    if (!r.ok())
      return invalidArgument("restriction '%s': %s", text.c_str(),
                             r.error.c_str());
    if (!r.value->truthy())
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Compilation
//===----------------------------------------------------------------------===//

namespace {
/// Emits tile IR for a kernel; errors come back rendered.
StatusOr<mlir::OwningOpRef<mlir::ModuleOp>>
emitTileModule(mlir::MLIRContext &ctx, const SourceModule &module,
               const std::string &kernel, const Specialization &spec,
               sema::EmittedKernel *meta, StageTimes *times,
               std::string *warnings = nullptr) {
  const auto &I = module.impl();
  const sema::KernelDecl *d = I.find(kernel);
  if (!d)
    return unknownKernel(module, kernel);
  auto t0 = std::chrono::steady_clock::now();
  std::string err;
  auto env = sema::bindSpecialization(*d, I.constants, spec, &err);
  if (!env)
    return invalidArgument("%s", err.c_str());
  DiagnosticEngine diags(I.sm);
  sema::EmittedKernel k =
      sema::emitKernel(ctx, *I.ast, *d, *env, spec, I.sm, diags);
  if (times)
    times->sema = millisSince(t0);
  if (diags.hasErrors() || !k.module)
    return invalidArgument("%s", diags.render().c_str());
  if (warnings)
    *warnings = diags.render();
  auto mod = std::move(k.module);
  // What the launch guarantees about program ids, on the kernel function.
  mlir::Builder b(&ctx);
  llvm::SmallVector<mlir::NamedAttribute> launch;
  // Under index32 the launch keeps every grid axis within
  // index32GridBound, which the GPU lowering takes as the range of
  // program_id (tile.grid_bound).
  if (spec.index32)
    launch.push_back(b.getNamedAttr(
        "tile.grid_bound",
        b.getDenseI64ArrayAttr(module.index32GridBound(kernel, spec))));
  // A launch on the declared grid keeps program_id(i) below the extent of
  // the shape symbol grid axis i names, if it names one (tile.grid_symbols,
  // for tessera-fold-grid-bounds).
  if (spec.declaredGrid) {
    llvm::SmallVector<mlir::Attribute> names;
    bool any = false;
    for (const ast::Expr *g : d->grid) {
      std::string sym;
      if (auto *n = llvm::dyn_cast<ast::NameExpr>(g))
        if (llvm::is_contained(d->info.shapeSymbols, n->name))
          sym = n->name;
      any |= !sym.empty();
      names.push_back(b.getStringAttr(sym));
    }
    if (any)
      launch.push_back(
          b.getNamedAttr("tile.grid_symbols", b.getArrayAttr(names)));
  }
  if (!launch.empty())
    mod->walk([&](mlir::func::FuncOp f) {
      if (f->hasAttr("tile.kernel"))
        for (const mlir::NamedAttribute &a : launch)
          f->setAttr(a.getName(), a.getValue());
    });
  if (meta) {
    meta->abi = k.abi;
    meta->numWarps = k.numWarps;
    meta->numStages = k.numStages;
  }
  t0 = std::chrono::steady_clock::now();
  TESSERA_RETURN_IF_ERROR(cpu::runTilePasses(*mod));
  if (times)
    times->tilePasses = millisSince(t0);
  return mod;
}

/// The program schedule of kernel `f` (see outlineKernel).
ProgramSchedule scheduleOf(mlir::gpu::GPUFuncOp f) {
  ProgramSchedule s;
  s.logicalGrid = f->hasAttr("tile.logical_grid");
  s.persistent = f->hasAttr("tile.persistent");
  if (auto g = f->getAttrOfType<mlir::IntegerAttr>("tile.program_group"))
    s.group = g.getInt();
  return s;
}

/// The tensor maps a lowered kernel takes (`tile.tensor_maps`).
std::vector<TensorMapArg> tensorMapsOf(mlir::gpu::GPUFuncOp f,
                                       const std::vector<AbiArg> &abi) {
  std::vector<TensorMapArg> maps;
  auto attr = f->getAttrOfType<mlir::ArrayAttr>("tile.tensor_maps");
  if (!attr)
    return maps;
  for (mlir::Attribute a : attr) {
    auto d = mlir::cast<mlir::DictionaryAttr>(a);
    TensorMapArg m;
    m.arg = int(d.getAs<mlir::IntegerAttr>("source").getInt());
    llvm::append_range(m.box,
                       d.getAs<mlir::DenseI64ArrayAttr>("box").asArrayRef());
    m.swizzle = int(d.getAs<mlir::IntegerAttr>("swizzle").getInt());
    if (m.arg >= 0 && size_t(m.arg) < abi.size())
      m.param = abi[size_t(m.arg)].param;
    maps.push_back(std::move(m));
  }
  return maps;
}

std::string printOp(mlir::Operation *op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  op->print(os);
  return s;
}
} // namespace

StatusOr<std::string>
driver::emit(const SourceModule &module, const std::string &kernel,
             const Specialization &spec, EmitKind kind, StageTimes *times,
             const GpuEmitOptions &gpuOptions, GpuResources *resources,
             std::string *warnings) {
  if (times)
    times->parse = module.parseMillis();
  if (kind == EmitKind::AST) {
    if (!module.findKernel(kernel))
      return unknownKernel(module, kernel);
    return ast::printModule(*module.impl().ast);
  }
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  cpu::prepareContext(ctx);
  sema::EmittedKernel meta;
  TESSERA_ASSIGN_OR_RETURN(auto mod, emitTileModule(ctx, module, kernel, spec,
                                                    &meta, times, warnings));
  if (kind == EmitKind::Tile)
    return printOp(*mod);
  if (kind == EmitKind::GPU || kind == EmitKind::PTX ||
      kind == EmitKind::Cubin) {
    auto archOr = gpu::lookupArch(gpuOptions.arch);
    if (!archOr.ok())
      return archOr.status();
    const gpu::GpuArch &arch = *archOr;
    auto t0 = std::chrono::steady_clock::now();
    TESSERA_RETURN_IF_ERROR(gpu::lowerToGPUDialect(*mod, arch));
    if (times)
      times->lowering = millisSince(t0);
    if (kind == EmitKind::GPU)
      return printOp(*mod);
    int64_t tileShared = gpu::sharedBytes(*mod);
    int blockSize = 0;
    std::vector<TensorMapArg> tensorMaps;
    ProgramSchedule schedule;
    mod->walk([&](mlir::gpu::GPUFuncOp f) {
      if (auto known = f.getKnownBlockSizeAttr())
        blockSize = known[0];
      if (f.getName() == kernel) {
        tensorMaps = tensorMapsOf(f, meta.abi);
        schedule = scheduleOf(f);
      }
    });
    t0 = std::chrono::steady_clock::now();
    auto ptx = gpu::translateToPTX(*mod, arch);
    if (times)
      times->codegen = millisSince(t0);
    if (!ptx.ok())
      return ptx;
    // What a launch of the PTX needs beside it (the driver assembles it).
    if (kind == EmitKind::PTX) {
      if (resources) {
        resources->tileSharedBytes = tileShared;
        resources->blockSize = blockSize;
        resources->tensorMaps = std::move(tensorMaps);
        resources->schedule = schedule;
      }
      return ptx;
    }
    t0 = std::chrono::steady_clock::now();
    cuda::AssembleOptions assemble;
    if (gpuOptions.assembler == "ptxas")
      assemble.backend = cuda::AssemblerBackend::kPtxas;
    else if (gpuOptions.assembler == "nvjitlink")
      assemble.backend = cuda::AssemblerBackend::kNvJitLink;
    else if (gpuOptions.assembler != "auto")
      return invalidArgument("unknown PTX assembler '%s' (auto, ptxas, "
                             "nvjitlink)",
                             gpuOptions.assembler.c_str());
    auto cubin = cuda::assemblePtx(*ptx, arch.name, assemble);
    bool minBlocksHint = false;
    int registerCap = 0;
    if (cubin.ok() && cubin->wholeProgram) {
      if (spillBytes(*cubin) > 0) {
        minBlocksHint =
            reassembleWithOneBlockPerSm(*ptx, arch.name, assemble, *cubin);
      } else if (blockSize > 0) {
        registerCap = reassembleAtOccupancyStep(*ptx, arch.name, assemble,
                                                blockSize, tileShared, *cubin);
      }
    }
    if (times)
      times->assemble = millisSince(t0);
    if (!cubin.ok())
      return cubin.status();
    if (resources) {
      const cuda::ResourceUsage &u = cubin->usage;
      resources->registers = u.registers;
      resources->sharedBytes = u.sharedBytes;
      resources->tileSharedBytes = tileShared;
      resources->localBytes = u.localBytes;
      resources->spillStores = u.spillStores;
      resources->spillLoads = u.spillLoads;
      resources->barriers = u.barriers;
      resources->blockSize = blockSize;
      resources->assembler = cuda::assemblerBackendName(cubin->backend);
      resources->oneBlockPerSmHint = minBlocksHint;
      resources->registerCap = registerCap;
      resources->tensorMaps = std::move(tensorMaps);
      resources->schedule = schedule;
    }
    return std::move(cubin->cubin);
  }
  if (module.findKernel(kernel) && module.findKernel(kernel)->simt)
    return unimplemented(
        "'%s' is a SIMT program: it has no host-code (cpu) form; the cpu "
        "device runs it through the sim's thread scheduler (stages gpu, "
        "ptx and cubin show its GPU code)",
        kernel.c_str());
  auto t0 = std::chrono::steady_clock::now();
  TESSERA_RETURN_IF_ERROR(cpu::lowerToLLVMDialect(*mod, kernel));
  if (times)
    times->lowering = millisSince(t0);
  if (kind == EmitKind::Lowered)
    return printOp(*mod);
  t0 = std::chrono::steady_clock::now();
  auto text = cpu::translateToText(
      *mod, kind == EmitKind::Assembly ? cpu::TextKind::Assembly
            : kind == EmitKind::Object ? cpu::TextKind::Object
                                       : cpu::TextKind::LLVMIR);
  if (times)
    times->codegen = millisSince(t0);
  return text;
}

struct CpuExecutable::Impl {
  std::unique_ptr<cpu::JitKernel> jit;
  std::vector<AbiArg> abi;
  int numWarps = 4, numStages = 2;
  StageTimes times;
  uint64_t fingerprint = 0;
};

namespace {
/// Hash of a module's text: two specialisations whose lowered code is the
/// same (parameters a target ignores) get the same fingerprint.
uint64_t fingerprintOf(mlir::ModuleOp mod) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mod.print(os);
  return fnv1a(os.str());
}
} // namespace

CpuExecutable::CpuExecutable(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
CpuExecutable::~CpuExecutable() = default;
const std::vector<AbiArg> &CpuExecutable::abi() const { return impl_->abi; }
int CpuExecutable::numWarps() const { return impl_->numWarps; }
int CpuExecutable::numStages() const { return impl_->numStages; }
const StageTimes &CpuExecutable::times() const { return impl_->times; }
uint64_t CpuExecutable::codeFingerprint() const { return impl_->fingerprint; }

void CpuExecutable::run(void **args, int64_t begin, int64_t end,
                        const int64_t grid[3]) const {
  impl_->jit->run(args, begin, end, grid);
}

namespace {
constexpr const char *kCpuExecutableMagic = "tessera-cpu-executable 1";
} // namespace

std::string CpuExecutable::serialize() const {
  const cpu::ObjectCode &code = impl_->jit->code();
  std::string out = formatString(
      "%s\n%s\n%zu %d %d %016llx %zu\n", kCpuExecutableMagic,
      code.entry.c_str(), code.numArgs, impl_->numWarps, impl_->numStages,
      (unsigned long long)impl_->fingerprint, impl_->abi.size());
  for (const AbiArg &a : impl_->abi)
    out += formatString("%d %d %d %d %d\n", a.param, int(a.isTensor),
                        int(a.dtype), a.rank, int(a.unitInnerStride));
  out += formatString("%zu\n", code.object.size());
  out += code.object;
  return out;
}

StatusOr<std::unique_ptr<CpuExecutable>>
driver::loadCpuExecutable(std::string_view bytes) {
  auto bad = [](const char *what) {
    return invalidArgument("not a serialized cpu executable (%s)", what);
  };
  size_t pos = 0;
  // The next line, without its newline; nothing at the end of the bytes.
  auto line = [&]() -> std::optional<std::string> {
    size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos)
      return std::nullopt;
    std::string l(bytes.substr(pos, nl - pos));
    pos = nl + 1;
    return l;
  };
  std::optional<std::string> magic = line();
  if (!magic || *magic != kCpuExecutableMagic)
    return bad("header");
  auto impl = std::make_unique<CpuExecutable::Impl>();
  cpu::ObjectCode code;
  std::optional<std::string> entry = line();
  std::optional<std::string> facts = line();
  if (!entry || entry->empty() || !facts)
    return bad("entry");
  code.entry = *entry;
  unsigned long long fingerprint = 0;
  size_t numAbi = 0;
  if (std::sscanf(facts->c_str(), "%zu %d %d %llx %zu", &code.numArgs,
                  &impl->numWarps, &impl->numStages, &fingerprint,
                  &numAbi) != 5 ||
      numAbi > code.numArgs)
    return bad("facts");
  impl->fingerprint = fingerprint;
  for (size_t i = 0; i < numAbi; ++i) {
    std::optional<std::string> l = line();
    AbiArg a;
    int tensor = 0, dtype = 0, unit = 0;
    if (!l ||
        std::sscanf(l->c_str(), "%d %d %d %d %d", &a.param, &tensor, &dtype,
                    &a.rank, &unit) != 5 ||
        dtype < 0 || dtype >= int(std::size(kAllDTypes)))
      return bad("arguments");
    a.isTensor = tensor != 0;
    a.dtype = DType(dtype);
    a.unitInnerStride = unit != 0;
    impl->abi.push_back(a);
  }
  std::optional<std::string> size = line();
  size_t objectBytes = 0;
  if (!size || std::sscanf(size->c_str(), "%zu", &objectBytes) != 1 ||
      objectBytes != bytes.size() - pos)
    return bad("object size");
  code.object = std::string(bytes.substr(pos));
  // Nothing is compiled: the stage times stay zero.
  TESSERA_ASSIGN_OR_RETURN(impl->jit, cpu::JitKernel::load(std::move(code)));
  return std::make_unique<CpuExecutable>(std::move(impl));
}

StatusOr<std::string> driver::cpuCodeTarget() {
  return cpu::objectCodeTarget();
}

StatusOr<std::unique_ptr<CpuExecutable>>
driver::compileForCpu(const SourceModule &module, const std::string &kernel,
                      const Specialization &spec) {
  if (module.findKernel(kernel) && module.findKernel(kernel)->simt)
    return unimplemented("'%s' is a SIMT program: the cpu device runs it "
                         "through the sim's thread scheduler, not as host "
                         "code",
                         kernel.c_str());
  auto impl = std::make_unique<CpuExecutable::Impl>();
  impl->times.parse = module.parseMillis();
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  cpu::prepareContext(ctx);
  sema::EmittedKernel meta;
  TESSERA_ASSIGN_OR_RETURN(
      auto mod, emitTileModule(ctx, module, kernel, spec, &meta, &impl->times));
  impl->abi = meta.abi;
  impl->numWarps = meta.numWarps;
  impl->numStages = meta.numStages;
  auto t0 = std::chrono::steady_clock::now();
  TESSERA_RETURN_IF_ERROR(cpu::lowerToLLVMDialect(*mod, kernel));
  impl->times.lowering = millisSince(t0);
  impl->fingerprint = fingerprintOf(*mod);
  t0 = std::chrono::steady_clock::now();
  TESSERA_ASSIGN_OR_RETURN(impl->jit, cpu::JitKernel::create(*mod, kernel));
  impl->times.codegen = millisSince(t0);
  return std::make_unique<CpuExecutable>(std::move(impl));
}

//===----------------------------------------------------------------------===//
// sim
//===----------------------------------------------------------------------===//

struct SimExecutable::Impl {
  uint64_t fingerprint = 0;
  std::unique_ptr<cpu::JitFunction> jit;
  std::vector<AbiArg> abi;
  int64_t sharedBytes = 0;
  std::vector<std::string> sites;
  int64_t blockSize = 128;
  std::array<int64_t, 3> gridBound{kNoGridBound, kNoGridBound, kNoGridBound};
  std::vector<TensorMapArg> tensorMaps;
  ProgramSchedule schedule;
  StageTimes times;
};

SimExecutable::SimExecutable(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
SimExecutable::~SimExecutable() = default;
void (*SimExecutable::entry() const)(void **) { return impl_->jit->entry(); }
size_t SimExecutable::numArgSlots() const { return impl_->jit->numArgs(); }
int64_t SimExecutable::blockSize() const { return impl_->blockSize; }
int64_t SimExecutable::sharedBytes() const { return impl_->sharedBytes; }
const std::vector<std::string> &SimExecutable::accessSites() const {
  return impl_->sites;
}
const std::vector<AbiArg> &SimExecutable::abi() const { return impl_->abi; }
const std::vector<TensorMapArg> &SimExecutable::tensorMaps() const {
  return impl_->tensorMaps;
}
const ProgramSchedule &SimExecutable::schedule() const {
  return impl_->schedule;
}
const std::array<int64_t, 3> &SimExecutable::gridBound() const {
  return impl_->gridBound;
}
const StageTimes &SimExecutable::times() const { return impl_->times; }
uint64_t SimExecutable::codeFingerprint() const { return impl_->fingerprint; }

namespace {
/// Reads what the simulator needs from the kernel's gpu.func, then lowers
/// the module to host code and JIT-compiles it.
StatusOr<std::unique_ptr<SimExecutable>>
finishSim(std::unique_ptr<SimExecutable::Impl> impl, mlir::ModuleOp mod,
          const std::string &kernel,
          const std::vector<std::pair<std::string, void *>> &symbols,
          bool counters) {
  bool found = false;
  unsigned attributions = 0;
  mod->walk([&](mlir::gpu::GPUFuncOp f) {
    if (f.getName() != kernel)
      return;
    found = true;
    if (auto known = f.getKnownBlockSizeAttr())
      impl->blockSize = known[0];
    if (auto a = f->getAttrOfType<mlir::IntegerAttr>("tile.shared_bytes"))
      impl->sharedBytes = a.getInt();
    impl->tensorMaps = tensorMapsOf(f, impl->abi);
    impl->schedule = scheduleOf(f);
    attributions = f.getNumWorkgroupAttributions();
    // A scheduled kernel's block ids say nothing of its programs.
    if (impl->schedule.logicalGrid) {
      if (auto b = f->getAttrOfType<mlir::DenseI64ArrayAttr>("tile.grid_bound"))
        for (int64_t d = 0; d < b.size() && d < 3; ++d)
          impl->gridBound[d] = std::min(impl->gridBound[d], b[d]);
      return;
    }
    auto bound = [&](mlir::gpu::Dimension d, std::optional<llvm::APInt> ub) {
      auto &b = impl->gridBound[static_cast<int>(d)];
      if (ub)
        b = std::min(b, ub->getSExtValue());
    };
    f.walk([&](mlir::Operation *op) {
      if (auto id = mlir::dyn_cast<mlir::gpu::BlockIdOp>(op))
        bound(id.getDimension(), id.getUpperBound());
      else if (auto n = mlir::dyn_cast<mlir::gpu::GridDimOp>(op))
        bound(n.getDimension(), n.getUpperBound());
    });
  });
  if (!found)
    return internalError("no GPU kernel '%s' to simulate", kernel.c_str());
  if (attributions)
    return internalError("sim: kernel '%s' has workgroup attributions; the "
                         "GPU mapping is expected to use the dynamic "
                         "shared-memory arena",
                         kernel.c_str());
  impl->fingerprint = fingerprintOf(mod);
  auto t0 = std::chrono::steady_clock::now();
  TESSERA_RETURN_IF_ERROR(gpu::lowerForSim(mod, &impl->sites, counters));
  impl->times.lowering += millisSince(t0);
  t0 = std::chrono::steady_clock::now();
  TESSERA_ASSIGN_OR_RETURN(
      impl->jit, cpu::JitFunction::create(mod, kernel + "_sim", symbols));
  impl->times.codegen = millisSince(t0);
  return std::make_unique<SimExecutable>(std::move(impl));
}
} // namespace

StatusOr<std::unique_ptr<SimExecutable>> driver::compileGpuIRForSim(
    const std::string &mlirText, const std::string &kernel,
    const std::vector<std::pair<std::string, void *>> &symbols, bool counters) {
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  cpu::prepareContext(ctx);
  std::string messages;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream os(messages);
    os << d.getLocation() << ": " << d.str() << "\n";
    return mlir::success();
  });
  auto mod = mlir::parseSourceString<mlir::ModuleOp>(mlirText, &ctx);
  if (!mod)
    return invalidArgument("cannot parse the GPU module:\n%s",
                           messages.c_str());
  auto impl = std::make_unique<SimExecutable::Impl>();
  return finishSim(std::move(impl), *mod, kernel, symbols, counters);
}

StatusOr<std::unique_ptr<SimExecutable>> driver::compileForSim(
    const SourceModule &module, const std::string &kernel,
    const Specialization &spec,
    const std::vector<std::pair<std::string, void *>> &symbols,
    const std::string &archName, bool counters) {
  auto archOr = gpu::lookupArch(archName);
  if (!archOr.ok())
    return archOr.status();
  auto impl = std::make_unique<SimExecutable::Impl>();
  impl->times.parse = module.parseMillis();
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  cpu::prepareContext(ctx);
  sema::EmittedKernel meta;
  TESSERA_ASSIGN_OR_RETURN(
      auto mod, emitTileModule(ctx, module, kernel, spec, &meta, &impl->times));
  impl->abi = meta.abi;
  auto t0 = std::chrono::steady_clock::now();
  TESSERA_RETURN_IF_ERROR(gpu::lowerToGPUDialect(*mod, *archOr));
  impl->times.lowering = millisSince(t0);
  return finishSim(std::move(impl), *mod, kernel, symbols, counters);
}
