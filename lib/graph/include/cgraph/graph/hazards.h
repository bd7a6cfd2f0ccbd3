// Slot accesses of nodes, hazard (dependency) inference and slot requirements.
//
// Pure functions over a const Graph; no ownership, no shared state. Thread-safety:
// safe to call concurrently on graphs that nobody mutates. Failure modes: none; indices
// that are out of range (an unvalidated graph) are skipped, never dereferenced.
//
// Access convention (also used by the Recorder and by runtimes):
// - kernel buffer args: read-only when the kernel parameter has kQualConst or is a
//   ConstantBuffer, else read+write; LocalBuffer/scalar args touch no slot. The kernel
//   is assumed to access bytes [offset, end of slot) (extent unknown). An arg beyond the
//   kernel signature is read+write.
// - copy / rect copy: source read, destination written (exact byte ranges; a rect copy
//   covers its bounding range, with OpenCL pitch defaults: row pitch 0 = width,
//   slice pitch 0 = row pitch * height).
// - fill: written, [offset, offset+bytes).
// - copy/fill fields that are stored parameter expressions (Graph::exprs): an offset
//   counts as 0 and the extent as unknown (to the end of the slot), so hazards hold for
//   every parameter value.
// - host task slot args: read+write, except built-ins "checksum", "print", "write_file",
//   "compare" (read) and "read_file" (write); extent unknown.
// - collective: send side read, receive side written, count elements each (to the end
//   of the slot where the extent scales with the world size: all_gather's receive
//   side, reduce_scatter's send side; or where a field is an expression, an offset
//   expression counting as 0).
// - barrier: none. subgraph: the union of its child's accesses, mapped through the
//   node's slot binding, one merged access per parent slot.
#pragma once

#include <cgraph/model.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace cgraph {

constexpr uint64_t kUnknownSize = ~uint64_t(0); // extent runs to the end of the slot

struct SlotAccess {
  uint32_t slot = kNone;
  uint64_t offset = 0;
  uint64_t size = kUnknownSize;
  bool read = false;
  bool write = false;
  // End of the byte range (saturating; kUnknownSize when the extent is unknown).
  uint64_t end() const {
    return size == kUnknownSize || offset + size < offset ? kUnknownSize : offset + size;
  }
};

struct AccessInfo {
  std::vector<SlotAccess> accesses; // may name one slot more than once (copy a->a)
};

AccessInfo nodeAccesses(const Graph &graph, uint32_t node);
// The same into `out` (cleared first; its storage is reused across calls).
void nodeAccesses(const Graph &graph, uint32_t node, AccessInfo &out);
// Whether a host op name is a built-in that only reads / only writes its slot args.
bool hostOpReadsOnly(const std::string &op);
bool hostOpWritesOnly(const std::string &op);
// Byte extent of one side of a rect copy: (d-1)*slicePitch + (h-1)*rowPitch + w, with the
// OpenCL pitch defaults. kUnknownSize when that (or the default slice pitch rowPitch * h)
// does not fit 64 bits; validateGraph refuses such a node, naming the field.
uint64_t rectExtent(const uint64_t region[3], uint64_t rowPitch, uint64_t slicePitch);

// Incremental hazard tracking in node index order (the SYCL record-and-replay rules).
// add(graph, n) returns the predecessors of node n (sorted ascending), given that the
// tracker has seen nodes 0..n-1 of the same graph, in that order. Rules: a read depends
// on the earlier overlapping writes, a write on the earlier overlapping reads and writes
// (RAW, WAR, WAW); ranges that do not overlap never conflict, and an access of no bytes
// conflicts with nothing. A barrier depends on every node since the previous barrier (on
// the leaves among them), and every later node depends on it.
// The result is transitively reduced with respect to the edges this tracker returned,
// except where the search for redundant candidates exceeds its bound (a few hundred
// edges per node): a candidate not yet shown redundant is then kept. Either way the
// edges order exactly the hazards, no more (their transitive closure is the same).
// Cost per node: O(log n) per access plus its candidates and that bounded search; per
// slot, the live writes are disjoint byte ranges and the live reads an interval tree.
// Ownership: owns its state (O(nodes + edges + live ranges)). Thread-safety: none.
class HazardTracker {
public:
  HazardTracker();
  ~HazardTracker();
  HazardTracker(const HazardTracker &other);
  HazardTracker(HazardTracker &&other) noexcept;
  HazardTracker &operator=(const HazardTracker &other);
  HazardTracker &operator=(HazardTracker &&other) noexcept;

  std::vector<uint32_t> add(const Graph &graph, uint32_t node);

private:
  struct State; // hazards.cpp
  std::unique_ptr<State> s_;
};

// The edges implied by slot accesses (HazardTracker over all nodes in index order).
// Existing Graph::edges are neither read nor included.
std::vector<Edge> inferHazardEdges(const Graph &graph);

// The edges implied by barrier nodes alone, for graphs whose other edges are explicit:
// a barrier waits for every node since the previous barrier (or for that barrier when
// there are none) and every later node up to the next barrier waits for it. (Hazard
// inference includes these; inferHazardEdges already returns them.)
std::vector<Edge> barrierEdges(const Graph &graph);

struct SlotRequirement {
  uint64_t minSize = 0;   // max(declared size, max over uses of offset+extent)
  uint32_t alignment = 16;
  uint32_t usage = 0;     // SlotUsage bits
  bool written = false;   // some node writes it (a copy or fill destination included)
};

// One entry per slot (O(nodes) to compute; a runtime checks a binding table against it
// in O(slots)). Kernel/host args with unknown extent contribute their offset.
std::vector<SlotRequirement> slotRequirements(const Graph &graph);
// Sets Slot::usage of every slot (recursively in subgraphs) from slotRequirements().
void accumulateSlotRequirements(Graph &graph);

} // namespace cgraph
