// Memory planning of runtime-owned transient slots: slots whose lifetimes cannot
// overlap share one block of memory.
//
// Two transient slots A and B may share a block only when every node that touches A
// happens before every node that touches B through the graph's edges (or the other way
// round), so no backend that honours the edges can run an access of A concurrently
// with one of B, whatever it runs in parallel (independent branches, the cpu backend's
// levels, concurrent CUDA graph branches). Slots are assigned in the order of their
// first use in the execution order; a slot joins the block whose last occupant's
// accesses all precede its own and whose size is closest to its own (at least its own
// where one such block is), else it opens a new block (interval assignment, best fit).
//
// Eligible slots: SlotInit::Transient, touched by at least one node, and only by
// kernel, copy, rect copy and fill nodes of device 0. Never planned: slots of host tasks
// (they may keep or show contents), of subgraph or conditional nodes (their bodies run
// elsewhere), and every other init kind (their contents live across runs). A block
// with one slot is not a plan: such slots are reported as unplanned (block kNone).
//
// Pure function; O(E * U / 64 + S * B * u * U / 64) for E edges, U nodes that touch an
// eligible slot, S eligible slots, B blocks and u uses per slot; it gives up (plans
// nothing, with a reason) when the reachability bitsets would exceed kMaxPlanBits.
// Thread-safety: safe on graphs nobody mutates. Failure modes: none (an invalid order
// or a cycle plans nothing and says why).
#pragma once

#include <cgraph/model.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cgraph {

struct MemoryPlan {
  // Per slot of the graph: the block the slot lives in, or kNone (not planned).
  std::vector<uint32_t> block;
  uint32_t blocks = 0;
  // Bytes of the planned slots when each has its own memory, and with the plan (each
  // block as large as its largest slot), both from the sizes given to planMemory.
  uint64_t bytesBefore = 0, bytesAfter = 0;
  // Why nothing was planned ("no transient slots", "the graph has conditional nodes",
  // ...); empty when the planner ran.
  std::string skipped;
};

// The reachability bitsets' budget, in bits (256 MiB).
constexpr uint64_t kMaxPlanBits = uint64_t(1) << 31;

// `slotBytes[s]` is slot s's size in bytes (for expression-sized slots, their size at
// some parameter values: it only steers the best fit and the byte counts); it must have
// one entry per slot.
MemoryPlan planMemory(const Graph &graph, const std::vector<uint64_t> &slotBytes);

} // namespace cgraph
