// Memory planning of runtime-owned transient slots: slots whose lifetimes cannot
// overlap share memory, each at an offset of one arena.
//
// Two transient slots A and B may share bytes only when every node that touches A
// happens before every node that touches B through the graph's edges (or the other way
// round), so no backend that honours the edges can run an access of A concurrently
// with one of B, whatever it runs in parallel (independent branches, the cpu backend's
// levels, concurrent CUDA graph branches). planMemory finds, for every eligible slot,
// the slots it conflicts with (may not share bytes with); packMemory then places the
// slots in one arena, largest first, each at the lowest aligned offset where it
// overlaps no conflicting slot placed before it (greedy by size, as ML runtimes'
// arena planners do). The conflicts depend only on the graph; the offsets on the
// sizes, so a runtime packs again when slot sizes that are parameter expressions change.
//
// Eligible slots: SlotInit::Transient, touched by at least one node, and only by
// kernel, copy, rect copy and fill nodes of device 0. Never planned: slots of host tasks
// (they may keep or show contents), of subgraph or conditional nodes (their bodies run
// elsewhere), and every other init kind (their contents live across runs). An eligible
// slot that conflicts with every other eligible slot gains nothing and is not planned.
//
// Pure functions. planMemory: O(E * U / 64) for the reachability of E edges over the U
// nodes that touch an eligible slot, plus O(u_A * u_B) bit tests per pair of slots whose
// uses do not interleave in the execution order (u: uses per slot); it plans nothing,
// with a reason, past kMaxPlanBits of reachability or kMaxPlannedSlots slots. packMemory:
// O(S log S + sum of conflicts * log). Thread-safety: safe on graphs nobody mutates.
// Failure modes: none (an invalid order or a cycle plans nothing and says why).
#pragma once

#include <cgraph/model.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cgraph {

struct MemoryPlan {
  // Per slot of the graph: 1 when the slot lives in the arena.
  std::vector<uint8_t> planned;
  // Per slot: the planned slots it may not share bytes with, ascending (empty for
  // slots that are not planned).
  std::vector<std::vector<uint32_t>> conflicts;
  uint32_t slots = 0; // planned slots
  // The planned slots' bytes when each has its own memory, and the arena's size, both
  // for the sizes given to planMemory.
  uint64_t bytesBefore = 0, bytesAfter = 0;
  // Why nothing was planned ("no transient slots to plan", "the graph has no
  // execution order: ..."); empty when some slot is planned.
  std::string skipped;
  bool isPlanned(uint32_t slot) const { return slot < planned.size() && planned[slot]; }
};

constexpr uint64_t kMaxPlanBits = uint64_t(1) << 31; // reachability bitsets: 256 MiB
constexpr uint32_t kMaxPlannedSlots = 4096;
constexpr uint32_t kPlanAlignment = 256; // arena offsets are multiples of it (at least)

// `slotBytes[s]` is slot s's size in bytes (for expression-sized slots, their size at
// some parameter values: it only sets the byte counts); one entry per slot.
MemoryPlan planMemory(const Graph &graph, const std::vector<uint64_t> &slotBytes);

// Offsets of the planned slots in one arena for sizes `slotBytes` (one per slot; only
// planned slots' are read), each a multiple of max(`alignment`, kPlanAlignment), into
// `offsets` (resized to the slot count; unplanned slots get 0). Returns the arena size.
uint64_t packMemory(const MemoryPlan &plan, const std::vector<uint64_t> &slotBytes, uint32_t alignment,
                    std::vector<uint64_t> *offsets);

} // namespace cgraph
