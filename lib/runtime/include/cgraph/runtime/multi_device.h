// Multi-device graphs (issue 10): nodes placed on logical devices (Node::device, `.cgf`
// PLAC), run on a list of real devices the caller maps at run time.
//
// How it runs: the flattened graph's execution order is cut into segments, maximal runs
// of nodes on one device; each segment is finalized by its device as an ordinary graph
// (native recording; conditional nodes inside it run as staged.h says). Submissions
// enqueue the segments in order from the calling thread without waiting between them:
// a segment waits (SubmitOptions::waitFor) only for earlier segments on its device that
// used its slots, and a slot copied between devices waits for the segments that used
// it on either side, so segments on different devices with no slot between them run at
// the same time. Slots live where they are used: device 0
// (the home device) holds the caller's bindings and the runtime-owned slots (one
// slot-setup path); every other device gets a buffer per slot its segments access,
// allocated once per executable (and again when a binding grows). Before a segment
// runs, each slot it accesses whose latest contents are on another device is copied to
// its device: directly where the backend has a path (Device::copyFromDevice: cuda's
// peer copies, host memory on both sides), else staged through host memory
// (Device::read + Device::write); after it, the slots it writes are current only there. At the end every
// written slot is copied back to the home device, so the caller's buffers hold the
// results, exactly as a single-device run would leave them.
//
// Device::finalize on a graph with placements runs every node on that one device (as a
// reader that predates placement would): the results are the same.
//
// Ownership/lifetime: the executable owns its segment executables and mirror buffers;
// the devices must outlive it. Thread-safety: as Executable. Submission: enqueue runs
// everything and returns a completed event; a failure of any segment or copy is the
// event's error, naming the segment's first node and device. Failure modes: a node
// placed on a device index the list does not have (named), a device list that is empty
// or longer than kMaxDevices, anything finalize reports for a segment. Updates are
// forwarded to the segment that holds the node (slots renumbered; a slot the segment
// does not use is refused, naming it).
#pragma once

#include "cgraph/runtime/runtime.h"

namespace cgraph::rt {

// Whether some node of `graph` (or of a subgraph it inlines) is placed on a device
// other than 0.
bool hasPlacement(const Graph &graph);

// Validates and flattens `graph`, then builds the multi-device executable; devices[i]
// runs the nodes placed on logical device i. A single device runs every node.
Expected<std::unique_ptr<Executable>> finalizeMultiDevice(const std::vector<Device *> &devices, const Graph &graph,
                                                          const FinalizeOptions &opts);

} // namespace cgraph::rt
