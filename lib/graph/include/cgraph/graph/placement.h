// Placement of a graph's top-level nodes on logical devices (cgc --place) and what a
// placement costs: the work each device gets and the bytes that cross between devices.
//
// Ownership: plain functions over a caller's Graph; placeNodes sets Node::device of every
// top-level node and nothing else. Thread-safety: none needed (no shared state); do not
// mutate the graph from another thread meanwhile. Failure modes: an Error (code Invalid)
// for a device count outside 1..kMaxDevices or a graph without its execution order (and,
// for RoundRobin, its partitions): finalizeForFile (order.h) gives both.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cgraph {

// RoundRobin: partition p on device p % devices.
// Cost: the execution order cut into `devices` contiguous runs of about equal estimated
//   work (nodeWork), so only the runs' boundaries move data.
// MinBytes: contiguous runs as Cost, each cut moved within a quarter of a device's fair
//   share of the work to where the fewest bytes of slots are used on both sides of it
//   (ties: the position nearest the balanced one). Two independent halves of a graph,
//   ordered one after the other, land on two devices with nothing crossing.
enum class PlaceRule { RoundRobin, Cost, MinBytes };

Error placeNodes(Graph &graph, uint32_t devices, PlaceRule rule);

// The estimated work of a node: a kernel's global work-items, a copy's or fill's bytes / 4
// (+1), anything else 1.
double nodeWork(const Node &node);

// What a placement moves (slot sizes in `slotBytes`, one per slot of the top-level graph).
struct PlacementReport {
  uint32_t devices = 1;           // 1 + the largest Node::device
  std::vector<double> work;       // per device: the sum of nodeWork
  uint64_t bytesCrossing = 0;     // sum over slots of bytes * (devices using it - 1)
  struct SlotCrossing {
    uint32_t slot = kNone;
    uint64_t bytes = 0;
    std::vector<uint32_t> devices; // ascending
  };
  std::vector<SlotCrossing> slots; // slots used on more than one device, by slot index
};
PlacementReport placementReport(const Graph &graph, const std::vector<uint64_t> &slotBytes);

} // namespace cgraph
