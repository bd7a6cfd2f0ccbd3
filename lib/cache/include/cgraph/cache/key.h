// Cache keys for device binaries, shared by the in-memory and the persistent cache.
//
// Ownership: plain value types. Thread-safety: distinct objects from any thread; the
// hash functions are pure. Failure modes: none (hashing cannot fail).
//
// A key names what a backend built (the device image, specialization constants and
// build options) and what it built it for (backend, device, driver, cgraph's compiler
// version), following the seed kernel-program-cache-design. `kernelNames` is
// informational only: it is stored for `cgcache list` and never compared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace cgraph::cache {

struct CacheKey {
  std::string backend;         // "cpu", "cuda", ...
  std::string deviceName;      // e.g. "NVIDIA H200" or the host CPU name
  std::string driverVersion;   // driver / runtime version string
  std::string compilerVersion; // cgraph + LLVM version that produced the binary
  std::string imageHash;       // hashImage() of the input device image
  std::string specConstants;   // serialized specialization constant values (any bytes)
  std::string buildOptions;    // compile + link options, as one string
  std::string kernelNames;     // informational, e.g. "axpy,scale"; not part of identity
};

// True when every identity field (all but kernelNames) is equal.
bool sameIdentity(const CacheKey &a, const CacheKey &b);

// Every identity field, length-prefixed and concatenated: equal strings iff
// sameIdentity(). Usable as an in-memory map key.
std::string identityString(const CacheKey &key);

// Hex of the xxh3-128 hash of the image bytes (32 lower-case hex digits).
std::string hashImage(const uint8_t *data, size_t size);

// Hex of the xxh3-64 hash of `bytes` (16 lower-case hex digits).
std::string hashHex64(std::string_view bytes);

// The string the device part of the key hashes: every device field, length-prefixed
// so that ("ab","c") and ("a","bc") differ.
std::string deviceIdentity(const CacheKey &key);

// Hash function used to name directories of the persistent cache. Injectable so
// that tests can force collisions; the default is hashHex64.
using PathHashFn = std::function<std::string(std::string_view)>;

} // namespace cgraph::cache
