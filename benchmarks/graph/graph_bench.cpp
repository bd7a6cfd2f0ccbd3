// Prints how long the graph library takes on large recorded graphs:
// recording (hazard inference), execution order, partitions, validation, slot requirements.
// Usage: graph_bench [nodes] [slots]
#include <cgraph/graph/hazards.h>
#include <cgraph/graph/order.h>
#include <cgraph/graph/recorder.h>
#include <cgraph/graph/validate.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace cgraph;

namespace {
double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
} // namespace

int main(int argc, char **argv) {
  uint32_t nodes = argc > 1 ? uint32_t(std::atoi(argv[1])) : 20000;
  uint32_t slots = argc > 2 ? uint32_t(std::atoi(argv[2])) : 64;
  Recorder r("bench");
  for (uint32_t s = 0; s < slots; ++s) r.addSlot(Slot{"s" + std::to_string(s), 1 << 20, 16, 0, SlotInit::External, {}, {}});
  r.addModule(KernelModule{"m.cl", {}});
  Kernel k;
  k.name = "axpy";
  k.module = 0;
  k.params = {KernelParam{"x", "const float*", ParamKind::GlobalBuffer, 4, kQualConst},
              KernelParam{"y", "float*", ParamKind::GlobalBuffer, 4, 0}};
  r.addKernel(k);
  auto t0 = std::chrono::steady_clock::now();
  // Each kernel reads one slot and updates another: a mesh of RAW/WAR/WAW hazards.
  for (uint32_t i = 0; i < nodes; ++i)
    r.addKernelNode("k" + std::to_string(i), 0, range1D(4096, 64),
                    {Arg::slot((i * 7) % slots), Arg::slot((i * 13 + 1) % slots)});
  double tRecord = secondsSince(t0);
  Graph g = r.take();

  t0 = std::chrono::steady_clock::now();
  auto dfs = executionOrder(g, OrderKind::DepthFirst);
  double tDfs = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  auto bfs = executionOrder(g, OrderKind::BreadthFirst);
  double tBfs = secondsSince(t0);
  if (!dfs || !bfs) return 1;
  t0 = std::chrono::steady_clock::now();
  auto parts = computePartitions(g, *dfs);
  double tParts = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  auto diags = validateGraph(g);
  double tValidate = secondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  auto req = slotRequirements(g);
  double tReq = secondsSince(t0);

  std::printf("graph_bench: %u nodes, %u slots, %zu inferred edges\n", nodes, slots, g.edges.size());
  std::printf("  record (hazard inference) %8.3f ms  %6.3f us/node\n", tRecord * 1e3, tRecord * 1e6 / nodes);
  std::printf("  order depth-first         %8.3f ms\n", tDfs * 1e3);
  std::printf("  order breadth-first       %8.3f ms\n", tBfs * 1e3);
  std::printf("  partitions                %8.3f ms  (%zu)\n", tParts * 1e3, parts.size());
  std::printf("  validate                  %8.3f ms  (%zu diagnostics)\n", tValidate * 1e3, diags.size());
  std::printf("  slot requirements         %8.3f ms  (%zu slots)\n", tReq * 1e3, req.size());
  return 0;
}
