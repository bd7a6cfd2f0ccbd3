// Compilation is "SPIR-V bytes + options -> object file bytes -> load into the JIT"; the
// object file is what lib/cache's KernelCache keeps on disk, so a second process (or a
// second device object) skips LLVM entirely; the loaded modules (JITDylibs) are its
// memory tier, per device, keyed by the full SPIR-V bytes + the host options.
// An evicted module's JITDylib stays in the JIT until the device goes away (executables
// may still run its code); the bound limits how many distinct modules are kept ready.
// Each module gets its own JITDylib: kernels of different modules may share names.
#include "internal.h"

#include <algorithm>

#include "cpu_code_hash.h"

#include "cgraph/cache/kernel_cache.h"
#include "cgraph/cache/key.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/Error.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <unordered_map>

namespace cgraph::cpu {

namespace {

// What enters every key of a compiled object besides the SPIR-V: the host options, the
// hash of the backend's own code-generating sources (CMakeLists.txt computes it at build
// time, so a change to the lowering or the launcher ABI misses instead of loading a stale
// object), and whether the object was instrumented for ThreadSanitizer.
std::string compilerIdentity() {
  std::string s = hostCompileOptions() + " code=" CGRAPH_CPU_CODE_HASH;
#ifdef CGRAPH_CPU_TSAN
  s += " tsan";
#endif
  return s;
}

} // namespace

struct KernelCompiler::Impl {
  std::mutex mutex;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::string options;
  uint32_t dylibs = 0;
  std::atomic<uint64_t> compiles{0}, hits{0};
  // lib/cache's KernelCache: loaded modules in memory (bounded LRU), their object files
  // on disk. Created on first use (it reads the environment).
  std::unique_ptr<cache::KernelCache<CompiledModule>> modules;
  std::optional<std::string> dumpDir;
  rt::KernelCacheOptions cacheOptions;
  bool fibers = false;

  Error ensureJit() {
    if (jit) return Error::success();
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto j = llvm::orc::LLJITBuilder().create();
    if (!j) return makeError("cannot create the LLVM JIT: " + llvm::toString(j.takeError()));
    jit = std::move(*j);
    options = compilerIdentity();
    return Error::success();
  }

  Expected<std::shared_ptr<const CompiledModule>> get(const KernelModule &module,
                                                      const std::vector<std::string> &kernelNames,
                                                      bool useCache, const LocalSpecialization *spec,
                                                      bool checkBounds);

  Expected<std::shared_ptr<CompiledModule>> load(const std::vector<uint8_t> &object,
                                                 const std::vector<std::string> &names,
                                                 const std::string &moduleName) {
    auto jd = jit->createJITDylib("cgraph-cpu-module-" + std::to_string(dylibs++));
    if (!jd) return makeError("cannot create a JIT library: " + llvm::toString(jd.takeError()));
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        jit->getDataLayout().getGlobalPrefix());
    if (!gen) return makeError("cannot search the process for symbols: " + llvm::toString(gen.takeError()));
    jd->addGenerator(std::move(*gen));
    llvm::orc::SymbolMap syms;
    syms[jit->mangleAndIntern("cgraph_cpu_barrier")] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(&cgraph_cpu_barrier), llvm::JITSymbolFlags::Exported);
    syms[jit->mangleAndIntern("cgraph_cpu_bounds_fail")] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(&cgraph_cpu_bounds_fail), llvm::JITSymbolFlags::Exported);
    if (auto e = jd->define(llvm::orc::absoluteSymbols(std::move(syms))))
      return makeError(llvm::toString(std::move(e)));
    auto buf = llvm::MemoryBuffer::getMemBufferCopy(
        llvm::StringRef(reinterpret_cast<const char *>(object.data()), object.size()), moduleName);
    if (auto e = jit->addObjectFile(*jd, std::move(buf)))
      return makeError("module '" + moduleName +
                       "': cannot load its object file: " + llvm::toString(std::move(e)));
    auto mod = std::make_shared<CompiledModule>();
    for (const std::string &n : names) {
      std::string base = std::string(kWrapperPrefix) + n;
      auto info = jit->lookup(*jd, base + ".info");
      if (!info) {
        llvm::consumeError(info.takeError());
        return makeError("module '" + moduleName + "' has no kernel '" + n + "'");
      }
      const uint64_t *i = llvm::jitTargetAddressToPointer<const uint64_t *>(info->getAddress());
      JitKernel k;
      k.name = n;
      k.barrier = i[0] != kNoBarrier;
      k.fibers = i[0] == kBarrierFibers;
      k.staticLocalBytes = i[1];
      k.numParams = uint32_t(i[2]);
      k.groupShape = i[3] != 0;
      k.privateBytes = i[4];
      k.heavy = k.barrier || i[5] != 0;
      k.itemCost = std::max<uint64_t>(i[6], 1);
      k.contended = i[7] != 0;
      k.checked = i[8] != 0;
      auto fn = jit->lookup(*jd, base + (k.fibers ? ".wi" : ".wg"));
      if (!fn)
        return makeError("module '" + moduleName + "': kernel '" + n +
                         "': " + llvm::toString(fn.takeError()));
      if (k.fibers)
        k.workItem = llvm::jitTargetAddressToPointer<WiFn>(fn->getAddress());
      else
        k.loop = llvm::jitTargetAddressToPointer<WgLoopFn>(fn->getAddress());
      mod->kernels.push_back(std::move(k));
    }
    return mod;
  }
};

