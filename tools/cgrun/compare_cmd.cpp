// `cgrun compare FILE.cgf --backend A [--backend B] [--modes M1[,M2]] [--norm l2]`:
// runs the graph on two sides (a device and an execution mode each) from the same
// inputs and compares what they wrote.
//
// Sides: with two backends, side 1 is the first (the reference) and side 2 the second;
// with one, both sides are that backend. --modes gives the sides' modes (one value: both
// sides). Defaults: one backend compares replay with eager; two backends compare both
// replays at the end, then both eager paths node by node.
//
// How: when both sides run eagerly and call SubmitOptions::afterNode, node by node (the
// first node whose written bytes differ is reported); otherwise (a replay side cannot
// stop after a node) every slot some node writes is compared once both have finished.
//
// Node by node: side 1 runs first and snapshots what each node wrote, up to a memory
// budget; side 2 then runs and compares its bytes against the snapshots in its own
// hook, stopping at the first difference. When the budget fills before the end of the
// graph, both run again from the same inputs and the next nodes are snapshotted, so
// memory stays bounded without running the two sides in lockstep on shared threads (a
// hook that blocks a worker of one backend while waiting for the other could deadlock a
// pool). A backend that never calls afterNode gets a final-state comparison and a note.
//
// Values: element by element (--rtol/--atol/--ulp, as --check), or with --norm l2 per
// compared range: ||b - a||_2 <= atol + rtol * ||a||_2 with a the first side, in the
// slot's element type (floats; integer slots stay element by element). Long float chains
// drift in single elements while the whole field agrees; the norm says so.
#include "common.h"

#include "cgraph/graph/hazards.h"
#include "cgraph/runtime/scalar_text.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

