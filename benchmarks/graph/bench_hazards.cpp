// Prints how long hazard inference (inferHazardEdges, the HazardTracker behind the
// Recorder and cgc) takes per node on programs of several shapes and sizes:
//   fan-out  one producer, then nodes that each read its slot and write their own
//            part of a second slot, then one node that overwrites the first slot
//   chain    every node updates one slot and reads a slot written once at the start
//   fan-in   nodes that each write their own part of a slot, then one that reads it all
//   random   fills, copies and kernels over random partial ranges of 16 slots
//   far      fills of disjoint parts of a slot, then a chain of copies that each read one
//            of them: every node's search for redundant edges runs to its bound
// Usage: bench_hazards [max nodes] (default 1000000; sizes 10k, 100k, then max)
#include <cgraph/graph/builder.h>
#include <cgraph/graph/hazards.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace cgraph;

namespace {

Slot slot(const std::string &name, uint64_t size) {
  Slot s;
  s.name = name;
  s.size = size;
  return s;
}

CopyOp copy(uint32_t src, uint64_t srcOff, uint32_t dst, uint64_t dstOff, uint64_t bytes) {
  CopyOp c;
  c.srcSlot = src;
  c.srcOffset = srcOff;
  c.dstSlot = dst;
  c.dstOffset = dstOff;
  c.bytes = bytes;
  return c;
}

FillOp fill(uint32_t slot, uint64_t off, uint64_t bytes) {
  FillOp f;
  f.slot = slot;
  f.offset = off;
  f.bytes = bytes;
  f.pattern = {0};
  return f;
}

// Kernel 0: (const in, out); kernel 1: (inout).
void addKernels(GraphBuilder &b) {
  b.addModule(KernelModule{"m.cl", {}});
  Kernel map;
  map.name = "map";
  map.module = 0;
  map.params = {KernelParam{"in", "const float*", ParamKind::GlobalBuffer, 8, kQualConst},
                KernelParam{"out", "float*", ParamKind::GlobalBuffer, 8, 0}};
  b.addKernel(map);
  Kernel acc;
  acc.name = "acc";
  acc.module = 0;
  acc.params = {KernelParam{"x", "float*", ParamKind::GlobalBuffer, 8, 0}};
  b.addKernel(acc);
}

Graph fanOut(uint32_t n) {
  GraphBuilder b("fan-out");
  b.addSlot(slot("x", 64));
  b.addSlot(slot("y", uint64_t(n) * 16));
  b.graph().nodes.reserve(n);
  b.addFill("produce", fill(0, 0, 64));
  for (uint32_t i = 0; i + 2 < n; ++i) b.addCopy("c" + std::to_string(i), copy(0, 0, 1, uint64_t(i) * 16, 16));
  b.addFill("overwrite", fill(0, 0, 64));
  return b.take();
}

Graph chain(uint32_t n) {
  GraphBuilder b("chain");
  b.addSlot(slot("shared", 4096));
  b.addSlot(slot("acc", 4096));
  addKernels(b);
  b.graph().nodes.reserve(n);
  b.addFill("init", fill(0, 0, 4096));
  for (uint32_t i = 0; i + 1 < n; ++i)
    b.addKernelNode("k" + std::to_string(i), 0, range1D(1024), {Arg::slot(0), Arg::slot(1)});
  return b.take();
}

Graph fanIn(uint32_t n) {
  GraphBuilder b("fan-in");
  b.addSlot(slot("parts", uint64_t(n) * 16));
  b.addSlot(slot("sum", 64));
  addKernels(b);
  b.graph().nodes.reserve(n);
  for (uint32_t i = 0; i + 1 < n; ++i) b.addFill("f" + std::to_string(i), fill(0, uint64_t(i) * 16, 16));
  b.addKernelNode("reduce", 0, range1D(1024), {Arg::slot(0), Arg::slot(1)});
  return b.take();
}

Graph randomRanges(uint32_t n) {
  const uint32_t slots = 16;
  const uint64_t size = 1 << 20;
  GraphBuilder b("random");
  for (uint32_t s = 0; s < slots; ++s) b.addSlot(slot("s" + std::to_string(s), size));
  addKernels(b);
  b.graph().nodes.reserve(n);
  std::mt19937_64 rng(42);
  auto pick = [&](uint64_t k) { return rng() % k; };
  for (uint32_t i = 0; i < n; ++i) {
    const std::string name = "n" + std::to_string(i);
    const uint64_t off = pick(size / 64) * 64;
    const uint64_t bytes = 64 * (1 + pick(64));
    switch (pick(4)) {
    case 0:
      b.addFill(name, fill(uint32_t(pick(slots)), std::min(off, size - bytes), bytes));
      break;
    case 1: {
      uint32_t src = uint32_t(pick(slots)), dst = uint32_t((src + 1 + pick(slots - 1)) % slots);
      b.addCopy(name, copy(src, std::min(off, size - bytes), dst, pick((size - bytes) / 64) * 64, bytes));
      break;
    }
    case 2:
      b.addKernelNode(name, 0, range1D(1024),
                      {Arg::slot(uint32_t(pick(slots)), off), Arg::slot(uint32_t(pick(slots)), pick(size / 64) * 64)});
      break;
    default:
      b.addKernelNode(name, 1, range1D(1024), {Arg::slot(uint32_t(pick(slots)), off)});
    }
  }
  return b.take();
}

Graph far(uint32_t n) {
  GraphBuilder b("far");
  const uint32_t half = n / 2;
  b.addSlot(slot("parts", uint64_t(half) * 16));
  b.addSlot(slot("acc", 16));
  b.graph().nodes.reserve(n);
  for (uint32_t i = 0; i < half; ++i) b.addFill("f" + std::to_string(i), fill(0, uint64_t(i) * 16, 16));
  for (uint32_t i = 0; i + half < n; ++i)
    b.addCopy("c" + std::to_string(i), copy(0, uint64_t(i % half) * 16, 1, 0, 16));
  return b.take();
}

} // namespace

int main(int argc, char **argv) {
  const uint32_t maxNodes = argc > 1 ? uint32_t(std::strtoul(argv[1], nullptr, 10)) : 1000000;
  struct Shape {
    const char *name;
    Graph (*make)(uint32_t);
  } shapes[] = {{"fan-out", fanOut}, {"chain", chain}, {"fan-in", fanIn}, {"random", randomRanges},
                   {"far", far}};
  std::vector<uint32_t> sizes;
  for (uint32_t n : {10000u, 100000u, maxNodes})
    if (n <= maxNodes && (sizes.empty() || n > sizes.back())) sizes.push_back(n);
  std::printf("%-8s %9s %10s %11s %10s\n", "shape", "nodes", "edges", "total ms", "ns/node");
  for (const Shape &s : shapes) {
    for (uint32_t n : sizes) {
      Graph g = s.make(n);
      auto t0 = std::chrono::steady_clock::now();
      std::vector<Edge> edges = inferHazardEdges(g);
      double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%-8s %9zu %10zu %11.1f %10.1f\n", s.name, g.nodes.size(), edges.size(), sec * 1e3,
                  sec * 1e9 / double(g.nodes.size()));
      std::fflush(stdout);
    }
  }
  return 0;
}
