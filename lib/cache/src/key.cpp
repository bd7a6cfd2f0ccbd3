#include "cgraph/cache/key.h"

#include <xxhash.h>

namespace cgraph::cache {
namespace {

void appendHex(std::string &out, uint64_t v) {
  static const char kDigits[] = "0123456789abcdef";
  for (int shift = 60; shift >= 0; shift -= 4) out.push_back(kDigits[(v >> shift) & 0xf]);
}

void appendField(std::string &out, const std::string &field) {
  out += std::to_string(field.size());
  out.push_back(':');
  out += field;
}

} // namespace

bool sameIdentity(const CacheKey &a, const CacheKey &b) {
  return a.backend == b.backend && a.deviceName == b.deviceName && a.driverVersion == b.driverVersion &&
         a.compilerVersion == b.compilerVersion && a.imageHash == b.imageHash &&
         a.specConstants == b.specConstants && a.buildOptions == b.buildOptions;
}

std::string hashImage(const uint8_t *data, size_t size) {
  XXH128_hash_t h = XXH3_128bits(data, size);
  std::string out;
  out.reserve(32);
  appendHex(out, h.high64);
  appendHex(out, h.low64);
  return out;
}

std::string hashHex64(std::string_view bytes) {
  std::string out;
  out.reserve(16);
  appendHex(out, XXH3_64bits(bytes.data(), bytes.size()));
  return out;
}

std::string deviceIdentity(const CacheKey &key) {
  std::string s;
  appendField(s, key.backend);
  appendField(s, key.deviceName);
  appendField(s, key.driverVersion);
  appendField(s, key.compilerVersion);
  return s;
}

} // namespace cgraph::cache
