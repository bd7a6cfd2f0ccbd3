// `cgrun compare` in a world of several ranks (under mpirun, or a launcher's RANK and
// WORLD_SIZE): every rank runs its part of the graph with the others (rank and world
// parameters from the world, collectives through its communicator) and, in the same
// process, the whole graph as a world of one (rank 0, world 1, --reference-param over
// --param: e.g. the global batch where each rank's --param gives its share). Each rank
// compares the slots both runs write alike: the --slot ones, or every slot some node
// writes that has the same size in both runs (a data-parallel step's weights, not its
// per-rank activations). Every rank learns every rank's verdict; the command fails on
// every rank when one rank differs, and rank 0 names each rank's first difference.
//
// The reference runs on the first --backend, each rank's part on the second (default:
// the first, on the rank's local device), in replay mode unless --modes says otherwise.
#include "common.h"

#include "cgraph/graph/hazards.h"

#include <cstdio>
#include <cstring>

namespace cgraph::cgrun {

namespace {

// One of the two runs: its graph (slot sizes for its parameters), parameters, device,
// executable and bound slots.
struct Run {
  std::string label;
  Graph g;
  rt::ParamValues params;
  rt::Device *dev = nullptr;
  std::unique_ptr<rt::Executable> exe;
  Bound bound;
  std::vector<uint64_t> bytes;
};

// Mode `i` (0: the one-process run, 1: the ranks') of --modes; replay when not given.
Expected<rt::ExecMode> modeAt(const CompareOptions &c, size_t i) {
  if (c.modes.empty()) return rt::ExecMode::Replay;
  auto m = parseModes(c.modes);
  if (!m) return m.error();
  return m->size() > i ? (*m)[i] : m->back();
}

// Loads the graph with `o`'s parameters (rank and world from `o`), sizes its slots,
// finalizes it on `spec` through `comm` (null: the world's communicator) and binds the
// inputs.
Error prepare(const CommonOptions &o, const std::string &spec, rt::ExecMode mode, rt::Communicator *comm,
              rt::Registry &registry, Run &r) {
  auto graph = loadGraph(o.file);
  if (!graph) return graph.error();
  auto params = parseParams(*graph, o);
  if (!params) return params.error();
  CGRAPH_RETURN_IF_ERROR(setRankParams(*graph, o, &*params));
  sizeSlotsForParams(*graph, {*params});
  r.g = std::move(*graph);
  r.params = std::move(*params);
  r.bytes = slotBytes(r.g);
  auto specs = parseInputs(r.g, o);
  if (!specs) return specs.error();
  rt::HostPolicy policy = hostPolicy(o);
  policy.output = [](const std::string &line) { note(line); };
  std::vector<bool> all(r.g.slots.size(), true); // every slot bound, so that every write can be read
  auto contents = initialContents(r.g, *specs, policy, all, true);
  if (!contents) return contents.error();
  auto dev = registry.open(spec);
  if (!dev) return dev.error();
  r.dev = *dev;
  rt::FinalizeOptions fo = finalizeOptions(o, policy);
  fo.mode = mode;
  if (comm) {
    fo.communicator = comm;
  } else {
    auto c = finalizeCommunicator(o, r.g, **dev, spec);
    if (!c) return c.error();
    fo.communicator = *c;
  }
  auto exe = (*dev)->finalize(r.g, fo);
  if (!exe) return exe.error().withContext(r.label);
  CGRAPH_RETURN_IF_ERROR(applyUpdates(**exe, o).withContext(r.label));
  r.exe = std::move(*exe);
  auto b = bindContents(**dev, r.g, *contents);
  if (!b) return b.error().withContext(r.label);
  r.bound = std::move(*b);
  auto ev = r.exe->enqueue(r.bound.table, r.params);
  if (!ev) return ev.error().withContext(r.label);
  return (*ev)->wait().withContext(r.label);
}

// The slots to compare: the --slot ones, else every slot a node writes whose size is the
// same in both runs.
Expected<std::vector<uint32_t>> slotsToCompare(const CompareOptions &c, const Run &ref, const Run &mine) {
  std::vector<uint32_t> out;
  if (!c.slots.empty()) {
    for (const std::string &name : c.slots) {
      auto s = findSlotArg(mine.g, name, "--slot");
      if (!s) return s.error();
      if (ref.bytes[*s] != mine.bytes[*s])
        return makeError("--slot " + name + ": " + std::to_string(ref.bytes[*s]) + " bytes in the one-process run, " +
                         std::to_string(mine.bytes[*s]) + " in each rank's: they cannot be compared");
      out.push_back(*s);
    }
    return out;
  }
  const Graph &fg = mine.exe->graph();
  std::vector<bool> written(fg.slots.size(), false);
  for (uint32_t n = 0; n < fg.nodes.size(); ++n)
    for (const SlotAccess &a : nodeAccesses(fg, n).accesses)
      if (a.write && a.slot < written.size()) written[a.slot] = true;
  for (uint32_t s = 0; s < written.size() && s < mine.bytes.size(); ++s)
    if (written[s] && ref.bytes[s] == mine.bytes[s]) out.push_back(s);
  if (out.empty()) return makeError("no slot is written with the same size in both runs; name them with --slot");
  return out;
}

// This rank's verdict: the first difference (empty: none) over `slots`.
Expected<std::string> firstDifference(const CompareOptions &c, const CommonOptions &o, Run &ref, Run &mine,
                                      const std::vector<uint32_t> &slots, nlohmann::json *j) {
  std::string first;
  for (uint32_t s : slots) {
    auto a = readSlot(*ref.dev, ref.bound, s, 0, ref.bytes[s]);
    if (!a) return a.error().withContext(ref.label);
    auto b = readSlot(*mine.dev, mine.bound, s, 0, mine.bytes[s]);
    if (!b) return b.error().withContext(mine.label);
    Verdict v = compareRange(a->data(), b->data(), a->size(), 0, slotType(mine.g, s), c, o.tol);
    v.j["slot"] = mine.g.slots[s].name;
    j->push_back(v.j);
    if (!v.ok && first.empty()) first = "slot '" + mine.g.slots[s].name + "': " + v.detail;
  }
  return first;
}

// Every rank's verdict (a fixed-size line each) on every rank.
Expected<std::vector<std::string>> gatherVerdicts(const CommonOptions &o, const std::string &mine) {
  constexpr size_t kLine = 512;
  std::vector<char> line(kLine, 0), all(kLine * o.world, 0);
  std::memcpy(line.data(), mine.data(), std::min(mine.size(), kLine - 1));
  CGRAPH_RETURN_IF_ERROR(o.comm->allGatherHost(line.data(), all.data(), kLine, o.collectiveTimeout,
                                               "cgrun compare's verdicts"));
  std::vector<std::string> out;
  for (uint32_t r = 0; r < o.world; ++r) out.emplace_back(all.data() + r * kLine);
  return out;
}

} // namespace

int compareRanksCommand(const CommonOptions &o, const CompareOptions &c) {
  if (o.backends.empty() || o.backends.size() > 2) {
    note("cgrun: error: compare needs one or two --backend options (the one-process run's, then the ranks')");
    return 2;
  }
  if (!o.comm) return fail(makeError("cgrun compare with several ranks needs a host communicator (MPI)"));
  auto refMode = modeAt(c, 0), rankMode = modeAt(c, 1);
  if (!refMode) return fail(refMode.error());
  if (!rankMode) return fail(rankMode.error());
  auto registry = makeRegistry(o.checkBounds);
  const std::string rankSpec = o.backends.size() == 2 ? o.backends[1] : deviceSpec(o.backends[0], o.device);

  CommonOptions one = o; // the one-process run: a world of one, its parameters over --param
  one.params.insert(one.params.end(), c.referenceParams.begin(), c.referenceParams.end());
  one.rank = 0;
  one.world = 1;
  one.ranks = nullptr;
  rt::LocalCommunicator local;
  one.comm = &local;
  Run ref, mine;
  ref.label = "the one-process run on " + o.backends[0];
  mine.label = "rank " + std::to_string(o.rank) + " of " + std::to_string(o.world) + " on " + rankSpec;
  std::string verdict;
  nlohmann::json jslots = nlohmann::json::array();
  Error e = prepare(one, o.backends[0], *refMode, &local, *registry, ref);
  if (!e) e = prepare(o, rankSpec, *rankMode, nullptr, *registry, mine);
  std::vector<uint32_t> slots;
  if (!e) {
    auto s = slotsToCompare(c, ref, mine);
    if (s) slots = std::move(*s);
    else e = s.error();
  }
  if (!e) {
    auto d = firstDifference(c, o, ref, mine, slots, &jslots);
    if (d) verdict = *d;
    else e = d.error();
  }
  if (e) verdict = "error: " + e.message();
  // Every rank's verdict, so that every rank exits alike (none is left waiting).
  auto all = gatherVerdicts(o, verdict.empty() ? "ok" : verdict);
  if (!all) return fail(all.error());
  if (o.ranks) o.ranks->endedTogether = true;
  bool ok = true;
  for (const std::string &v : *all) ok = ok && v == "ok";
  { // stdout: rank 0's, and the others' with --all-ranks (setupRanks)
    std::string names;
    for (uint32_t s : slots) names += (names.empty() ? "'" : ", '") + mine.g.slots[s].name + "'";
    if (o.json) {
      nlohmann::json j = {{"file", o.file}, {"world", o.world}, {"ok", ok}, {"rank", o.rank}, {"slots", jslots},
                          {"ranks", *all}};
      std::printf("%s\n", j.dump(2).c_str());
    } else if (ok) {
      std::printf("%u ranks agree with the one-process run on %s\n", o.world, names.c_str());
    }
    for (uint32_t r = 0; r < o.world && o.rank == 0; ++r)
      if ((*all)[r] != "ok") note("cgrun: rank " + std::to_string(r) + ": " + (*all)[r]);
  }
  std::fflush(stdout);
  if (e) return fail(e);
  if (!ok) {
    if (o.rank == 0) note("cgrun: error: the ranks' results differ from the one-process run");
    return 1;
  }
  return 0;
}

} // namespace cgraph::cgrun
