#include "cgraph/cache/config.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace cgraph::cache {
namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Splits "12.5G" into 12.5 and "G"; false when no number leads.
bool splitNumber(std::string_view text, double &number, std::string &suffix) {
  std::string t = trim(text);
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.')) ++i;
  if (i == 0) return false;
  // strtod, not stod: an overflow is HUGE_VAL (reported as too large by the
  // callers), not an exception; "1.2.3" stops early and is refused.
  const std::string digits = t.substr(0, i);
  char *end = nullptr;
  number = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return false;
  suffix = trim(std::string_view(t).substr(i));
  for (char &c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return true;
}

// Whether a non-negative `v` converts to uint64_t: 2^64 and above (and infinity, NaN)
// would be undefined behaviour in the cast.
bool inRange(double v) { return v >= 0 && v < 18446744073709551616.0; }

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

bool isOff(std::string v) {
  for (char &c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return v == "0" || v == "off" || v == "false" || v == "no";
}

} // namespace

Expected<uint64_t> parseSize(std::string_view text) {
  double n = 0;
  std::string suffix;
  if (!splitNumber(text, n, suffix)) return makeError("invalid size '" + std::string(text) + "'");
  if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();
  if (!suffix.empty() && suffix.back() == 'i') suffix.pop_back();
  double mult = 1;
  if (suffix == "") mult = 1;
  else if (suffix == "k") mult = 1024.0;
  else if (suffix == "m") mult = 1024.0 * 1024;
  else if (suffix == "g") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "t") mult = 1024.0 * 1024 * 1024 * 1024;
  else return makeError("invalid size '" + std::string(text) + "': unknown suffix (use K, M, G or T)");
  double v = n * mult;
  if (!inRange(v)) return makeError("invalid size '" + std::string(text) + "': too large");
  return static_cast<uint64_t>(v);
}

Expected<uint64_t> parseAgeSeconds(std::string_view text) {
  double n = 0;
  std::string suffix;
  if (!splitNumber(text, n, suffix)) return makeError("invalid age '" + std::string(text) + "'");
  double mult;
  if (suffix == "" || suffix == "d") mult = 86400;
  else if (suffix == "w") mult = 7 * 86400;
  else if (suffix == "h") mult = 3600;
  else if (suffix == "m" || suffix == "min") mult = 60;
  else if (suffix == "s") mult = 1;
  else return makeError("invalid age '" + std::string(text) + "': unknown suffix (use s, m, h, d or w)");
  double v = n * mult;
  if (!inRange(v)) return makeError("invalid age '" + std::string(text) + "': too large");
  return static_cast<uint64_t>(v);
}

std::string formatSize(uint64_t bytes) {
  static const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string formatAge(uint64_t s) {
  char buf[48];
  if (s >= 86400) std::snprintf(buf, sizeof buf, "%llud %lluh", (unsigned long long)(s / 86400), (unsigned long long)(s % 86400 / 3600));
  else if (s >= 3600) std::snprintf(buf, sizeof buf, "%lluh %llum", (unsigned long long)(s / 3600), (unsigned long long)(s % 3600 / 60));
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%llum %llus", (unsigned long long)(s / 60), (unsigned long long)(s % 60));
  else std::snprintf(buf, sizeof buf, "%llus", (unsigned long long)s);
  return buf;
}

CacheConfig CacheConfig::fromEnvironment(const CacheSink &sink) {
  CacheConfig c;
  auto warn = [&](const std::string &m) {
    if (sink) sink(CacheEvent::Warning, m);
  };
  if (const char *dir = env("CGRAPH_CACHE_DIR")) {
    c.root = dir;
  } else if (const char *xdg = env("XDG_CACHE_HOME")) {
    c.root = std::string(xdg) + "/cgraph";
  } else if (const char *home = env("HOME")) {
    c.root = std::string(home) + "/.cache/cgraph";
  }
  if (const char *v = env("CGRAPH_CACHE_PERSISTENT")) c.persistent = !isOff(v);
  auto readSize = [&](const char *name, uint64_t &out, bool *set) {
    if (const char *v = env(name)) {
      Expected<uint64_t> s = parseSize(v);
      if (!s) {
        warn(std::string(name) + ": " + s.error().message() + "; using the default");
        return;
      }
      out = *s;
      if (set) *set = true;
    }
  };
  readSize("CGRAPH_CACHE_MAX_SIZE", c.maxSize, &c.maxSizeSet);
  readSize("CGRAPH_CACHE_MIN_ITEM_SIZE", c.minItemSize, nullptr);
  readSize("CGRAPH_CACHE_MAX_ITEM_SIZE", c.maxItemSize, nullptr);
  readSize("CGRAPH_CACHE_MEMORY_MAX_SIZE", c.memoryMaxSize, nullptr);
  if (const char *v = env("CGRAPH_CACHE_MAX_AGE")) {
    Expected<uint64_t> a = parseAgeSeconds(v);
    if (a) {
      c.maxAgeSeconds = *a;
      c.maxAgeSet = true;
    } else {
      warn(std::string("CGRAPH_CACHE_MAX_AGE: ") + a.error().message() + "; using the default");
    }
  }
  c.evictionDisabled = std::getenv("CGRAPH_CACHE_EVICTION_DISABLE") != nullptr;
  c.trace = std::getenv("CGRAPH_CACHE_TRACE") != nullptr;
  return c;
}

} // namespace cgraph::cache