namespace cgraph::cgrun {

namespace {

// A hook returns this to end the side's run early (the run's error then carries it;
// runSide knows the stop by the flag it set, not by the error's text).
Error stopRun() { return makeError("stopped by cgrun compare after the node it needed"); }

const char *modeName(rt::ExecMode m) { return m == rt::ExecMode::Eager ? "eager" : "replay"; }

struct Snapshot {
  uint32_t slot;
  uint64_t offset;
  std::vector<uint8_t> bytes;
};

struct Side {
  std::string spec;
  rt::ExecMode mode = rt::ExecMode::Replay;
  rt::Device *dev = nullptr;
  std::unique_ptr<rt::Executable> exe;
  Bound bound;
  std::string label() const { return spec + " (" + modeName(mode) + ")"; }
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

// Everything the run needs besides the sides.
struct Setup {
  const CommonOptions *o;
  const CompareOptions *c;
  const Graph *g;
  std::vector<uint64_t> bytes;
  rt::ParamValues params;
  std::vector<std::vector<uint8_t>> contents;
  rt::HostPolicy policy;
};

// `hook(n, &stop)` runs after node n; setting `stop` ends the run there (not an error).
Error runSide(const Setup &s, Side &side, const std::function<Error(uint32_t, bool *)> &hook,
              uint64_t *calls) {
  CGRAPH_RETURN_IF_ERROR(uploadContents(*side.dev, side.bound, s.contents));
  rt::SubmitOptions so;
  bool stopped = false;
  if (hook)
    so.afterNode = [&](uint32_t n) -> Error {
      ++*calls;
      bool stop = false;
      CGRAPH_RETURN_IF_ERROR(hook(n, &stop));
      if (!stop) return Error::success();
      stopped = true;
      return stopRun();
    };
  auto ev = side.exe->enqueue(side.bound.table, s.params, so);
  // A backend may run eager submissions synchronously and report the hook's stop from
  // enqueue itself rather than from the event.
  if (!ev) return stopped ? Error::success() : ev.error().withContext(side.label());
  Error e = (*ev)->wait();
  if (e && !stopped) return e.withContext(side.label());
  return Error::success();
}

struct Outcome {
  std::string how = "per node";
  size_t nodesCompared = 0;
  std::string difference; // first failure, one line
  std::vector<std::string> details; // every failing slot (final state)
  nlohmann::json slots = nlohmann::json::array();
  nlohmann::json firstDifference;
};

// Final state: run both to the end, compare every slot some node writes.
Expected<Outcome> compareFinal(const Setup &s, Side (&sides)[2]) {
  Outcome out;
  out.how = "final state";
  const Graph &fg = sides[0].exe->graph();
  for (Side &side : sides)
    CGRAPH_RETURN_IF_ERROR(runSide(s, side, nullptr, nullptr));
  std::vector<uint32_t> lastWriter(fg.slots.size(), kNone);
  for (uint32_t n = 0; n < fg.nodes.size(); ++n)
    for (auto &r : writtenRanges(fg, n, s.bytes)) lastWriter[r.first] = n;
  for (uint32_t sl = 0; sl < fg.slots.size(); ++sl) {
    if (lastWriter[sl] == kNone) continue;
    auto a = readSlot(*sides[0].dev, sides[0].bound, sl, 0, s.bytes[sl]);
    if (!a) return a.error().withContext(sides[0].label());
    auto b = readSlot(*sides[1].dev, sides[1].bound, sl, 0, s.bytes[sl]);
    if (!b) return b.error().withContext(sides[1].label());
    Verdict v = compareRange(a->data(), b->data(), a->size(), 0, slotType(fg, sl), *s.c, s.o->tol);
    v.j["slot"] = fg.slots[sl].name;
    v.j["last_writer"] = nodeName(fg, lastWriter[sl]);
    out.slots.push_back(v.j);
    if (v.ok) continue;
    std::string line = "slot '" + fg.slots[sl].name + "' (last written by node '" +
                       nodeName(fg, lastWriter[sl]) + "', " + scalarName(v.type) + "): " + v.detail;
    out.details.push_back(line);
    if (out.difference.empty()) {
      out.difference = line;
      out.firstDifference = v.j;
    }
  }
  return out;
}

// Node by node (both sides eager); `hookMissing` when a side never calls afterNode.
Expected<Outcome> comparePerNode(const Setup &s, Side (&sides)[2], bool *hookMissing) {
  Outcome out;
  const Graph &fg = sides[0].exe->graph();
  std::vector<uint8_t> done(fg.nodes.size(), 0);
  *hookMissing = false;
  while (out.difference.empty()) {
    std::map<uint32_t, std::vector<Snapshot>> snaps;
    uint64_t used = 0, callsA = 0, callsB = 0;
    Error e = runSide(s, sides[0], [&](uint32_t n, bool *stop) -> Error {
      if (n >= done.size() || done[n]) return Error::success();
      if (used >= s.c->memoryBudget && !snaps.empty()) {
        *stop = true;
        return Error::success();
      }
      std::vector<Snapshot> &list = snaps[n];
      for (auto &r : writtenRanges(fg, n, s.bytes)) {
        auto data = readSlot(*sides[0].dev, sides[0].bound, r.first, r.second.first, r.second.second);
        if (!data) return data.error();
        used += data->size();
        list.push_back({r.first, r.second.first, std::move(*data)});
      }
      return Error::success();
    }, &callsA);
    if (e) return e;
    if (callsA == 0 && !fg.nodes.empty()) {
      *hookMissing = true;
      return out;
    }
    if (snaps.empty()) break; // every node compared
    size_t remaining = snaps.size();
    e = runSide(s, sides[1], [&](uint32_t n, bool *stop) -> Error {
      auto it = snaps.find(n);
      if (it == snaps.end()) return Error::success();
      for (const Snapshot &sn : it->second) {
        auto data = readSlot(*sides[1].dev, sides[1].bound, sn.slot, sn.offset, sn.bytes.size());
        if (!data) return data.error();
        const ScalarType t = slotType(fg, sn.slot);
        Verdict v = compareRange(sn.bytes.data(), data->data(), sn.bytes.size(), sn.offset / scalarSize(t),
                                 t, *s.c, s.o->tol);
        if (!v.ok) {
          out.difference = "node '" + nodeName(fg, n) + "' (index " + std::to_string(n) + ") writes slot '" +
                           fg.slots[sn.slot].name + "': " + v.detail + " (" + scalarName(t) + ")";
          v.j["node"] = nodeName(fg, n);
          v.j["index"] = n;
          v.j["slot"] = fg.slots[sn.slot].name;
          if (v.j.contains("first_bad")) {
            v.j["element"] = v.j["first_bad"]["element"];
            v.j["values"] = v.j["first_bad"]["values"];
          }
          out.firstDifference = v.j;
          out.slots.push_back(v.j);
          *stop = true;
          return Error::success();
        }
      }
      done[n] = 1;
      ++out.nodesCompared;
      *stop = --remaining == 0;
      return Error::success();
    }, &callsB);
    if (e) return e;
    if (callsB == 0 && !fg.nodes.empty()) {
      *hookMissing = true;
      return out;
    }
    if (out.difference.empty() && remaining != 0)
      return makeError(sides[1].label() + " did not run every node " + sides[0].label() + " ran");
  }
  return out;
}


} // namespace

Expected<std::vector<rt::ExecMode>> parseModes(const std::string &text) {
  std::vector<rt::ExecMode> modes;
  for (const std::string &m : splitList(text)) {
    if (m == "replay") modes.push_back(rt::ExecMode::Replay);
    else if (m == "eager") modes.push_back(rt::ExecMode::Eager);
    else return makeError("--modes " + text + ": '" + m + "' is not a mode (replay, eager)");
  }
  if (modes.size() > 2) return makeError("--modes " + text + ": at most two modes (one per side)");
  return modes;
}

int compareCommand(const CommonOptions &o, const CompareOptions &c) {
  if (o.backends.empty() || o.backends.size() > 2) {
    note("cgrun: error: compare needs one or two --backend options (e.g. --backend cpu --backend opencl)");
    return 2;
  }
  if (c.norm != "none" && c.norm != "l2") {
    note("cgrun: error: --norm " + c.norm + ": expected l2 or none");
    return 2;
  }
  // The comparisons to make: pairs of (side 1 mode, side 2 mode).
  std::vector<std::pair<rt::ExecMode, rt::ExecMode>> pairs;
  if (!c.modes.empty()) {
    auto m = parseModes(c.modes);
    if (!m) {
      note("cgrun: error: " + m.error().message());
      return 2;
    }
    pairs.push_back({m->front(), m->back()});
  } else if (o.backends.size() == 1) {
    pairs.push_back({rt::ExecMode::Replay, rt::ExecMode::Eager});
  } else {
    pairs.push_back({rt::ExecMode::Replay, rt::ExecMode::Replay});
    pairs.push_back({rt::ExecMode::Eager, rt::ExecMode::Eager});
  }
  const std::string specs[2] = {o.backends[0], o.backends.size() == 2 ? o.backends[1] : o.backends[0]};

  Expected<Graph> graph = loadGraph(o.file);
  if (!graph) return fail(graph.error());
  auto params = parseParams(*graph, o);
  if (!params) return fail(params.error());
  sizeSlotsForParams(*graph, {*params}); // slot sizes that depend on parameters
  Setup s;
  s.o = &o;
  s.c = &c;
  s.g = &*graph;
  const Graph &g = *graph;
  s.bytes = slotBytes(g);
  auto inputs = parseInputs(g, o);
  if (!inputs) return fail(inputs.error());
  s.params = std::move(*params);
  auto registry = makeRegistry(o.checkBounds);
  s.policy = hostPolicy(o);
  s.policy.output = [](const std::string &line) { note(line); };
  // Every slot is bound by cgrun, so that every node's writes can be read back.
  std::vector<bool> all(g.slots.size(), true);
  auto contents = initialContents(g, *inputs, s.policy, all, o.json);
  if (!contents) return fail(contents.error());
  s.contents = std::move(*contents);

  nlohmann::json jcomps = nlohmann::json::array();
  nlohmann::json firstDifference;
  std::string firstError;
  bool allOk = true;
  size_t nodes = 0;
  for (const auto &pair : pairs) {
    Side sides[2];
    for (int i = 0; i < 2; ++i) {
      sides[i].spec = specs[i];
      sides[i].mode = i == 0 ? pair.first : pair.second;
      auto dev = registry->open(sides[i].spec);
      if (!dev) return fail(dev.error());
      sides[i].dev = *dev;
      rt::FinalizeOptions fo = finalizeOptions(o, s.policy);
      fo.mode = sides[i].mode;
      auto exe = (*dev)->finalize(g, fo);
      if (!exe) return fail(exe.error().withContext(sides[i].label()));
      if (Error e = applyUpdates(**exe, o)) return fail(e.withContext(sides[i].label()));
      sides[i].exe = std::move(*exe);
      auto b = bindContents(**dev, g, s.contents);
      if (!b) return fail(b.error().withContext(sides[i].label()));
      sides[i].bound = std::move(*b);
    }
    const Graph &fg = sides[0].exe->graph();
    nodes = fg.nodes.size();
    if (fg.nodes.size() != sides[1].exe->graph().nodes.size())
      return fail(makeError("the two sides finalized different node counts (" + std::to_string(fg.nodes.size()) +
                            " vs " + std::to_string(sides[1].exe->graph().nodes.size()) + ")"));
    const std::string what = sides[0].label() + " and " + sides[1].label();
    const bool perNode = pair.first == rt::ExecMode::Eager && pair.second == rt::ExecMode::Eager;
    bool hookMissing = false;
    Expected<Outcome> out = perNode ? comparePerNode(s, sides, &hookMissing) : compareFinal(s, sides);
    if (!out) return fail(out.error());
    if (hookMissing) {
      note("cgrun: note: " + what + ": a backend does not call SubmitOptions::afterNode in eager mode; "
           "comparing final slot contents only");
      Expected<Outcome> fin = compareFinal(s, sides);
      if (!fin) return fail(fin.error());
      *out = std::move(*fin);
    }
    const bool ok = out->difference.empty();
    allOk = allOk && ok;
    nlohmann::json jside = nlohmann::json::array();
    for (const Side &sd : sides) jside.push_back({{"backend", sd.spec}, {"mode", modeName(sd.mode)}});
    nlohmann::json jc = {{"sides", jside}, {"how", out->how}, {"nodes", fg.nodes.size()},
                         {"nodes_compared", out->nodesCompared}, {"ok", ok}, {"slots", out->slots}};
    if (!ok) {
      jc["first_difference"] = out->firstDifference;
      if (firstDifference.is_null()) firstDifference = out->firstDifference;
    }
    jcomps.push_back(jc);
    if (ok) {
      if (!o.json) {
        if (out->how == "per node")
          std::printf("%s agree on every node (%zu nodes)\n", what.c_str(), fg.nodes.size());
        else
          std::printf("%s agree on the final contents of %zu written slots (%zu nodes)\n", what.c_str(),
                      out->slots.size(), fg.nodes.size());
      }
      continue;
    }
    // Every failing slot on stderr; the first one in the closing error line.
    const std::string vs = sides[0].label() + " vs " + sides[1].label() + ": ";
    if (firstError.empty()) firstError = vs + out->difference;
    else note("cgrun: note: " + vs + out->difference);
    for (size_t i = 1; i < out->details.size(); ++i) note("cgrun: note: " + vs + out->details[i]);
  }

  if (o.json) {
    nlohmann::json j = {{"file", o.file},
                        {"backends", o.backends},
                        {"nodes", nodes},
                        {"tolerance",
                         {{"rtol", o.tol.rtol}, {"atol", o.tol.atol}, {"ulp", o.tol.ulp}, {"norm", c.norm}}},
                        {"comparisons", jcomps},
                        {"ok", allOk}};
    if (!allOk) j["first_difference"] = firstDifference;
    std::printf("%s\n", j.dump(2).c_str());
  }
  std::fflush(stdout);
  if (!allOk) {
    note("cgrun: error: " + firstError);
    return 1;
  }
  return 0;
}

} // namespace cgraph::cgrun
