#include "conformance.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace cgraph::conformance {

namespace {

using Bytes = std::vector<uint8_t>;

Graph requireGraph(const ManifestFile &f, const ManifestCase &c) {
  Expected<Graph> g = caseGraph(f, c);
  INFO(c.label() << ": " << (g ? std::string() : g.error().message()));
  REQUIRE(g);
  return std::move(*g);
}

// Runs the case's graph once on `d` on fresh buffers holding `inputs`; the buffers'
// contents afterwards, one per buffer argument.
std::vector<Bytes> runCase(rt::Device &d, const Graph &g, const std::vector<Bytes> &inputs,
                           rt::ExecMode mode) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  auto exe = d.finalize(g, fo);
  INFO(d.info().backend << ": " << (exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable t;
  for (const Bytes &in : inputs) {
    auto b = d.allocate(in.size(), 64);
    INFO(d.info().backend << ": " << (b ? std::string() : b.error().message()));
    REQUIRE(b);
    Error w = d.write(**b, 0, in.data(), in.size());
    INFO(w.message());
    REQUIRE_FALSE(w);
    t.slots.push_back({b->get()});
    bufs.push_back(std::move(*b));
  }
  auto ev = (*exe)->enqueue(t, {});
  INFO(d.info().backend << ": " << (ev ? std::string() : ev.error().message()));
  REQUIRE(ev);
  Error e = (*ev)->wait();
  INFO(e.message());
  REQUIRE_FALSE(e);
  std::vector<Bytes> out;
  for (size_t i = 0; i < bufs.size(); ++i) {
    Bytes got(inputs[i].size());
    Error r = d.read(*bufs[i], 0, got.data(), got.size());
    INFO(r.message());
    REQUIRE_FALSE(r);
    out.push_back(std::move(got));
  }
  return out;
}

// Every output of `got` against `expected` by kernel_manifest.h's rules, within `ulp`.
void compareCase(const ManifestCase &c, const std::vector<Bytes> &expected,
                 const std::vector<Bytes> &got, uint32_t ulp, const std::string &what) {
  const auto bufs = bufferArgs(c);
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (!bufs[i]->out) continue;
    INFO(c.label() << " (" << what << ")");
    CHECK(compareOutputs(*bufs[i], expected[i], got[i], ulp) == "");
  }
}

// Every output of `a` and `b` byte for byte.
void checkIdentical(const ManifestCase &c, const std::vector<Bytes> &a, const std::vector<Bytes> &b,
                    const std::string &what) {
  const auto bufs = bufferArgs(c);
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (!bufs[i]->out) continue;
    INFO(c.label() << " arg " << bufs[i]->name << " (" << what << ")");
    CHECK(a[i] == b[i]);
  }
}

// True when `c` is skipped on `t`, or on `other` where it has a device; the skip is then
// a section of its own that WARNs the table's reason.
bool reportSkip(const ManifestCase &c, const Target &t, const Target &other) {
  std::string on = t.backend;
  const Skip *s = findSkip(c, on);
  if (!s && other.device) {
    on = other.backend;
    s = findSkip(c, on);
  }
  if (!s) return false;
  DYNAMIC_SECTION(t.backend << ": " << c.label() << " (skipped)") {
    WARN("skipped on " << on << ": " << c.label() << ": " << s->reason);
  }
  return true;
}

void checkAgainstReference(const ManifestFile &f, const ManifestCase &c, const Target &t,
                           Reference ref) {
  const Graph g = requireGraph(f, c);
  const std::vector<Bytes> in = caseInputs(c);
  const auto replay = runCase(*t.device, g, in, rt::ExecMode::Replay);
  const auto eager = runCase(*t.device, g, in, rt::ExecMode::Eager);
  if (ref) {
    std::vector<Bytes> expected = in;
    ref(c, expected);
    compareCase(c, expected, replay, c.ulp, t.backend + " replay vs C++ reference");
    compareCase(c, expected, eager, c.ulp, t.backend + " eager vs C++ reference");
  } else {
    compareCase(c, replay, eager, 0, t.backend + " replay vs " + t.backend + " eager");
  }
  // Every output that starts zeroed was written (all zeros: the kernel never ran).
  const auto bufs = bufferArgs(c);
  for (size_t i = 0; i < bufs.size(); ++i)
    if (bufs[i]->out && bufs[i]->init == ManifestArg::Zero) {
      INFO(c.label() << ": " << bufs[i]->name);
      CHECK(std::any_of(replay[i].begin(), replay[i].end(), [](uint8_t v) { return v != 0; }));
      CHECK(std::any_of(eager[i].begin(), eager[i].end(), [](uint8_t v) { return v != 0; }));
    }
}

void checkAgainstPeer(const ManifestFile &f, const ManifestCase &c, const Target &t,
                      const Target &peer) {
  const Graph g = requireGraph(f, c);
  const std::vector<Bytes> in = caseInputs(c);
  const auto expected = runCase(*peer.device, g, in, rt::ExecMode::Replay);
  const auto replay = runCase(*t.device, g, in, rt::ExecMode::Replay);
  const auto eager = runCase(*t.device, g, in, rt::ExecMode::Eager);
  compareCase(c, expected, replay, c.ulp, t.backend + " replay vs " + peer.backend + " replay");
  checkIdentical(c, replay, eager, t.backend + " replay vs " + t.backend + " eager");
}

} // namespace

std::vector<std::string> kernelDirs() {
  const char *env = std::getenv("CGRAPH_TEST_SOURCE_DIR");
  const std::string root = env ? env : CGRAPH_SOURCE_DIR;
  return {root + "/tests/cpu/kernels", root + "/tests/opencl/kernels"};
}

std::vector<ManifestFile> loadSuite() {
  auto files = loadManifestFiles(kernelDirs());
  INFO((files ? std::string() : files.error().message()));
  REQUIRE(files); // a malformed manifest fails the suite, it is never skipped
  return std::move(*files);
}

void runKernelSuite(const Target &t, const Target &peer) {
  REQUIRE(t.device);
  size_t ran = 0, withReference = 0;
  for (const ManifestFile &f : loadSuite())
    for (const ManifestCase &c : f.cases) {
      if (reportSkip(c, t, peer)) continue;
      ++ran;
      const Reference ref = peer.device ? nullptr : findReference(c);
      if (ref) ++withReference;
      DYNAMIC_SECTION(t.backend << ": " << c.label()) {
        if (peer.device)
          checkAgainstPeer(f, c, t, peer);
        else
          checkAgainstReference(f, c, t, ref);
      }
    }
  CHECK(ran > 0);
  if (!peer.device) CHECK(withReference >= 10); // the references are in use
}

void compareWithoutReference(const Target &a, const Target &b) {
  REQUIRE(a.device);
  REQUIRE(b.device);
  for (const ManifestFile &f : loadSuite())
    for (const ManifestCase &c : f.cases) {
      if (findReference(c) || reportSkip(c, a, b)) continue;
      DYNAMIC_SECTION(a.backend << " vs " << b.backend << ": " << c.label()) {
        const Graph g = requireGraph(f, c);
        const std::vector<Bytes> in = caseInputs(c);
        const auto expected = runCase(*a.device, g, in, rt::ExecMode::Replay);
        const auto got = runCase(*b.device, g, in, rt::ExecMode::Replay);
        compareCase(c, expected, got, c.ulp, a.backend + " vs " + b.backend);
      }
    }
}

} // namespace cgraph::conformance
