// `cgrun bench FILE.cgf`: eager vs replay vs replay with a new binding table each
// iteration; host submit time (enqueue returns) and total time (wait returns).
// `--param n=64 --param n=128` (a parameter given more than once) adds a mode
// "replay-reshape" that cycles through the values, one per iteration: the cost of a
// shape change (stored expressions re-evaluated, a recording per shape) next to plain
// replay, which runs with the first values. On devices that support updates, modes
// "update-node" (one kernel node's arguments set before each submission) and
// "update-graph" (a whole-graph update from the file's graph before each) time the
// update itself ("update" rows) and the submission after it ("total" includes both).
#include "common.h"

#include "cgraph/runtime/multi_device.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>

namespace cgraph::cgrun {

namespace {

double cpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

struct Samples {
  std::vector<double> submitUs, totalUs, cpuUs, updateUs;
};

struct Stats {
  double min, median, max;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  const double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return {v.front(), med, v.back()};
}

struct Mode {
  const char *name;
  rt::ExecMode exec;
  bool rebind;
  bool reshape = false;
  enum Update { None, Node, Whole } update = None; // an update before every submission
  // Each timed run is kStreamBatch submissions back to back, only the last waited for:
  // a sample is the batch's time / kStreamBatch (throughput, as GPU libraries time
  // kernels with events around many launches), submit the batch's mean enqueue time.
  bool stream = false;
};
constexpr uint32_t kStreamBatch = 10;

// The parameter value sets of `--param` given more than once: set i takes the i-th
// value of each repeated parameter (all repeated ones need the same count) and the only
// value of the others. One set when no parameter repeats.
// One parameter set of the run: its values and, where a --param was given several
// times, the label of its rows ("n=64"; empty otherwise).
struct Shape {
  rt::ParamValues values;
  std::string label;
};

Expected<std::vector<Shape>> paramShapes(const Graph &g, const CommonOptions &o) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> byName;
  for (const std::string &p : o.params) {
    const size_t eq = p.find('=');
    if (eq == std::string::npos) return makeError("--param " + p + ": expected name=value");
    const std::string name = p.substr(0, eq);
    if (!byName.count(name)) order.push_back(name);
    byName[name].push_back(p.substr(eq + 1));
  }
  size_t count = 1;
  for (const std::string &n : order) {
    const size_t c = byName[n].size();
    if (c == 1) continue;
    if (count > 1 && c != count)
      return makeError("--param: the repeated parameters need the same number of values ('" + n +
                       "' has " + std::to_string(c) + ", another " + std::to_string(count) + ")");
    count = c;
  }
  std::vector<Shape> out(count);
  for (size_t i = 0; i < count; ++i)
    for (const std::string &n : order) {
      const std::vector<std::string> &vals = byName[n];
      const std::string &v = vals[vals.size() == 1 ? 0 : i];
      Error e = out[i].values.set(g, n, v);
      if (e) return e.withContext("--param " + n + "=" + v);
      if (vals.size() > 1) out[i].label += (out[i].label.empty() ? "" : ",") + n + "=" + v;
    }
  return out;
}

} // namespace

