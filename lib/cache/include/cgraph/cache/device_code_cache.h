// Per-device-context cache of built programs and kernels (seed
// kernel-program-cache-design: a programs map, a kernels map, a fast kernel map).
//
// ProgramT / KernelT are whatever a backend builds (a JIT'd module, a CUmodule
// wrapper, ...). Kernels are keyed by their program's key and their name; the fast
// kernel map answers a repeated (program key, kernel name) request with one lookup
// instead of two. When a program is evicted by the LRU its kernels leave both kernel
// maps, so a kernel never outlives its program inside the cache (a KernelT that needs
// the program alive should hold its shared_ptr).
//
// Ownership, thread-safety and failure modes: as MemoryCache (memory_cache.h). One
// instance per device context; it must outlive the calls running on it.
#pragma once

#include "cgraph/cache/memory_cache.h"

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace cgraph::cache {

struct ProgramKey {
  std::string imageHash;     // hashImage() of the device image
  std::string specConstants; // serialized specialization constant values
  std::string device;        // the device(s) the program is built for
  std::string buildOptions;
  bool operator==(const ProgramKey &o) const {
    return imageHash == o.imageHash && specConstants == o.specConstants && device == o.device &&
           buildOptions == o.buildOptions;
  }
};

struct KernelKey {
  ProgramKey program;
  std::string kernelName;
  bool operator==(const KernelKey &o) const { return program == o.program && kernelName == o.kernelName; }
};

inline size_t hashCombine(size_t seed, size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

struct ProgramKeyHash {
  size_t operator()(const ProgramKey &k) const {
    std::hash<std::string> h;
    size_t s = h(k.imageHash);
    s = hashCombine(s, h(k.specConstants));
    s = hashCombine(s, h(k.device));
    return hashCombine(s, h(k.buildOptions));
  }
};

struct KernelKeyHash {
  size_t operator()(const KernelKey &k) const {
    return hashCombine(ProgramKeyHash()(k.program), std::hash<std::string>()(k.kernelName));
  }
};

template <class ProgramT, class KernelT> class DeviceCodeCache {
public:
  using ProgramPtr = std::shared_ptr<const ProgramT>;
  using KernelPtr = std::shared_ptr<const KernelT>;
  using Programs = MemoryCache<ProgramKey, ProgramT, ProgramKeyHash>;
  using Kernels = MemoryCache<KernelKey, KernelT, KernelKeyHash>;

  struct Options {
    size_t programMaxBytes = 0; // in-memory LRU threshold over programs; 0 = none
    std::function<size_t(const ProgramT &)> programSize;
  };

  DeviceCodeCache() : DeviceCodeCache(Options()) {}
  explicit DeviceCodeCache(Options options)
      : programs_(typename Programs::Options{options.programMaxBytes, std::move(options.programSize),
                                             [this](const ProgramKey &k) { dropKernelsOf(k); }}) {}

  // buildProgram: Expected<ProgramPtr>().
  template <class BuildProgram>
  Expected<ProgramPtr> getOrBuildProgram(const ProgramKey &key, BuildProgram &&buildProgram) {
    return programs_.getOrBuild(key, std::forward<BuildProgram>(buildProgram));
  }

  // buildProgram: Expected<ProgramPtr>(); buildKernel: Expected<KernelPtr>(const ProgramPtr &).
  template <class BuildProgram, class BuildKernel>
  Expected<KernelPtr> getOrBuildKernel(const ProgramKey &programKey, const std::string &kernelName,
                                       BuildProgram &&buildProgram, BuildKernel &&buildKernel) {
    KernelKey key{programKey, kernelName};
    {
      std::lock_guard<std::mutex> lock(fastMutex_);
      auto it = fast_.find(key);
      if (it != fast_.end()) {
        ++fastHits_;
        return it->second;
      }
    }
    Expected<ProgramPtr> program = programs_.getOrBuild(programKey, std::forward<BuildProgram>(buildProgram));
    if (!program) return program.error();
    ProgramPtr p = *program;
    Expected<KernelPtr> kernel = kernels_.getOrBuild(key, [&]() { return buildKernel(p); });
    if (!kernel) return kernel.error();
    // Only cache fast when the program is still in the programs map: if it was evicted
    // meanwhile, dropKernelsOf already ran and must not be undone.
    if (programs_.find(programKey) == p) {
      std::lock_guard<std::mutex> lock(fastMutex_);
      fast_.emplace(std::move(key), *kernel);
    }
    return kernel;
  }

  // Drops everything (e.g. when the device runs out of memory).
  void clear() {
    programs_.clear();
    kernels_.clear();
    std::lock_guard<std::mutex> lock(fastMutex_);
    fast_.clear();
  }

  const Programs &programs() const { return programs_; }
  const Kernels &kernels() const { return kernels_; }
  uint64_t fastKernelHits() const { return fastHits_.load(); }

private:
  void dropKernelsOf(const ProgramKey &program) {
    kernels_.eraseIf([&](const KernelKey &k) { return k.program == program; });
    std::lock_guard<std::mutex> lock(fastMutex_);
    for (auto it = fast_.begin(); it != fast_.end();)
      it = it->first.program == program ? fast_.erase(it) : std::next(it);
  }

  Kernels kernels_; // declared before programs_: programs_' eviction callback uses it
  Programs programs_;
  std::mutex fastMutex_;
  std::unordered_map<KernelKey, KernelPtr, KernelKeyHash> fast_;
  std::atomic<uint64_t> fastHits_{0};
};

} // namespace cgraph::cache