KernelCompiler::KernelCompiler(std::optional<std::string> dumpDir, rt::KernelCacheOptions cache, bool fibers)
    : impl_(std::make_unique<Impl>()) {
  impl_->dumpDir = std::move(dumpDir);
  impl_->cacheOptions = std::move(cache);
  impl_->fibers = fibers;
}
KernelCompiler::~KernelCompiler() = default;
uint64_t KernelCompiler::compiles() const {
  return impl_->compiles;
}
uint64_t KernelCompiler::memoryHits() const {
  return impl_->hits;
}

Expected<std::shared_ptr<const CompiledModule>>
KernelCompiler::get(const KernelModule &module, const std::vector<std::string> &kernelNames,
                    bool useCache, bool checkBounds) {
  return impl_->get(module, kernelNames, useCache, nullptr, checkBounds);
}

Expected<std::shared_ptr<const CompiledModule>>
KernelCompiler::getSpecialized(const KernelModule &module, const LocalSpecialization &spec,
                               bool useCache, bool checkBounds) {
  return impl_->get(module, {spec.kernel}, useCache, &spec, checkBounds);
}

Expected<std::shared_ptr<const CompiledModule>>
KernelCompiler::Impl::get(const KernelModule &module, const std::vector<std::string> &kernelNames,
                          bool useCache, const LocalSpecialization *spec, bool checkBounds) {
  if (module.forms.empty() || module.forms[0].kind != FormKind::SpirV)
    return makeError("module '" + module.name + "': forms[0] is not SPIR-V");
  // One compile at a time: LLVM compiles use both cores' worth of memory bandwidth and
  // the JIT's dylib creation is not worth finer locking at finalize.
  std::lock_guard<std::mutex> lock(mutex);
  CGRAPH_RETURN_IF_ERROR(ensureJit());
  const std::vector<uint8_t> &spirv = module.forms[0].bytes;
  using Cache = cache::KernelCache<CompiledModule>;
  auto build = [&]() -> Expected<Cache::Built> {
    ++compiles;
    Expected<std::vector<uint8_t>> object =
        lowerToObject(spirv.data(), spirv.size(), module.name, spec, checkBounds, dumpDir ? &*dumpDir : nullptr, fibers);
    if (!object) return object.error();
    Expected<std::shared_ptr<CompiledModule>> mod = load(*object, kernelNames, module.name);
    if (!mod) return mod.error();
    return Cache::Built{std::move(*mod), std::move(*object)};
  };
  if (!useCache) {
    Expected<Cache::Built> built = build();
    if (!built) return built.error();
    return built->value;
  }
  if (!modules) modules = Cache::fromEnvironment(cacheOptions.dir, cacheOptions.persistent);
  cache::CacheKey ck;
  ck.backend = "cpu";
  ck.deviceName = "host";
  ck.compilerVersion = options;
  ck.imageHash = cache::hashImage(spirv.data(), spirv.size());
  ck.buildOptions = module.forms[0].options;
  // A specialized object holds one kernel compiled for one shape: the kernel and the
  // shape join the options (the disk key, which has no kernel names: two kernels of one
  // module specialized for one shape would share an entry) and the memory key.
  std::string shape;
  if (spec)
    shape = " specialize=" + spec->kernel + ":" + std::to_string(spec->local[0]) + "," +
            std::to_string(spec->local[1]) + "," + std::to_string(spec->local[2]);
  // Bounds-checked objects are other code: the mode joins both keys.
  if (checkBounds) shape += " check-bounds";
  // So are kernels whose barriers run as fibers.
  if (fibers) shape += " fibers";
  ck.buildOptions += shape;
  for (const std::string &n : kernelNames)
    ck.kernelNames += (ck.kernelNames.empty() ? "" : ",") + n;
  // A loaded module resolves only the kernels it was asked for, so the names join the
  // memory key (the image bytes passed below); the disk key is the SPIR-V hash alone.
  std::vector<uint8_t> memoryImage = spirv;
  for (const std::string &n : kernelNames) {
    memoryImage.push_back(0);
    memoryImage.insert(memoryImage.end(), n.begin(), n.end());
  }
  memoryImage.push_back(0);
  memoryImage.insert(memoryImage.end(), shape.begin(), shape.end());
  const uint64_t before = modules->counters().memory.hits;
  Expected<Cache::Value> mod = modules->getOrBuild(
      ck, memoryImage.data(), memoryImage.size(), "elf-relocatable",
      [&](const std::vector<uint8_t> &object) -> Expected<Cache::Value> {
        Expected<std::shared_ptr<CompiledModule>> m = load(object, kernelNames, module.name);
        if (!m) return m.error();
        return Cache::Value(std::move(*m));
      },
      build);
  if (!mod) return mod.error();
  if (modules->counters().memory.hits != before) ++hits;
  return *mod;
}

} // namespace cgraph::cpu
