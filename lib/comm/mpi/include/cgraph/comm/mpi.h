// rt::Communicator over MPI (cgraph_comm_mpi; lib/runtime/communicator.h has the
// contract every communicator keeps).
//
// Collectives are MPI's nonblocking ones (MPI_Iallreduce, MPI_Iallgather,
// MPI_Ireduce_scatter_block, MPI_Ibcast, MPI_Isend, MPI_Irecv) polled with MPI_Test
// until they complete or the timeout passes; the communicator's error handler is
// MPI_ERRORS_RETURN, so a dead peer is an error value, not an abort. A send copies its
// data and completes later (at the next call or at flush()), so a graph in which every
// rank sends before it receives (a ring) does not wait on itself.
//
// Ownership: a MpiCommunicator owns its duplicate of the MPI communicator it was made
// from (freed in the destructor, which must run before MPI_Finalize). Thread-safety:
// one call at a time (the MPI library must provide MPI_THREAD_SERIALIZED or more, which
// mpiInit asks for and checks). Failure modes: errors name the operation, the node and
// the rank; ErrorCode::Timeout when a call ran past its limit (the MPI state is then
// undefined: callers should abort, cgrun calls MPI_Abort).
#pragma once

#include "cgraph/runtime/communicator.h"

#include <mpi.h>

#include <memory>

namespace cgraph::comm {

// MPI_Init_thread with MPI_THREAD_SERIALIZED (a no-op when MPI is already initialized);
// an error when the library gives less.
Error mpiInit(int *argc, char ***argv);
// MPI_Finalize when initialized and not finalized yet.
void mpiFinalize();

// A communicator over a duplicate of `comm` (MPI_COMM_WORLD by default).
Expected<std::unique_ptr<rt::Communicator>> makeMpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);

} // namespace cgraph::comm
