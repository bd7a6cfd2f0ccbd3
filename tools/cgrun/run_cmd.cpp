// `cgrun FILE.cgf`: finalize once, replay N times, write outputs, check results.
#include "common.h"

#include "cgraph/format/output_file.h"
#include "cgraph/runtime/multi_device.h"
#include "cgraph/runtime/npy.h"
#include "cgraph/runtime/trace.h"

#include <cstdio>
#include <mutex>

namespace cgraph::cgrun {

namespace {

struct OutputSpec {
  uint32_t slot;
  std::string path;
};

struct CheckSpec {
  uint32_t slot;
  std::string arg;
  std::string path;
  ScalarType type;
  std::vector<uint8_t> expected;
};

Expected<OutputSpec> parseOutput(const Graph &g, const std::string &a) {
  size_t eq = a.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
    return makeError("--output " + a + ": expected slot=file.npy or slot=file.bin");
  Expected<uint32_t> s = findSlotArg(g, a.substr(0, eq), "--output " + a);
  if (!s) return s.error();
  return OutputSpec{*s, a.substr(eq + 1)};
}

Expected<CheckSpec> parseCheck(const Graph &g, const std::vector<uint64_t> &bytes,
                               const std::string &a) {
  size_t eq = a.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == a.size())
    return makeError("--check " + a + ": expected slot=@expected.npy or slot=@file.bin:type");
  Expected<uint32_t> s = findSlotArg(g, a.substr(0, eq), "--check " + a);
  if (!s) return s.error();
  CheckSpec c;
  c.slot = *s;
  c.arg = a;
  c.type = slotType(g, *s);
  std::string path = a.substr(eq + 1);
  if (!path.empty() && path[0] == '@') path = path.substr(1);
  if (!rt::isNpyPath(path)) {
    size_t colon = path.rfind(':');
    ScalarType t;
    if (colon != std::string::npos && parseScalarType(path.substr(colon + 1), &t)) {
      c.type = t;
      path = path.substr(0, colon);
    }
  }
  c.path = path;
  rt::NpyArray header;
  Expected<std::vector<uint8_t>> data = rt::readDataFile(path, &header);
  if (!data) return data.error().withContext("--check " + a);
  if (rt::isNpyPath(path)) c.type = header.type;
  if (data->size() != bytes[c.slot])
    return makeError("--check " + a + ": file has " + std::to_string(data->size()) + " bytes of data, " +
                     slotLabel(g, c.slot) + " has " + std::to_string(bytes[c.slot]));
  c.expected = std::move(*data);
  return c;
}

} // namespace

