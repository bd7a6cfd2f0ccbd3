// rt::Communicator over MPI's nonblocking collectives (cgraph/comm/mpi.h).
#include "cgraph/comm/mpi.h"

#include <chrono>
#include <climits>
#include <cstring>
#include <list>
#include <thread>
#include <vector>

namespace cgraph::comm {

namespace {

std::string mpiText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, size_t(len));
}

// MPI's datatype for an element type; reductions of f16 have none (MPI has no half).
MPI_Datatype mpiType(ScalarType t) {
  switch (t) {
  case ScalarType::I8: return MPI_INT8_T;
  case ScalarType::I16: return MPI_INT16_T;
  case ScalarType::I32: return MPI_INT32_T;
  case ScalarType::I64: return MPI_INT64_T;
  case ScalarType::U8: return MPI_UINT8_T;
  case ScalarType::U16: return MPI_UINT16_T;
  case ScalarType::F16: return MPI_UINT16_T; // moved as bits, never reduced
  case ScalarType::U32: return MPI_UINT32_T;
  case ScalarType::U64: return MPI_UINT64_T;
  case ScalarType::F32: return MPI_FLOAT;
  case ScalarType::F64: return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpiOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return MPI_SUM;
  case ReduceOp::Max: return MPI_MAX;
  case ReduceOp::Min: return MPI_MIN;
  case ReduceOp::Prod: return MPI_PROD;
  }
  return MPI_OP_NULL;
}

class MpiCommunicator final : public rt::Communicator {
public:
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override {
    // Sends still in flight are dropped with the communicator (flush() completes them).
    for (Pending &p : sends_) MPI_Request_free(&p.request);
    MPI_Comm_free(&comm_);
  }

  uint32_t rank() const override { return uint32_t(rank_); }
  uint32_t size() const override { return uint32_t(size_); }
  const char *name() const override { return "mpi"; }

  Error run(const rt::CollectiveCall &c, std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const std::string what = c.what + ": " + collKindName(c.kind);
    if (c.count > uint64_t(INT_MAX))
      return makeError(ErrorCode::Unsupported, what + ": " + std::to_string(c.count) +
                                                   " elements are more than MPI's int counts take");
    if (collReduces(c.kind) && c.type == ScalarType::F16)
      return makeError(ErrorCode::Unsupported, what + ": MPI has no f16 reduction");
    const int n = int(c.count);
    const MPI_Datatype t = mpiType(c.type);
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    switch (c.kind) {
    case CollKind::AllReduce:
      rc = MPI_Iallreduce(c.send == c.recv ? MPI_IN_PLACE : c.send, c.recv, n, t, mpiOp(c.op), comm_, &req);
      break;
    case CollKind::AllGather: rc = MPI_Iallgather(c.send, n, t, c.recv, n, t, comm_, &req); break;
    case CollKind::ReduceScatter:
      rc = MPI_Ireduce_scatter_block(c.send, c.recv, n, t, mpiOp(c.op), comm_, &req);
      break;
    case CollKind::Broadcast:
      if (rank_ == int(c.peer) && c.send != c.recv) std::memmove(c.recv, c.send, c.count * scalarSize(c.type));
      rc = MPI_Ibcast(c.recv, n, t, int(c.peer), comm_, &req);
      break;
    case CollKind::Send: {
      // The data is copied, so the slot may change before the peer took it.
      sends_.emplace_back();
      Pending &p = sends_.back();
      p.what = what;
      p.data.assign(static_cast<const uint8_t *>(c.send), static_cast<const uint8_t *>(c.send) + c.count * scalarSize(c.type));
      rc = MPI_Isend(p.data.data(), n, t, int(c.peer), kTag, comm_, &p.request);
      if (rc != MPI_SUCCESS) {
        sends_.pop_back();
        return makeError(ErrorCode::DeviceLost, what + " to rank " + std::to_string(c.peer) + ": " + mpiText(rc));
      }
      return progressSends();
    }
    case CollKind::Recv: rc = MPI_Irecv(c.recv, n, t, int(c.peer), kTag, comm_, &req); break;
    }
    if (rc != MPI_SUCCESS) return makeError(ErrorCode::DeviceLost, what + ": " + mpiText(rc));
    CGRAPH_RETURN_IF_ERROR(wait(req, deadline, what, timeout));
    return progressSends();
  }

  Error flush(std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!sends_.empty()) {
      Pending &p = sends_.front();
      CGRAPH_RETURN_IF_ERROR(wait(p.request, deadline, p.what, timeout));
      sends_.pop_front();
    }
    return Error::success();
  }

private:
  static constexpr int kTag = 0x6367; // one tag: MPI keeps messages of one pair in order
  struct Pending {
    MPI_Request request = MPI_REQUEST_NULL;
    std::vector<uint8_t> data;
    std::string what;
  };

  // MPI_Test until done or past the deadline; sleeps grow from 0 to 1 ms so a fast
  // exchange costs no sleep and a slow one no spinning core.
  Error wait(MPI_Request &req, std::chrono::steady_clock::time_point deadline, const std::string &what,
             std::chrono::milliseconds timeout) {
    auto pause = std::chrono::microseconds(0);
    for (;;) {
      int done = 0;
      MPI_Status status;
      const int rc = MPI_Test(&req, &done, &status);
      if (rc != MPI_SUCCESS) return makeError(ErrorCode::DeviceLost, what + ": " + mpiText(rc));
      if (done) return Error::success();
      if (std::chrono::steady_clock::now() >= deadline)
        return makeError(ErrorCode::Timeout, what + ": no progress after " + std::to_string(timeout.count()) +
                                                 " ms (a peer rank stopped, died or runs another step)");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2 + std::chrono::microseconds(1), std::chrono::microseconds(1000));
    }
  }

  // Completed sends are released; the others stay until flush().
  Error progressSends() {
    for (auto it = sends_.begin(); it != sends_.end();) {
      int done = 0;
      const int rc = MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) return makeError(ErrorCode::DeviceLost, it->what + ": " + mpiText(rc));
      it = done ? sends_.erase(it) : std::next(it);
    }
    return Error::success();
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::list<Pending> sends_;
};

} // namespace

Error mpiInit(int *argc, char ***argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else if (int rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided); rc != MPI_SUCCESS) {
    return makeError("MPI_Init_thread failed: " + mpiText(rc));
  }
  if (provided < MPI_THREAD_SERIALIZED)
    return makeError(ErrorCode::Unsupported, "the MPI library provides thread level " + std::to_string(provided) +
                                                 "; collectives run on a runtime thread and need MPI_THREAD_SERIALIZED");
  return Error::success();
}

void mpiFinalize() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

Expected<std::unique_ptr<rt::Communicator>> makeMpiCommunicator(MPI_Comm comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  if (int rc = MPI_Comm_dup(comm, &dup); rc != MPI_SUCCESS) return makeError("MPI_Comm_dup failed: " + mpiText(rc));
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  return std::unique_ptr<rt::Communicator>(new MpiCommunicator(dup));
}

} // namespace cgraph::comm
