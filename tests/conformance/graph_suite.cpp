// The graph conformance suite's runner (graph_suite.h) over the cases of graph_cases.h.
#include "graph_suite.h"

#include "graph_cases.h"

#include "../common/transfer_conformance.h" // firstDifference

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>

namespace cgraph::conformance {

namespace {

// The host tasks' lines of one executable, as FinalizeOptions::host::output gets them.
struct HostLines {
  std::mutex m;
  std::vector<std::string> lines;
  bool contains(const std::string &text) {
    std::lock_guard<std::mutex> lock(m);
    for (const std::string &l : lines)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }
};

// One buffer per external slot, filled with the case's inputs; the binding table.
struct Bound {
  std::vector<std::unique_ptr<rt::Buffer>> buffers; // by slot (null: not external)
  rt::BindingTable table;
};

Bound bindInputs(rt::Device &d, const GraphCase &c) {
  Bound b;
  b.buffers.resize(c.graph.slots.size());
  b.table.slots.resize(c.graph.slots.size());
  for (uint32_t s = 0; s < c.graph.slots.size(); ++s) {
    if (c.inputs[s].empty()) continue;
    auto buf = d.allocate(c.inputs[s].size(), 64);
    INFO((buf ? std::string() : buf.error().message()));
    REQUIRE(buf);
    Error w = d.write(**buf, 0, c.inputs[s].data(), c.inputs[s].size());
    INFO(w.message());
    REQUIRE_FALSE(w);
    b.table.slots[s].buffer = buf->get();
    b.buffers[s] = std::move(*buf);
  }
  return b;
}

void applyUpdates(rt::Executable &exe, const Submission &run) {
  for (const NamedUpdate &u : run.updates) {
    rt::NodeUpdate update = u.update;
    update.node = exe.findNode(u.node);
    INFO("update of node '" << u.node << "'");
    REQUIRE(update.node != kNone);
    Error e = exe.update(update);
    INFO(e.message());
    REQUIRE_FALSE(e);
  }
}

void checkRun(rt::Device &d, rt::Executable &exe, Bound &b, HostLines &host, const Submission &run) {
  applyUpdates(exe, run);
  rt::ParamValues params;
  params.bits = run.params;
  auto ev = exe.enqueue(b.table, params);
  INFO((ev ? std::string() : ev.error().message()));
  REQUIRE(ev);
  Error e = (*ev)->wait();
  if (run.fails) {
    INFO("the submission must fail with \"" << run.failure << "\"; it gave: " << e.message());
    CHECK(e);
    CHECK(e.message().find(run.failure) != std::string::npos);
    return;
  }
  INFO(e.message());
  REQUIRE_FALSE(e);
  for (const auto &[slot, want] : run.want) {
    Bytes got(want.size());
    Error r = d.read(*b.buffers[slot], 0, got.data(), got.size());
    INFO(r.message());
    REQUIRE_FALSE(r);
    INFO("slot '" << exe.graph().slots[slot].name << "': " << firstDifference(want, got));
    CHECK(got == want);
  }
  if (!run.hostLine.empty()) {
    INFO("a host task line with \"" << run.hostLine << "\"");
    CHECK(host.contains(run.hostLine));
  }
}

void runCase(rt::Device &d, const GraphCase &c, rt::ExecMode mode) {
  auto host = std::make_shared<HostLines>();
  rt::FinalizeOptions fo;
  fo.mode = mode;
  fo.host.output = [host](const std::string &line) {
    std::lock_guard<std::mutex> lock(host->m);
    host->lines.push_back(line);
  };
  auto exe = d.finalize(c.graph, fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  Bound b = bindInputs(d, c);
  for (size_t i = 0; i < c.runs.size(); ++i) {
    INFO("submission " << i);
    checkRun(d, **exe, b, *host, c.runs[i]);
  }
}

} // namespace

std::vector<std::string> graphCaseNames() {
  std::vector<std::string> names;
  for (const GraphCase &c : graphCases()) names.push_back(c.name);
  return names;
}

const Skip *findGraphSkip(const std::string &name, const std::string &backend) {
  for (const Skip &s : skips())
    if (std::string(s.caseId) == "graph:" + name && (std::string(s.backend) == "*" || backend == s.backend))
      return &s;
  return nullptr;
}

void runGraphSuite(const Target &t) {
  REQUIRE(t.device);
  size_t ran = 0;
  for (const GraphCase &c : graphCases()) {
    if (const Skip *s = findGraphSkip(c.name, t.backend)) {
      DYNAMIC_SECTION(t.backend << " graph: " << c.name << " (skipped)") { WARN("skipped: " << s->reason); }
      continue;
    }
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      DYNAMIC_SECTION(t.backend << " graph: " << c.name << (mode == rt::ExecMode::Replay ? " (replay)" : " (eager)")) {
        runCase(*t.device, c, mode);
      }
    }
    ++ran;
  }
  CHECK(ran > 0);
}

} // namespace cgraph::conformance
