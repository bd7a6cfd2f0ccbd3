// `cgrun compare FILE.cgf --backend A --backend B`: both devices run the graph in Eager
// mode; after every node, the bytes it wrote (lib/graph nodeAccesses) are compared.
//
// Design: SubmitOptions::afterNode is called after each node of an eager submission.
// Device A runs first and snapshots what each node wrote, up to a memory budget; device
// B then runs and compares its bytes against the snapshots in its own hook, stopping at
// the first difference. When the budget fills before the end of the graph, both devices
// run again from the same inputs and the next nodes are snapshotted, so memory stays
// bounded without running the two devices in lockstep on shared threads (a hook that
// blocks a worker of one backend while waiting for the other could deadlock a pool).
// A backend that never calls afterNode gets a final-state comparison instead, and a note.
#include "common.h"

#include "cgraph/graph/hazards.h"

#include <cstdio>
#include <map>

namespace cgraph::cgrun {

namespace {

const char *const kStop = "cgrun-compare-stop";

int fail(const Error &e) {
  note("cgrun: error: " + e.message());
  return 1;
}

bool isStop(const Error &e) { return e && e.message().find(kStop) != std::string::npos; }

struct Snapshot {
  uint32_t slot;
  uint64_t offset;
  std::vector<uint8_t> bytes;
};

struct Side {
  std::string spec;
  rt::Device *dev = nullptr;
  std::unique_ptr<rt::Executable> exe;
  Bound bound;
};

// Byte ranges node `n` writes, clamped to the bound slot sizes.
std::vector<std::pair<uint32_t, std::pair<uint64_t, uint64_t>>>
writtenRanges(const Graph &g, uint32_t n, const std::vector<uint64_t> &bytes) {
  std::vector<std::pair<uint32_t, std::pair<uint64_t, uint64_t>>> out;
  for (const SlotAccess &a : nodeAccesses(g, n).accesses) {
    if (!a.write || a.slot >= bytes.size()) continue;
    const uint64_t end = std::min(a.end(), bytes[a.slot]);
    if (a.offset >= end) continue;
    out.push_back({a.slot, {a.offset, end - a.offset}});
  }
  return out;
}

std::string nodeName(const Graph &g, uint32_t n) {
  return g.nodes[n].name.empty() ? "#" + std::to_string(n) : g.nodes[n].name;
}

} // namespace

int compareCommand(const CommonOptions &o, uint64_t memoryBudget) {
  if (o.backends.size() != 2) {
    note("cgrun: error: compare needs exactly two --backend options (e.g. --backend cpu --backend opencl)");
    return 2;
  }
  Expected<Graph> graph = loadGraph(o.file);
  if (!graph) return fail(graph.error());
  const Graph &g = *graph;
  const std::vector<uint64_t> bytes = slotBytes(g);
  auto specs = parseInputs(g, o);
  if (!specs) return fail(specs.error());
  auto params = parseParams(g, o);
  if (!params) return fail(params.error());
  auto registry = makeRegistry();
  rt::HostPolicy policy = hostPolicy(o);
  policy.output = [](const std::string &line) { note(line); };
  // Every slot is bound by cgrun, so that every node's writes can be read back.
  std::vector<bool> all(g.slots.size(), true);
  auto contents = initialContents(g, *specs, policy, all, o.json);
  if (!contents) return fail(contents.error());

  Side sides[2];
  for (int i = 0; i < 2; ++i) {
    sides[i].spec = o.backends[i];
    auto dev = registry->open(sides[i].spec);
    if (!dev) return fail(dev.error());
    sides[i].dev = *dev;
    rt::FinalizeOptions fo;
    fo.mode = rt::ExecMode::Eager;
    fo.host = policy;
    auto exe = (*dev)->finalize(g, fo);
    if (!exe) return fail(exe.error().withContext(sides[i].spec));
    sides[i].exe = std::move(*exe);
    auto b = bindContents(**dev, g, *contents);
    if (!b) return fail(b.error().withContext(sides[i].spec));
    sides[i].bound = std::move(*b);
  }
  const Graph &fg = sides[0].exe->graph();
  if (fg.nodes.size() != sides[1].exe->graph().nodes.size())
    return fail(makeError("the two devices finalized different node counts (" +
                          std::to_string(fg.nodes.size()) + " vs " +
                          std::to_string(sides[1].exe->graph().nodes.size()) + ")"));

  std::vector<uint8_t> done(fg.nodes.size(), 0);
  size_t comparedNodes = 0;
  std::string difference;
  nlohmann::json jdiff;
  bool hookMissing = false;

  auto runSide = [&](Side &s, std::function<Error(uint32_t)> hook, uint64_t *calls) -> Error {
    CGRAPH_RETURN_IF_ERROR(uploadContents(*s.dev, s.bound, *contents));
    rt::SubmitOptions so;
    so.afterNode = [&, hook](uint32_t n) -> Error {
      ++*calls;
      return hook(n);
    };
    auto ev = s.exe->enqueue(s.bound.table, *params, so);
    // A backend may run eager submissions synchronously and report the hook's stop
    // from enqueue itself rather than from the event.
    if (!ev) return isStop(ev.error()) ? Error::success() : ev.error().withContext(s.spec);
    Error e = (*ev)->wait();
    if (e && !isStop(e)) return e.withContext(s.spec);
    return Error::success();
  };

  while (!hookMissing && difference.empty()) {
    std::map<uint32_t, std::vector<Snapshot>> snaps;
    uint64_t used = 0, callsA = 0, callsB = 0;
    Error e = runSide(sides[0], [&](uint32_t n) -> Error {
      if (n >= done.size() || done[n]) return Error::success();
      if (used >= memoryBudget && !snaps.empty()) return makeError(kStop);
      std::vector<Snapshot> &list = snaps[n];
      for (auto &r : writtenRanges(fg, n, bytes)) {
        auto data = readSlot(*sides[0].dev, sides[0].bound, r.first, r.second.first, r.second.second);
        if (!data) return data.error();
        used += data->size();
        list.push_back({r.first, r.second.first, std::move(*data)});
      }
      return Error::success();
    }, &callsA);
    if (e) return fail(e);
    if (callsA == 0 && !fg.nodes.empty()) {
      hookMissing = true;
      break;
    }
    if (snaps.empty()) break; // every node compared
    size_t remaining = snaps.size();
    e = runSide(sides[1], [&](uint32_t n) -> Error {
      auto it = snaps.find(n);
      if (it == snaps.end()) return Error::success();
      for (const Snapshot &sn : it->second) {
        auto data = readSlot(*sides[1].dev, sides[1].bound, sn.slot, sn.offset, sn.bytes.size());
        if (!data) return data.error();
        const ScalarType t = slotType(fg, sn.slot);
        CompareResult r = compareElements(sn.bytes.data(), data->data(), sn.bytes.size(), t, o.tol);
        if (!r.ok) {
          const uint64_t elem = sn.offset / scalarSize(t) + r.firstBad;
          difference = "node '" + nodeName(fg, n) + "' (index " + std::to_string(n) + ") writes slot '" +
                       fg.slots[sn.slot].name + "': element " + std::to_string(elem) + " differs: " +
                       r.gotText + " vs " + r.expectedText + " (" + o.backends[0] + " vs " +
                       o.backends[1] + ", " + scalarName(t) + ")";
          if (r.gotText.empty()) difference = "node '" + nodeName(fg, n) + "' (index " + std::to_string(n) +
                                              ") writes slot '" + fg.slots[sn.slot].name + "': " + r.message;
          jdiff = {{"node", nodeName(fg, n)}, {"index", n}, {"slot", fg.slots[sn.slot].name},
                   {"element", elem}, {"values", {r.gotText, r.expectedText}}, {"type", scalarName(t)}};
          return makeError(kStop);
        }
      }
      done[n] = 1;
      ++comparedNodes;
      if (--remaining == 0) return makeError(kStop);
      return Error::success();
    }, &callsB);
    if (e) return fail(e);
    if (callsB == 0 && !fg.nodes.empty()) {
      hookMissing = true;
      break;
    }
    if (difference.empty() && remaining != 0)
      return fail(makeError(o.backends[1] + " did not run every node " + o.backends[0] + " ran"));
  }

  std::string mode = "per node";
  if (hookMissing) {
    // Final state only: run both to the end, compare every slot some node writes.
    mode = "final state";
    note("cgrun: note: a backend does not call SubmitOptions::afterNode in eager mode; "
         "comparing final slot contents only");
    uint64_t unused = 0;
    for (Side &s : sides) {
      Error e = runSide(s, [](uint32_t) { return Error::success(); }, &unused);
      if (e) return fail(e);
    }
    std::vector<uint32_t> lastWriter(fg.slots.size(), kNone);
    for (uint32_t n = 0; n < fg.nodes.size(); ++n)
      for (auto &r : writtenRanges(fg, n, bytes)) lastWriter[r.first] = n;
    for (uint32_t s = 0; s < fg.slots.size() && difference.empty(); ++s) {
      if (lastWriter[s] == kNone) continue;
      auto a = readSlot(*sides[0].dev, sides[0].bound, s, 0, bytes[s]);
      auto b = readSlot(*sides[1].dev, sides[1].bound, s, 0, bytes[s]);
      if (!a) return fail(a.error());
      if (!b) return fail(b.error());
      const ScalarType t = slotType(fg, s);
      CompareResult r = compareElements(a->data(), b->data(), a->size(), t, o.tol);
      if (!r.ok) {
        difference = "slot '" + fg.slots[s].name + "' (last written by node '" +
                     nodeName(fg, lastWriter[s]) + "'): " + r.message;
        jdiff = {{"slot", fg.slots[s].name}, {"element", r.firstBad}, {"values", {r.gotText, r.expectedText}}};
      }
    }
  }

  if (o.json) {
    nlohmann::json j = {{"file", o.file}, {"backends", o.backends}, {"mode", mode},
                        {"nodes", fg.nodes.size()}, {"nodes_compared", comparedNodes},
                        {"ok", difference.empty()}};
    if (!difference.empty()) j["first_difference"] = jdiff;
    std::printf("%s\n", j.dump(2).c_str());
  } else if (difference.empty()) {
    std::printf("%s and %s agree on %s (%zu nodes)\n", o.backends[0].c_str(), o.backends[1].c_str(),
                mode == "per node" ? "every node" : "the final slot contents", fg.nodes.size());
  }
  if (!difference.empty()) {
    note("cgrun: error: " + difference);
    return 1;
  }
  return 0;
}

} // namespace cgraph::cgrun
