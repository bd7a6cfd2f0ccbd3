// Runtime-driven conditional nodes (issue 10): how a backend without native conditional
// graphs runs a graph with `if` / `while` nodes (NodeKind::Conditional).
//
// The flattened graph is cut, in its execution order, into stages: maximal runs of
// ordinary nodes, each finalized by the device as an ordinary graph (so it replays as
// the backend's native recording), and the conditional nodes between them. A
// conditional stage reads its u32 condition from the device (Device::read) after the
// stages before it completed, then submits its body (finalized once, on the same
// device, through Device::finalize, so nested conditionals work) zero or more times:
// `if` once when the condition is nonzero; `while` while it is nonzero, at most
// CondOp::maxTrips times. A condition still nonzero after maxTrips fails the submission
// (`while node 'converge': the condition is still nonzero after 500 trips (its
// maximum)`); the slots keep what the last trip wrote.
//
// Runtime-owned slots are allocated once by the staged executable (the one slot-setup
// path, allocateOwnedSlots) and bound into every stage and body, so all stages see the
// same memory. A body's slots are its parent's slots (Node::subgraphSlots).
//
// Ownership/lifetime: the executable owns its stage and body executables; the Device
// must outlive it. Thread-safety: as Executable (one enqueue or update at a time).
// Submission: enqueue runs the stages on the calling thread and returns a completed
// event (the host has to see each condition before it can go on); a failure of any
// stage is the event's error. Failure modes: everything Device::finalize reports for a
// stage or body, named by the conditional node. Updates (Executable::update) of an
// ordinary node are forwarded to the stage that holds it; a conditional node can be
// enabled or disabled (disabled: neither its condition nor its body runs); the nodes
// of a body are not nodes of graph() and cannot be updated.
#pragma once

#include "cgraph/runtime/runtime.h"

namespace cgraph::rt {

// Whether a flattened graph has Conditional nodes at its top level.
bool hasConditionals(const Graph &flattened);

// Builds the staged executable for `flattened` (the output of flattenSubgraphs, already
// validated) on `device`. Backends call it from Device::finalize when
// hasConditionals(flattened).
Expected<std::unique_ptr<Executable>> finalizeStaged(Device &device, Graph flattened,
                                                     const FinalizeOptions &opts);

} // namespace cgraph::rt