int runCommand(const CommonOptions &o, uint32_t iterations, const std::vector<std::string> &outputs,
               const std::vector<std::string> &checks, const std::string &tracePath) {
  Expected<Graph> graph = loadGraph(o.file);
  if (!graph) return fail(graph.error());
  Expected<rt::ParamValues> params = parseParams(*graph, o);
  if (!params) return fail(params.error());
  if (Error e = setRankParams(*graph, o, &*params)) return fail(e);
  sizeSlotsForParams(*graph, {*params}); // slot sizes that depend on parameters
  const Graph &g = *graph;
  const std::vector<uint64_t> bytes = slotBytes(g);

  std::vector<InputSpec> specs;
  {
    auto s = parseInputs(g, o);
    if (!s) return fail(s.error());
    specs = std::move(*s);
  }
  std::vector<OutputSpec> outs;
  std::vector<CheckSpec> chks;
  std::vector<bool> wanted(g.slots.size(), false);
  for (const std::string &a : outputs) {
    auto s = parseOutput(g, a);
    if (!s) return fail(s.error());
    wanted[s->slot] = true;
    outs.push_back(*s);
  }
  for (const std::string &a : checks) {
    auto c = parseCheck(g, bytes, a);
    if (!c) return fail(c.error());
    wanted[c->slot] = true;
    chks.push_back(std::move(*c));
  }

  auto registry = makeRegistry(o.checkBounds);
  const std::string spec = deviceSpec(o.backends.empty() ? "" : o.backends[0], o.device);
  Expected<rt::Device *> dev = registry->open(spec);
  if (!dev) return fail(dev.error());

  rt::HostPolicy policy = hostPolicy(o);
  std::mutex hostMutex;
  std::vector<std::string> hostLines;
  policy.output = [&](const std::string &line) {
    std::lock_guard<std::mutex> lock(hostMutex);
    if (o.json) {
      hostLines.push_back(line);
    } else {
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    }
  };
  auto contents = initialContents(g, specs, policy, wanted, false);
  if (!contents) return fail(contents.error());

  rt::FinalizeOptions fo = finalizeOptions(o, policy);
  auto comm = finalizeCommunicator(o, g, **dev, spec);
  if (!comm) return fail(comm.error());
  fo.communicator = *comm;
  auto t0 = std::chrono::steady_clock::now();
  // More than one --backend: the device list of a multi-device graph (the first holds
  // the bindings and results).
  std::vector<rt::Device *> devices{*dev};
  for (size_t b = 1; b < o.backends.size(); ++b) {
    Expected<rt::Device *> d = registry->open(o.backends[b]);
    if (!d) return fail(d.error());
    devices.push_back(*d);
  }
  auto exe = rt::finalizeMultiDevice(devices, g, fo);
  const double finalizeMs = msSince(t0);
  if (!exe) return fail(exe.error());
  if (Error e = applyUpdates(**exe, o)) return fail(e);
  auto bound = bindContents(**dev, g, *contents);
  if (!bound) return fail(bound.error());

  rt::TraceWriter trace;
  trace.setProcessName(1, "cgrun " + spec);
  rt::SubmitOptions so;
  so.profile = !tracePath.empty();
  std::vector<double> iterMs;
  const bool progress = progressEnabled(o) && iterations > 1;
  const auto runStart = std::chrono::steady_clock::now();
  for (uint32_t i = 0; i < iterations; ++i) {
    auto s = std::chrono::steady_clock::now();
    auto ev = (*exe)->enqueue(bound->table, *params, so);
    if (!ev) return fail(ev.error());
    Error e = (*ev)->wait();
    iterMs.push_back(msSince(s));
    if (e) return fail(e.withContext("iteration " + std::to_string(i)));
    if (so.profile) trace.addRun((*exe)->graph(), (*ev)->nodeTimings(), nsBetween(runStart, s), 1, i);
    if (progress) std::fprintf(stderr, "\rcgrun: iteration %u/%u", i + 1, iterations);
  }
  if (progress) std::fprintf(stderr, "\n");
  if (!tracePath.empty()) {
    Error e = trace.writeFile(tracePath);
    if (e) return fail(e);
  }

  nlohmann::json jOutputs = nlohmann::json::array(), jChecks = nlohmann::json::array();
  for (OutputSpec out : outs) {
    // In a world of several ranks, rank r writes a path with "{rank}" (replaced by r);
    // a path without it is rank 0's alone.
    const size_t at = out.path.find("{rank}");
    if (at == std::string::npos && o.rank != 0) continue;
    if (at != std::string::npos) out.path.replace(at, 6, std::to_string(o.rank));
    auto data = readSlot(**dev, *bound, out.slot, 0, bytes[out.slot]);
    if (!data) return fail(data.error().withContext("--output " + g.slots[out.slot].name));
    // writeOutputFile: '-' is stdout, a device or FIFO is written through, a file is
    // replaced atomically (a failed write leaves the old one).
    const std::vector<uint8_t> *file = &*data;
    Expected<std::vector<uint8_t>> img = std::vector<uint8_t>();
    if (rt::isNpyPath(out.path)) {
      const uint64_t item = scalarSize(slotType(g, out.slot));
      img = rt::encodeNpy(slotType(g, out.slot), data->data(), data->size() / item * item);
      if (!img) return fail(img.error().withContext(out.path));
      file = &*img;
    }
    if (Error e = writeOutputFile(out.path, file->data(), file->size())) return fail(e);
    jOutputs.push_back({{"slot", g.slots[out.slot].name}, {"path", out.path}, {"bytes", data->size()}});
    if (!o.json) note("wrote " + slotLabel(g, out.slot) + " to " + out.path);
  }
  bool allOk = true;
  for (const CheckSpec &c : chks) {
    auto data = readSlot(**dev, *bound, c.slot, 0, bytes[c.slot]);
    if (!data) return fail(data.error().withContext("--check " + c.arg));
    CompareResult r = compareElements(data->data(), c.expected.data(), data->size(), c.type, o.tol);
    allOk = allOk && r.ok;
    const std::string name = g.slots[c.slot].name;
    char stats[128];
    std::snprintf(stats, sizeof stats, "%llu x %s, max abs err %.3g, max %llu ulp",
                  static_cast<unsigned long long>(r.elements), scalarName(c.type), r.maxAbsErr,
                  static_cast<unsigned long long>(r.maxUlp));
    jChecks.push_back({{"slot", name}, {"expected", c.path}, {"ok", r.ok}, {"type", scalarName(c.type)},
                       {"elements", r.elements}, {"max_abs_err", r.maxAbsErr}, {"max_ulp", r.maxUlp},
                       {"message", r.ok ? std::string() : r.message}});
    if (!o.json) {
      if (r.ok) std::printf("check %s: ok (%s)\n", name.c_str(), stats);
      else std::printf("check %s: FAILED: %s (%s)\n", name.c_str(), r.message.c_str(), stats);
    }
  }

  double mean = 0, minMs = iterMs.empty() ? 0 : iterMs[0];
  const size_t from = iterMs.size() > 1 ? 1 : 0;
  for (size_t i = from; i < iterMs.size(); ++i) {
    mean += iterMs[i];
    minMs = std::min(minMs, iterMs[i]);
  }
  if (iterMs.size() > from) mean /= double(iterMs.size() - from);
  const double firstMs = iterMs.empty() ? 0 : iterMs[0];
  if (o.json) {
    nlohmann::json j = {
        {"file", o.file},
        {"device", deviceJson((*dev)->info())},
        {"nodes", (*exe)->graph().nodes.size()},
        {"iterations", iterations},
        {"timings_ms", {{"finalize", finalizeMs}, {"first_run", firstMs}, {"mean", mean}, {"min", minMs}}},
        {"outputs", jOutputs},
        {"checks", jChecks},
        {"host_output", hostLines},
        {"memory", memoryJson(**exe)},
        {"ok", allOk}};
    if (!tracePath.empty()) j["trace"] = tracePath;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("device: %s (%s)\n", spec.c_str(), (*dev)->info().name.c_str());
    std::printf("finalize: %.3f ms\nfirst run: %.3f ms\n", finalizeMs, firstMs);
    std::printf("%s\n", memoryLine(**exe).c_str());
    if (iterMs.size() > 1)
      std::printf("per iteration: mean %.3f ms, min %.3f ms over %zu iterations\n", mean, minMs,
                  iterMs.size() - 1);
    if (!tracePath.empty()) note("wrote trace (" + std::to_string(trace.eventCount()) + " events) to " + tracePath);
  }
  std::fflush(stdout);
  if (!allOk) {
    note("cgrun: error: check failed");
    return 1;
  }
  return 0;
}

} // namespace cgraph::cgrun