int benchCommand(const CommonOptions &o, const BenchOptions &b) {
  Expected<Graph> graph = loadGraph(o.file);
  if (!graph) return fail(graph.error());
  auto shapes = paramShapes(*graph, o);
  if (!shapes) return fail(shapes.error());
  // Slot sizes that depend on parameters: buffers for the largest shape.
  std::vector<rt::ParamValues> shapeValues;
  std::string cycleLabel; // replay-reshape's rows: every shape, in turn
  for (Shape &sh : *shapes) {
    if (Error e = setRankParams(*graph, o, &sh.values)) return fail(e);
    shapeValues.push_back(sh.values);
    cycleLabel += (cycleLabel.empty() ? "" : "|") + sh.label;
  }
  sizeSlotsForParams(*graph, shapeValues);
  const Graph &g = *graph;
  auto specs = parseInputs(g, o);
  if (!specs) return fail(specs.error());
  auto registry = makeRegistry(o.checkBounds);
  const std::string spec = deviceSpec(o.backends.empty() ? "" : o.backends[0], o.device);
  Expected<rt::Device *> dev = registry->open(spec);
  if (!dev) return fail(dev.error());
  // More than one --backend: the device list of a multi-device graph.
  std::vector<rt::Device *> devices{*dev};
  for (size_t b = 1; b < o.backends.size(); ++b) {
    Expected<rt::Device *> d = registry->open(o.backends[b]);
    if (!d) return fail(d.error());
    devices.push_back(*d);
  }
  rt::HostPolicy policy = hostPolicy(o);
  policy.output = [](const std::string &) {}; // host task text would distort timings
  std::vector<bool> none(g.slots.size(), false);
  auto contents = initialContents(g, *specs, policy, none, true);
  if (!contents) return fail(contents.error());
  // Two buffer sets with the same contents: the rebinding mode alternates between them.
  auto setA = bindContents(**dev, g, *contents);
  if (!setA) return fail(setA.error());
  auto setB = bindContents(**dev, g, *contents);
  if (!setB) return fail(setB.error());

  // Every mode, then the ones that apply here, then the ones asked for (--modes).
  const bool reshape = shapes->size() > 1;
  bool updates = true;
  for (rt::Device *d : devices) updates = updates && d->info().caps.nodeUpdate;
  // The cost of updates next to replay: one kernel node's arguments set (to the same
  // values) before each submission, or a whole-graph update from the file's graph.
  uint32_t updated = kNone;
  for (uint32_t n = 0; n < g.nodes.size() && updated == kNone; ++n)
    if (g.nodes[n].kind == NodeKind::Kernel && g.subgraphs.empty()) updated = n;
  struct Candidate {
    Mode mode;
    bool byDefault;
    std::string unavailable; // why the mode can't run here ("" when it can)
  };
  const std::string noUpdates = spec + " does not support executable updates";
  const std::vector<Candidate> all = {
      {{"eager", rt::ExecMode::Eager, false}, true, ""},
      {{"replay", rt::ExecMode::Replay, false}, true, ""},
      {{"replay-rebind", rt::ExecMode::Replay, true}, true, ""},
      {{"replay-stream", rt::ExecMode::Replay, false, false, Mode::None, true}, false, ""},
      {{"replay-reshape", rt::ExecMode::Replay, false, true}, true,
       reshape ? "" : "it needs a --param given more than once"},
      {{"update-node", rt::ExecMode::Replay, false, false, Mode::Node}, false,
       !updates ? noUpdates : updated == kNone ? "the graph has no kernel node to update" : ""},
      {{"update-graph", rt::ExecMode::Replay, false, false, Mode::Whole}, false,
       updates ? "" : noUpdates}};
  std::vector<Mode> modes;
  if (b.modes.empty() || b.modes == "all") {
    for (const Candidate &c : all)
      if (c.unavailable.empty() && (c.byDefault || !b.modes.empty())) modes.push_back(c.mode);
  } else {
    for (const std::string &name : splitList(b.modes)) {
      auto it = std::find_if(all.begin(), all.end(), [&](const Candidate &c) { return name == c.mode.name; });
      if (it == all.end())
        return usage("--modes: unknown mode '" + name +
                     "' (eager, replay, replay-rebind, replay-stream, replay-reshape, update-node, update-graph, all)");
      if (!it->unavailable.empty()) return usage("--modes: " + name + ": " + it->unavailable);
      if (std::none_of(modes.begin(), modes.end(), [&](const Mode &m) { return name == m.name; }))
        modes.push_back(it->mode);
    }
  }
  struct Result {
    const Mode *mode;
    std::string params; // the parameter values of its runs ("" when none vary)
    double finalizeMs;
    size_t nodes;
    Samples s;
  };
  std::vector<Result> results;
  auto comm = finalizeCommunicator(o, g, **dev, spec);
  if (!comm) return fail(comm.error());
  // Every mode once per parameter set (its rows labelled with the values); the reshape
  // mode once, cycling through them.
  struct Run {
    const Mode *mode;
    size_t shape;
  };
  std::vector<Run> runs;
  for (const Mode &m : modes)
    for (size_t si = 0; si < (m.reshape ? size_t(1) : shapes->size()); ++si) runs.push_back({&m, si});
  for (const Run &run : runs) {
    const Mode &m = *run.mode;
    const rt::ParamValues *params = &shapeValues[run.shape];
    rt::FinalizeOptions fo = finalizeOptions(o, policy);
    fo.mode = m.exec;
    fo.communicator = *comm;
    auto t0 = std::chrono::steady_clock::now();
    auto exe = rt::finalizeMultiDevice(devices, g, fo);
    const double finMs = msSince(t0);
    if (!exe) return fail(exe.error().withContext(m.name));
    if (Error e = applyUpdates(**exe, o)) return fail(e.withContext(m.name));
    Result r{&m, m.reshape ? cycleLabel : (*shapes)[run.shape].label, finMs, (*exe)->graph().nodes.size(), {}};
    rt::NodeUpdate same;
    if (m.update == Mode::Node) {
      same.node = updated;
      const Node &node = (*exe)->graph().nodes[updated];
      for (uint32_t a = 0; a < node.args.size(); ++a) same.args.emplace_back(a, node.args[a]);
    }
    const double minTimeUs = b.minTime * 1e6;
    double spentUs = 0;
    const uint32_t total = b.warmup + b.repetitions;
    for (uint32_t i = 0; i < total || spentUs < minTimeUs; ++i) {
      const rt::BindingTable &table = (m.rebind && (i & 1)) ? setB->table : setA->table;
      const double c0 = cpuNow();
      auto s = std::chrono::steady_clock::now();
      if (m.update != Mode::None) {
        Error ue = m.update == Mode::Node ? (*exe)->update(same) : (*exe)->update(g);
        if (ue) return fail(ue.withContext(m.name));
        if (i >= b.warmup)
          r.s.updateUs.push_back(double(nsBetween(s, std::chrono::steady_clock::now())) / 1e3);
      }
      const rt::ParamValues &pv = m.reshape ? shapeValues[i % shapeValues.size()] : *params;
      const uint32_t batch = m.stream ? kStreamBatch : 1;
      std::vector<rt::EventPtr> evs;
      for (uint32_t k = 0; k < batch; ++k) {
        auto ev = (*exe)->enqueue(table, pv);
        if (!ev) return fail(ev.error().withContext(m.name));
        evs.push_back(std::move(*ev));
      }
      auto submitted = std::chrono::steady_clock::now();
      Error e;
      for (auto &ev : evs) // in order: the last one's completion is the batch's
        if (Error we = ev->wait(); we && !e) e = std::move(we);
      auto done = std::chrono::steady_clock::now();
      const double c1 = cpuNow();
      if (e) return fail(e.withContext(m.name));
      if (i < b.warmup) continue;
      r.s.submitUs.push_back(double(nsBetween(s, submitted)) / 1e3 / batch);
      r.s.totalUs.push_back(double(nsBetween(s, done)) / 1e3 / batch);
      r.s.cpuUs.push_back((c1 - c0) * 1e6 / batch);
      spentUs += r.s.totalUs.back() * batch;
      if (progressEnabled(o))
        std::fprintf(stderr, "\rcgrun: %s %zu", m.name, r.s.totalUs.size());
    }
    if (progressEnabled(o)) std::fprintf(stderr, "\n");
    results.push_back(std::move(r));
  }

  if (o.json) {
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    char date[64];
    std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
    nlohmann::json ctx = {{"date", date},
                          {"host_name", host},
                          {"executable", "cgrun"},
                          {"num_cpus", sysconf(_SC_NPROCESSORS_ONLN)},
                          {"mhz_per_cpu", 0},
                          {"cpu_scaling_enabled", false},
                          {"caches", nlohmann::json::array()},
                          {"library_build_type", "release"},
                          {"cgraph_file", o.file},
                          {"cgraph_device", deviceJson((*dev)->info())}};
    nlohmann::json benches = nlohmann::json::array();
    const std::string base = g.name.empty() ? "graph" : g.name;
    for (const Result &r : results) {
      std::vector<std::pair<const char *, const std::vector<double> *>> metrics = {
          {"submit", &r.s.submitUs}, {"total", &r.s.totalUs}};
      if (!r.s.updateUs.empty()) metrics.insert(metrics.begin(), {"update", &r.s.updateUs});
      for (const auto &mt : metrics) {
        const std::string runName =
            base + "/" + r.mode->name + "/" + (r.params.empty() ? "" : r.params + "/") + mt.first;
        Stats st = stats(*mt.second);
        Stats cpu = stats(r.s.cpuUs);
        const std::pair<const char *, double> aggs[] = {
            {"min", st.min}, {"median", st.median}, {"max", st.max}};
        const double cpuAgg[] = {cpu.min, cpu.median, cpu.max};
        for (size_t a = 0; a < 3; ++a) {
          benches.push_back({{"name", runName + "_" + aggs[a].first},
                             {"run_name", runName},
                             {"run_type", "aggregate"},
                             {"aggregate_name", aggs[a].first},
                             {"repetitions", mt.second->size()},
                             {"threads", 1},
                             {"iterations", mt.second->size()},
                             {"real_time", aggs[a].second},
                             {"cpu_time", cpuAgg[a]},
                             {"time_unit", "us"},
                             {"nodes", r.nodes},
                             {"per_node_us", r.nodes ? aggs[a].second / double(r.nodes) : 0.0},
                             {"finalize_ms", r.finalizeMs},
                             {"params", r.params}});
        }
      }
    }
    std::printf("%s\n", nlohmann::json({{"context", ctx}, {"benchmarks", benches}}).dump(2).c_str());
    return 0;
  }

  std::string shown = spec + " (" + (*dev)->info().name + ")";
  for (size_t d = 1; d < devices.size(); ++d)
    shown += " + " + o.backends[d] + " (" + devices[d]->info().name + ")";
  std::printf("device: %s, %zu nodes, warm-up %u, repetitions %zu+\n", shown.c_str(), results.empty() ? size_t(0) : results[0].nodes, b.warmup,
              size_t(b.repetitions));
  // A params column where a --param was given several times.
  int paramsWidth = 0;
  for (const Result &r : results) paramsWidth = std::max(paramsWidth, int(r.params.size()));
  const std::string paramsHead = paramsWidth ? "params" : "";
  if (paramsWidth) paramsWidth = std::max(paramsWidth, int(paramsHead.size())) + 1;
  std::printf("%-14s %-*s%-7s %12s %12s %12s %14s %12s\n", "mode", paramsWidth, paramsHead.c_str(), "time",
              "min us", "median us", "max us", "median us/node", "finalize ms");
  for (const Result &r : results) {
    std::vector<std::pair<const char *, const std::vector<double> *>> metrics = {
        {"submit", &r.s.submitUs}, {"total", &r.s.totalUs}};
    if (!r.s.updateUs.empty()) metrics.insert(metrics.begin(), {"update", &r.s.updateUs});
    for (const auto &mt : metrics) {
      Stats st = stats(*mt.second);
      std::printf("%-14s %-*s%-7s %12.2f %12.2f %12.2f %14.3f %12.2f\n", r.mode->name, paramsWidth,
                  r.params.c_str(), mt.first, st.min, st.median, st.max,
                  r.nodes ? st.median / double(r.nodes) : 0.0, r.finalizeMs);
    }
  }
  return 0;
}

} // namespace cgraph::cgrun
