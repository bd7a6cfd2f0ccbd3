// cgcache: inspect and manage the persistent device binary cache (ccache's
// conventions where they fit). Exit status: 0 success, 1 an error or (with --verify)
// a bad entry left in place, 2 a usage error.
#include "cgraph/cache/config.h"
#include "cgraph/cache/persistent_cache.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <optional>

using namespace cgraph;
using namespace cgraph::cache;
using nlohmann::json;

namespace {

std::string printable(const std::string &s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

std::string isoTime(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json keyJson(const CacheKey &k) {
  return json{{"backend", k.backend},           {"device_name", k.deviceName},
              {"driver_version", k.driverVersion}, {"compiler_version", k.compilerVersion},
              {"image_hash", k.imageHash},       {"spec_constants", printable(k.specConstants)},
              {"build_options", k.buildOptions}, {"kernel_names", k.kernelNames}};
}

json entryJson(const EntryInfo &e) {
  return json{{"id", e.id},
              {"key", keyJson(e.key)},
              {"binary_kind", e.binaryKind},
              {"binary_size", e.binarySize},
              {"disk_size", e.diskSize},
              {"last_access", isoTime(e.lastAccess)}};
}

json reportJson(const EvictionReport &r, bool dryRun) {
  return json{{"dry_run", dryRun},
              {"removed_entries", r.removedEntries},
              {"removed_bytes", r.removedBytes},
              {"remaining_entries", r.remainingEntries},
              {"remaining_bytes", r.remainingBytes},
              {"removed", r.removedIds}};
}

int fail(const std::string &message) {
  std::fprintf(stderr, "cgcache: error: %s\n", message.c_str());
  return 1;
}

void printReport(const char *done, const char *would, const EvictionReport &r, bool dryRun) {
  std::printf("%s: %llu entries (%s), %llu entries (%s) left\n", dryRun ? would : done,
              (unsigned long long)r.removedEntries, formatSize(r.removedBytes).c_str(),
              (unsigned long long)r.remainingEntries, formatSize(r.remainingBytes).c_str());
  if (dryRun)
    for (const std::string &id : r.removedIds) std::printf("  %s\n", id.c_str());
}

} // namespace

int main(int argc, char **argv) {
  // Past the file size limit (ulimit -f) a write fails with EFBIG, reported as an
  // error with the temporary file removed, instead of the signal killing the tool.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"cgcache: inspect and manage cgraph's persistent device binary cache.\n"
               "Environment: CGRAPH_CACHE_DIR, CGRAPH_CACHE_MAX_SIZE, CGRAPH_CACHE_MAX_AGE, CGRAPH_CACHE_TRACE "
               "(see lib/cache/README.md)",
               "cgcache"};
  std::string dir, maxSizeText, evictOlderText, evictToText;
  bool showStats = false, asJson = false, clearAll = false, verifyAll = false, fix = false, dryRun = false;
  app.set_version_flag("--version", std::string("cgcache ") + CGRAPH_VERSION);
  app.add_option("-d,--dir", dir, "cache directory (default: CGRAPH_CACHE_DIR, else $XDG_CACHE_HOME/cgraph)");
  app.add_flag("-s,--show-stats", showStats, "entries, size, per-device figures and hit/miss counters");
  app.add_flag("--json", asJson, "machine-readable output");
  app.add_option("-M,--max-size", maxSizeText, "set the size limit (e.g. 512M, 2G; 0 = none), kept in cgcache.conf");
  app.add_option("--evict-older-than", evictOlderText, "remove entries not used for AGE (e.g. 30d, 12h)");
  app.add_option("--evict-to", evictToText, "remove least recently used entries until the cache is at most SIZE");
  app.add_flag("-C,--clear", clearAll, "remove every entry");
  app.add_flag("--verify", verifyAll, "check every entry's header, checksums and key");
  app.add_flag("--fix", fix, "with --verify: remove bad entries, orphans and temp files");
  app.add_flag("--dry-run", dryRun, "report what a destructive command would remove, remove nothing");
  CLI::App *listCmd = app.add_subcommand("list", "list entries: key parts, size, last access, kernel names");
  CLI::App *showCmd = app.add_subcommand("show", "show one entry: all key values, binary kind, size");
  std::string showKey;
  showCmd->add_option("KEY", showKey, "entry id as printed by list (or a unique prefix)")->required();
  listCmd->fallthrough();
  showCmd->fallthrough();
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (fix && !verifyAll) return fail("--fix needs --verify"), 2;

  CacheSink sink = [](CacheEvent event, const std::string &m) {
    if (event == CacheEvent::Warning) std::fprintf(stderr, "cgcache: warning: %s\n", m.c_str());
    else std::fprintf(stderr, "cgcache: %s\n", m.c_str());
  };
  setProcessSink(sink); // anything else in the process that reports through defaultSink()
  CacheConfig config = CacheConfig::fromEnvironment(sink);
  if (!dir.empty()) config.root = dir;
  if (config.root.empty()) return fail("no cache directory: use -d or set CGRAPH_CACHE_DIR");
  config.persistent = true;
  PersistentCache cache(config, sink);

  bool didSomething = false;
  json out = json::object();
  int status = 0;

  if (!maxSizeText.empty()) {
    didSomething = true;
    Expected<uint64_t> size = parseSize(maxSizeText);
    if (!size) return fail("--max-size: " + size.error().message()), 2;
    if (!dryRun) {
      if (Error e = cache.setMaxSize(*size)) return fail(e.message());
    }
    if (asJson) out["max_size"] = *size;
    else std::printf("%s %s\n", dryRun ? "would set max size to" : "max size set to", formatSize(*size).c_str());
  }
  if (clearAll) {
    didSomething = true;
    Expected<EvictionReport> r = cache.clear(dryRun);
    if (!r) return fail(r.error().message());
    if (asJson) out["clear"] = reportJson(*r, dryRun);
    else printReport("removed", "would remove", *r, dryRun);
  }
  if (!evictOlderText.empty()) {
    didSomething = true;
    Expected<uint64_t> age = parseAgeSeconds(evictOlderText);
    if (!age) return fail("--evict-older-than: " + age.error().message()), 2;
    if (*age == 0) return fail("--evict-older-than: the age must be greater than zero"), 2;
    Expected<EvictionReport> r = cache.evictOlderThan(*age, dryRun);
    if (!r) return fail(r.error().message());
    if (asJson) out["evict_older_than"] = reportJson(*r, dryRun);
    else printReport("evicted", "would evict", *r, dryRun);
  }
  if (!evictToText.empty()) {
    didSomething = true;
    Expected<uint64_t> size = parseSize(evictToText);
    if (!size) return fail("--evict-to: " + size.error().message()), 2;
    Expected<EvictionReport> r = cache.evictToSize(*size, dryRun);
    if (!r) return fail(r.error().message());
    if (asJson) out["evict_to"] = reportJson(*r, dryRun);
    else printReport("evicted", "would evict", *r, dryRun);
  }
  if (verifyAll) {
    didSomething = true;
    Expected<VerifyReport> r = cache.verify(fix, dryRun);
    if (!r) return fail(r.error().message());
    // Only what was really removed counts: a bad entry --fix could not remove (a
    // directory in place of a file, a failed unlink) still fails the check.
    if ((!r->bad.empty() && !(fix && !dryRun)) || !r->notRemoved.empty()) status = 1;
    if (asJson) {
      json bad = json::array(), notRemoved = json::array();
      for (const BadEntry &b : r->bad) bad.push_back({{"id", b.id}, {"reason", b.reason}});
      for (const BadEntry &b : r->notRemoved) notRemoved.push_back({{"id", b.id}, {"reason", b.reason}});
      out["verify"] = {{"checked", r->checked}, {"bad", bad},          {"orphans", r->orphans},
                       {"removed", r->removed}, {"not_removed", notRemoved}};
    } else {
      for (const BadEntry &b : r->bad) std::printf("bad: %s: %s\n", b.id.c_str(), b.reason.c_str());
      for (const std::string &o : r->orphans) std::printf("orphan: %s\n", o.c_str());
      for (const BadEntry &b : r->notRemoved) std::printf("not removed: %s: %s\n", b.id.c_str(), b.reason.c_str());
      std::printf("checked %llu entries: %zu bad, %zu orphan files%s\n", (unsigned long long)r->checked, r->bad.size(),
                  r->orphans.size(),
                  fix ? (dryRun ? ", nothing removed (dry run)"
                                : (", removed " + std::to_string(r->removed) +
                                   (r->notRemoved.empty() ? "" : ", " + std::to_string(r->notRemoved.size()) + " not removed"))
                                      .c_str())
                      : "");
    }
  }
  if (showStats || (!didSomething && !*listCmd && !*showCmd)) {
    Expected<CacheStats> s = cache.stats();
    if (!s) return fail(s.error().message());
    if (asJson) {
      json devices = json::object();
      for (const auto &[name, d] : s->devices)
        devices[name] = {{"backend", d.backend},   {"device_name", d.deviceName},
                         {"driver_version", d.driverVersion}, {"compiler_version", d.compilerVersion},
                         {"entries", d.entries},   {"bytes", d.bytes},
                         {"hits", d.hits},         {"misses", d.misses}};
      out["stats"] = {{"cache_directory", s->root}, {"entries", s->entries},     {"bytes", s->bytes},
                      {"max_size", s->maxSize},     {"max_age_seconds", s->maxAgeSeconds},
                      {"hits", s->hits},            {"misses", s->misses},       {"writes", s->writes},
                      {"evictions", s->evictions},  {"devices", devices}};
    } else {
      std::printf("cache directory   %s\n", s->root.c_str());
      std::printf("entries           %llu\n", (unsigned long long)s->entries);
      std::printf("size              %s (%llu bytes)\n", formatSize(s->bytes).c_str(), (unsigned long long)s->bytes);
      std::printf("max size          %s\n", s->maxSize ? formatSize(s->maxSize).c_str() : "none");
      std::printf("max age           %s\n", s->maxAgeSeconds ? formatAge(s->maxAgeSeconds).c_str() : "none");
      std::printf("hits              %llu\n", (unsigned long long)s->hits);
      std::printf("misses            %llu\n", (unsigned long long)s->misses);
      std::printf("writes            %llu\n", (unsigned long long)s->writes);
      std::printf("evictions         %llu\n", (unsigned long long)s->evictions);
      for (const auto &[name, d] : s->devices)
        std::printf("device %s: %s '%s' driver '%s' compiler '%s': %llu entries, %s, %llu hits, %llu misses\n",
                    name.c_str(), d.backend.c_str(), d.deviceName.c_str(), d.driverVersion.c_str(),
                    d.compilerVersion.c_str(), (unsigned long long)d.entries, formatSize(d.bytes).c_str(),
                    (unsigned long long)d.hits, (unsigned long long)d.misses);
    }
  }
  if (*listCmd) {
    Expected<std::vector<EntryInfo>> entries = cache.list();
    if (!entries) return fail(entries.error().message());
    if (asJson) {
      json arr = json::array();
      for (const EntryInfo &e : *entries) arr.push_back(entryJson(e));
      out["entries"] = arr;
    } else {
      for (const EntryInfo &e : *entries)
        std::printf("%s  %s '%s'  image %.16s  %s  %s  kernels: %s\n", e.id.c_str(), e.key.backend.c_str(),
                    e.key.deviceName.c_str(), e.key.imageHash.c_str(), formatSize(e.diskSize).c_str(),
                    isoTime(e.lastAccess).c_str(), e.key.kernelNames.empty() ? "-" : e.key.kernelNames.c_str());
    }
  }
  if (*showCmd) {
    Expected<EntryInfo> e = cache.show(showKey);
    if (!e) return fail(e.error().message());
    if (asJson) {
      out["entry"] = entryJson(*e);
    } else {
      std::printf("id                %s\n", e->id.c_str());
      std::printf("backend           %s\n", e->key.backend.c_str());
      std::printf("device name       %s\n", e->key.deviceName.c_str());
      std::printf("driver version    %s\n", e->key.driverVersion.c_str());
      std::printf("compiler version  %s\n", e->key.compilerVersion.c_str());
      std::printf("image hash        %s\n", e->key.imageHash.c_str());
      std::printf("spec constants    %s\n", printable(e->key.specConstants).c_str());
      std::printf("build options     %s\n", e->key.buildOptions.c_str());
      std::printf("kernel names      %s\n", e->key.kernelNames.c_str());
      std::printf("binary kind       %s\n", e->binaryKind.c_str());
      std::printf("binary size       %llu bytes\n", (unsigned long long)e->binarySize);
      std::printf("size on disk      %llu bytes\n", (unsigned long long)e->diskSize);
      std::printf("last access       %s\n", isoTime(e->lastAccess).c_str());
    }
  }
  if (asJson) std::cout << out.dump(2) << "\n";
  return status;
}
