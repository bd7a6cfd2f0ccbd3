#include "entry_format.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <unistd.h>
#include <xxhash.h>

namespace cgraph::cache::detail {
namespace {

constexpr char kSrcMagic[] = "cgraph-cache-src 1\n";
constexpr char kBinMagic[8] = {'C', 'G', 'C', 'A', 'C', 'H', 'E', '\0'};
constexpr uint32_t kBinVersion = 1;

struct Field {
  const char *name;
  std::string CacheKey::*member;
};
const Field kFields[] = {
    {"backend", &CacheKey::backend},
    {"deviceName", &CacheKey::deviceName},
    {"driverVersion", &CacheKey::driverVersion},
    {"compilerVersion", &CacheKey::compilerVersion},
    {"imageHash", &CacheKey::imageHash},
    {"specConstants", &CacheKey::specConstants},
    {"buildOptions", &CacheKey::buildOptions},
    {"kernelNames", &CacheKey::kernelNames},
};

void put32(std::string &s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void put64(std::string &s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t get(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

} // namespace

std::string serializeSrc(const CacheKey &key) {
  std::string s = kSrcMagic;
  for (const Field &f : kFields) {
    const std::string &v = key.*f.member;
    s += f.name;
    s += ' ';
    s += std::to_string(v.size());
    s += '\n';
    s += v;
    s += '\n';
  }
  return s;
}

std::string parseSrc(const std::string &text, CacheKey &key) {
  size_t pos = sizeof(kSrcMagic) - 1;
  if (text.compare(0, pos, kSrcMagic) != 0) return "bad .src header";
  for (const Field &f : kFields) {
    std::string prefix = std::string(f.name) + " ";
    if (text.compare(pos, prefix.size(), prefix) != 0) return std::string("field '") + f.name + "' missing";
    pos += prefix.size();
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos || nl == pos || nl - pos > 12) return std::string("field '") + f.name + "': bad length";
    uint64_t len = 0;
    for (size_t i = pos; i < nl; ++i) {
      if (text[i] < '0' || text[i] > '9') return std::string("field '") + f.name + "': bad length";
      len = len * 10 + static_cast<uint64_t>(text[i] - '0');
    }
    pos = nl + 1;
    if (len > text.size() - pos || text.size() - pos - len < 1 || text[pos + len] != '\n')
      return std::string("field '") + f.name + "' truncated";
    key.*f.member = text.substr(pos, len);
    pos += len + 1;
  }
  if (pos != text.size()) return "trailing bytes after the last field";
  return {};
}

std::string identityBytes(const CacheKey &key) {
  std::string s;
  for (const Field &f : kFields) {
    if (f.member == &CacheKey::kernelNames) continue;
    const std::string &v = key.*f.member;
    s += std::to_string(v.size());
    s += ':';
    s += v;
  }
  return s;
}

uint64_t checksum64(const uint8_t *data, size_t size) { return XXH3_64bits(data, size); }

uint64_t identityChecksum(const CacheKey &key) {
  std::string s = identityBytes(key);
  return XXH3_64bits(s.data(), s.size());
}

std::string makeBinHeader(const std::string &kind, const uint8_t *payload, size_t size, uint64_t keyChecksum) {
  std::string h(kBinMagic, sizeof kBinMagic);
  put32(h, kBinVersion);
  put32(h, static_cast<uint32_t>(kind.size()));
  put64(h, size);
  put64(h, XXH3_64bits(payload, size));
  put64(h, keyChecksum);
  put64(h, XXH3_64bits(h.data(), h.size()));
  h += kind;
  return h;
}

std::string parseBinHeader(const uint8_t *b, uint64_t fileSize, BinHeader &out) {
  if (fileSize < kBinHeaderSize) return "truncated header (" + std::to_string(fileSize) + " bytes)";
  if (std::memcmp(b, kBinMagic, sizeof kBinMagic) != 0) return "bad magic";
  if (get(b + 40, 8) != XXH3_64bits(b, 40)) return "header checksum mismatch";
  if (get(b + 8, 4) != kBinVersion) return "unsupported format version " + std::to_string(get(b + 8, 4));
  out.kindLength = static_cast<uint32_t>(get(b + 12, 4));
  out.payloadSize = get(b + 16, 8);
  out.payloadChecksum = get(b + 24, 8);
  out.keyChecksum = get(b + 32, 8);
  if (out.kindLength > kMaxKindLength) return "binary kind too long";
  uint64_t expected = kBinHeaderSize + out.kindLength + out.payloadSize;
  if (out.payloadSize > fileSize || expected != fileSize)
    return "size mismatch: header says " + std::to_string(expected) + " bytes, file has " + std::to_string(fileSize);
  return {};
}

uint64_t payloadLimit(uint64_t maxItemSize, uint64_t maxSize) {
  if (maxItemSize > 0) return maxItemSize;
  if (maxSize > 0) return maxSize;
  return UINT64_MAX;
}

std::string checkBinFileSize(uint64_t fileSize, uint64_t limit) {
  const uint64_t overhead = kBinHeaderSize + kMaxKindLength;
  if (limit <= UINT64_MAX - overhead && fileSize > overhead + limit)
    return std::to_string(fileSize) + " bytes, more than the limit of " + std::to_string(overhead + limit);
  return {};
}

std::string checkPayloadSize(const BinHeader &h, uint64_t limit) {
  if (h.payloadSize > limit)
    return "payload of " + std::to_string(h.payloadSize) + " bytes, more than the limit of " + std::to_string(limit);
  return {};
}

bool checksumRange(int fd, uint64_t offset, uint64_t size, uint64_t &out) {
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t *)> state(XXH3_createState(), XXH3_freeState);
  if (!state || XXH3_64bits_reset(state.get()) != XXH_OK) return false;
  uint8_t buf[65536];
  while (size > 0) {
    size_t want = size < sizeof buf ? static_cast<size_t>(size) : sizeof buf;
    ssize_t r = ::pread(fd, buf, want, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    XXH3_64bits_update(state.get(), buf, static_cast<size_t>(r));
    offset += static_cast<uint64_t>(r);
    size -= static_cast<uint64_t>(r);
  }
  out = XXH3_64bits_digest(state.get());
  return true;
}

} // namespace cgraph::cache::detail

namespace cgraph::cache {
std::string identityString(const CacheKey &key) { return detail::identityBytes(key); }
} // namespace cgraph::cache
