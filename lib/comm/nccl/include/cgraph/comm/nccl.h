// rt::Communicator over NCCL (cgraph_comm_nccl; lib/runtime/communicator.h has the
// contract every communicator keeps), for collective nodes on the cuda backend.
//
// NCCL is loaded with dlopen("libnccl.so.2") at the first call: nothing links against
// it and a build needs no NCCL header. The communicator is stream-ordered: the cuda
// backend enqueues each collective node on its stream, inside the stream capture that
// builds the executable's CUDA graph, so a replay costs no host work per collective.
// NCCL 2.14 or newer: communicators made here are non-blocking (NCCL's config.blocking
// = 0), so the host side of every call, which may wait for the peers (joining, the
// first use of a connection), is polled against a time limit instead of blocking.
//
// Forming a world: rank 0 makes a unique id (ncclNewUniqueId), every rank gets it (a
// file all ranks see: exchangeUniqueIdFile; MPI_Bcast; torch.distributed), and every
// rank calls makeNcclCommunicator with it. Or the caller hands over an ncclComm_t it
// made (wrapNcclCommunicator).
//
// Ownership: a communicator from makeNcclCommunicator owns its ncclComm_t (destroyed,
// or aborted after a failure, in the destructor); a wrapped one does not. Either must
// outlive the executables finalized with it. Thread-safety: as rt::Communicator (one
// executable submitting at a time). Failure modes: errors are values naming the NCCL
// call and NCCL's last message; ErrorCode::Unsupported when NCCL or the driver is
// missing; ErrorCode::Timeout when the world does not form in time or a call's host
// side waits past its limit (the communicator is then aborted); after abort() every
// call fails. A wrapped communicator that is blocking (NCCL's default) can keep a
// call waiting inside NCCL for a peer that never comes: make it non-blocking.
#pragma once

#include "cgraph/runtime/communicator.h"

#include <array>
#include <chrono>
#include <memory>
#include <string>

namespace cgraph::comm {

// NCCL's unique id: 128 opaque bytes, made by rank 0 and given to every rank.
struct NcclUniqueId {
  std::array<char, 128> bytes{};
};

// Whether NCCL and a CUDA driver can be loaded here; else why not.
Error ncclAvailable();
// NCCL's version as a number (22703 for 2.27.3), 0 when it cannot be loaded.
int ncclVersion();

// A new unique id (rank 0 only; NCCL's bootstrap listens on this host).
Expected<NcclUniqueId> ncclNewUniqueId();
// The id as 256 hex digits, and back (Invalid for anything else).
std::string toHex(const NcclUniqueId &id);
Expected<NcclUniqueId> uniqueIdFromHex(const std::string &hex);
// Rendezvous through a file every rank sees (one host's temporary directory, or a
// shared filesystem): rank 0 makes an id and writes it to `path` atomically (a
// temporary file renamed over it); other ranks wait up to `timeout` for the file to
// appear. A file older than the run must be removed before it starts: ranks > 0 take
// any file they find. Errors: Io (not writable), Timeout, Invalid (not an id).
Expected<NcclUniqueId> exchangeUniqueIdFile(const std::string &path, uint32_t rank,
                                            std::chrono::milliseconds timeout);
// Rendezvous over TCP, for ranks with neither MPI nor a shared file (several machines
// under torchrun): rank 0 makes an id and serves it on `host`:`port` until the other
// world - 1 ranks have fetched it; they connect, retrying while rank 0 is not listening
// yet. Blocks until then or `timeout`. Errors: Io (rank 0 cannot listen there), Timeout
// (naming how many ranks were served, or what the last attempt to connect got),
// Invalid (an unresolvable host, a peer that does not speak the protocol).
Expected<NcclUniqueId> exchangeUniqueIdTcp(const std::string &host, uint16_t port, uint32_t rank, uint32_t world,
                                           std::chrono::milliseconds timeout);
// The byte exchange under exchangeUniqueIdTcp: rank 0 gives `payload` (up to 64 KiB),
// every rank gets it back. Protocol in src/rendezvous_tcp.cpp. Thread-safe (no shared
// state); one call per rank and port at a time.
Expected<std::string> tcpRendezvous(const std::string &host, uint16_t port, uint32_t rank, uint32_t world,
                                    const std::string &payload, std::chrono::milliseconds timeout);

// Joins the world of `world` ranks as `rank` on CUDA device `cudaDevice` (an ordinal;
// the backend's executables must use the same device). Blocks until every rank has
// joined, or fails with ErrorCode::Timeout after `timeout` (the half-formed
// communicator is aborted).
Expected<std::unique_ptr<rt::Communicator>> makeNcclCommunicator(const NcclUniqueId &id, uint32_t rank,
                                                                 uint32_t world, int cudaDevice,
                                                                 std::chrono::milliseconds timeout);
// A communicator over the caller's `ncclComm_t` (passed as a pointer; not owned, never
// destroyed or aborted by cgraph: abort() only fails later calls).
Expected<std::unique_ptr<rt::Communicator>> wrapNcclCommunicator(void *ncclComm);

} // namespace cgraph::comm
