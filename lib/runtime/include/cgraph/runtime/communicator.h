// The communicator collective nodes run through (NodeKind::Collective, .cgf 2.3).
//
// A graph file names no communicator: the caller binds one at finalize
// (FinalizeOptions::communicator), created from MPI (lib/comm/mpi: cgraph_comm_mpi),
// from a unique id, or handed over by a framework. Two kinds of communicator:
//  - host (MPI, local): backends that run collectives as host steps (cpu) call run()
//    with host pointers into the slots' storage, one call per collective node;
//  - stream-ordered (NCCL, lib/comm/nccl): streamOrdered() is true and GPU backends
//    (cuda) call enqueue() with device pointers and one of their streams, during a
//    stream capture where the collective becomes part of a driver graph.
// Either way one call per collective node in the graph's execution order, so every
// rank that runs the same file calls the same collectives in the same order.
//
// Ownership: FinalizeOptions holds a non-owning pointer; the communicator must outlive
// every executable finalized with it. Thread-safety: an executable calls it from one
// thread at a time (its submissions run one after the other); two executables sharing
// one communicator must not run submissions at the same time. Failure modes: errors
// are values that name the operation, the node (`what`) and the rank; a call that
// waits longer than `timeout` returns ErrorCode::Timeout instead of hanging, and a
// peer that died is an error (ErrorCode::DeviceLost where the transport says so).
// After a failed call the communicator may be unusable (MPI aborts nothing, but the
// other ranks may be inside the same collective): the caller should stop.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/runtime.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace cgraph::rt {

// One call: `count` elements of `type` per rank (see CollKind for each kind's extents);
// `send` / `recv` are host pointers (null where the kind has no such side; equal for
// in place); `peer` is the root (broadcast) or the peer (send, recv); `what` names the
// node for messages ("node 'sum_grad'").
struct CollectiveCall {
  CollKind kind = CollKind::AllReduce;
  ReduceOp op = ReduceOp::Sum;
  ScalarType type = ScalarType::F32;
  const void *send = nullptr;
  void *recv = nullptr;
  uint64_t count = 0;
  uint32_t peer = 0;
  std::string what;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual uint32_t rank() const = 0;
  virtual uint32_t size() const = 0;
  // A short name for messages ("mpi", "local").
  virtual const char *name() const = 0;
  // Runs `call` to completion or until `timeout` passed. Blocking.
  virtual Error run(const CollectiveCall &call, std::chrono::milliseconds timeout) = 0;
  // Completes what run() left in flight (a send whose data was copied and is still on
  // its way), waiting up to `timeout`. Backends call it at the end of every submission
  // that ran collectives, so a submission's event means its sends were delivered.
  virtual Error flush(std::chrono::milliseconds timeout) { return Error::success(); }

  // Gathers `bytes` of host memory from every rank into `all` (world * bytes, rank
  // order), blocking up to `timeout`; `what` names the exchange in errors. For checks
  // outside any graph (checkSameCollectives). Default: an all_gather through run() and
  // flush(); stream-ordered communicators stage through device memory.
  virtual Error allGatherHost(const void *mine, void *all, uint64_t bytes, std::chrono::milliseconds timeout,
                              const std::string &what);

  // ---- stream-ordered communicators (streamOrdered() true) ----
  // Whether collectives go through enqueue() on a device stream instead of run().
  virtual bool streamOrdered() const { return false; }
  // The device the communicator's transport runs on (a CUDA ordinal for NCCL); -1 for
  // host communicators. A backend refuses a device other than this one at finalize.
  virtual int deviceIndex() const { return -1; }
  // Enqueues `call` (device pointers) on `stream` (a CUstream) and returns without
  // waiting for the data; the stream may be capturing into a graph. The host side of
  // the call (which may wait for the peers, as NCCL's first use of a connection does)
  // gives up after `timeout` with ErrorCode::Timeout. The calling thread has the
  // device's context current. Default: ErrorCode::Unsupported.
  virtual Error enqueue(const CollectiveCall &call, void *stream, std::chrono::milliseconds timeout);
  // An error the transport found asynchronously since the last call (a peer that died,
  // a network failure), else success. Cheap; polled while waiting for a submission.
  virtual Error asyncError() { return Error::success(); }
  // Stops every operation in flight and makes later ones fail (after a timeout or an
  // asynchronous error: the ranks cannot agree on a state any more). Idempotent.
  virtual void abort() {}
};

// A world of one rank (no transport): every collective is a copy (or nothing in
// place); send and recv have no peer and fail. Stateless; thread-safe.
class LocalCommunicator final : public Communicator {
public:
  uint32_t rank() const override { return 0; }
  uint32_t size() const override { return 1; }
  const char *name() const override { return "local"; }
  Error run(const CollectiveCall &call, std::chrono::milliseconds timeout) override;
};

// One collective node's call for a submission: `c` is the node's op with its fields
// resolved (rt::Executable::collective), `base[s]` / `length[s]` slot s's address (host
// or device) and bytes. Checks, naming the node and rank: the peer or root is a rank of
// the world (a send or recv of any elements not to itself), both sides lie inside their
// slots for this world size, and two sides on one slot are the same bytes (all_reduce,
// broadcast) or disjoint. `call.what` is "node 'x' (rank r of w)". Pure; thread-safe.
Expected<CollectiveCall> resolveCollective(const Graph &g, uint32_t node, const CollectiveOp &c,
                                           const uint64_t *base, const uint64_t *length, uint32_t rank,
                                           uint32_t world);

// What every rank of a world must run alike, in the graph's execution order: the kind,
// reduction, element type, count and root of every all_reduce, all_gather,
// reduce_scatter and broadcast node, the stored expressions of those fields included.
// send and recv pair across ranks instead (a pipeline's ranks differ) and are left out.
// `nodes` (optional) gets how many nodes went in. Errors: a cycle.
Expected<uint64_t> collectiveFingerprint(const Graph &g, uint64_t *nodes = nullptr);
// Exchanges collectiveFingerprint among the ranks of `comm` (one allGatherHost,
// waiting up to `timeout`) and fails on every rank when they differ, naming the first rank that differs from rank 0. Success at once for a world
// of one or a graph without such nodes.
Error checkSameCollectives(const Graph &g, Communicator &comm, std::chrono::milliseconds timeout);

// The completion event of a submission whose work includes stream-ordered collectives
// (the stream cannot time out by itself): wait() polls `inner` and comm.asyncError();
// an asynchronous error, or `inner` still incomplete `timeout` after the wait began,
// aborts `comm` and fails the event (ErrorCode::Timeout, or the transport's error),
// naming `what` (the submission's collective nodes) and the rank. isComplete() and the
// node timings are inner's. `comm` must outlive the event.
EventPtr watchCollectives(EventPtr inner, Communicator &comm, std::chrono::milliseconds timeout,
                          std::string what);
// The event watchCollectives wrapped, else `e` itself (backends recognising their own
// events, which need no host wait).
const Event &unwrapWatched(const Event &e);

// Whether the graph has collective nodes (after flattening: top level only).
bool hasCollectives(const Graph &graph);
// For backends that do not run collectives: an error naming the backend when the graph
// has them ("collective nodes are not supported by the opencl backend yet"), else
// success.
Error refuseCollectives(const Graph &graph, const std::string &backend);

} // namespace cgraph::rt
