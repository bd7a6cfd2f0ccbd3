// rt::Communicator over NCCL (cgraph/comm/nccl.h).
#include "cgraph/comm/nccl.h"

#include "nccl_api.h"

#include <atomic>
#include <thread>

namespace cgraph::comm {

using namespace nccl;

namespace {

// NCCL's element type for a reduction of `t`; -1 where NCCL has none (16-bit integers).
int reduceType(ScalarType t) {
  switch (t) {
  case ScalarType::I8: return ncclInt8;
  case ScalarType::U8: return ncclUint8;
  case ScalarType::I32: return ncclInt32;
  case ScalarType::U32: return ncclUint32;
  case ScalarType::I64: return ncclInt64;
  case ScalarType::U64: return ncclUint64;
  case ScalarType::F16: return ncclFloat16;
  case ScalarType::F32: return ncclFloat32;
  case ScalarType::F64: return ncclFloat64;
  case ScalarType::I16:
  case ScalarType::U16: return -1;
  }
  return -1;
}

ncclRedOp_t redOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return ncclSum;
  case ReduceOp::Max: return ncclMax;
  case ReduceOp::Min: return ncclMin;
  case ReduceOp::Prod: return ncclProd;
  }
  return ncclSum;
}

class NcclCommunicator final : public rt::Communicator {
public:
  // `ctx`: the device's primary context, retained by the caller for this object.
  NcclCommunicator(const NcclApi &api, ncclComm_t comm, bool owned, int device, void *ctx)
      : api_(&api), comm_(comm), owned_(owned), device_(device), ctx_(ctx) {
    int n = 0, r = 0;
    api.ncclCommCount(comm, &n);
    api.ncclCommUserRank(comm, &r);
    size_ = uint32_t(n);
    rank_ = uint32_t(r);
  }
  ~NcclCommunicator() override {
    if (owned_ && !aborted_.load()) api_->ncclCommDestroy(comm_);
    api_->cuDevicePrimaryCtxRelease(device_);
  }
  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }
  const char *name() const override { return "nccl"; }
  bool streamOrdered() const override { return true; }
  int deviceIndex() const override { return device_; }

  Error run(const rt::CollectiveCall &call, std::chrono::milliseconds) override {
    return makeError(ErrorCode::Unsupported, call.what + ": the nccl communicator takes device memory on a CUDA "
                                                         "stream (the cuda backend), not host memory");
  }

  Error enqueue(const rt::CollectiveCall &c, void *stream, std::chrono::milliseconds timeout) override {
    if (aborted_.load()) return makeError(c.what + ": the nccl communicator was aborted after an earlier failure");
    const char *kind = collKindName(c.kind);
    // Kinds that move data without arithmetic go as bytes, so every element type works.
    const size_t elem = scalarSize(c.type);
    int type = ncclUint8;
    size_t count = size_t(c.count) * elem;
    if (collReduces(c.kind)) {
      type = reduceType(c.type);
      count = size_t(c.count);
      if (type < 0)
        return makeError(ErrorCode::Unsupported, c.what + ": " + kind + " of " + scalarName(c.type) +
                                                     ": NCCL reduces no 16-bit integers");
    }
    ncclResult_t rc = ncclSuccess;
    const char *call = "";
    switch (c.kind) {
    case CollKind::AllReduce:
      call = "ncclAllReduce";
      rc = api_->ncclAllReduce(c.send, c.recv, count, type, redOp(c.op), comm_, stream);
      break;
    case CollKind::AllGather:
      call = "ncclAllGather";
      rc = api_->ncclAllGather(c.send, c.recv, count, type, comm_, stream);
      break;
    case CollKind::ReduceScatter:
      call = "ncclReduceScatter";
      rc = api_->ncclReduceScatter(c.send, c.recv, count, type, redOp(c.op), comm_, stream);
      break;
    case CollKind::Broadcast:
      call = "ncclBroadcast";
      rc = api_->ncclBroadcast(c.send, c.recv, count, type, int(c.peer), comm_, stream);
      break;
    case CollKind::Send:
      call = "ncclSend";
      rc = api_->ncclSend(c.send, count, type, int(c.peer), comm_, stream);
      break;
    case CollKind::Recv:
      call = "ncclRecv";
      rc = api_->ncclRecv(c.recv, count, type, int(c.peer), comm_, stream);
      break;
    }
    return settle(rc, call, c.what, std::chrono::steady_clock::now() + timeout, timeout);
  }

  Error asyncError() override {
    if (aborted_.load()) return makeError("the nccl communicator was aborted");
    ncclResult_t state = ncclSuccess;
    ncclResult_t rc = api_->ncclCommGetAsyncError(comm_, &state);
    if (rc != ncclSuccess) return ncclError(*api_, "ncclCommGetAsyncError", rc, comm_);
    if (state != ncclSuccess && state != ncclInProgress)
      return ncclError(*api_, "NCCL (asynchronous)", state, comm_).withContext("rank " + std::to_string(rank_));
    return Error::success();
  }

  Error allGatherHost(const void *mine, void *all, uint64_t bytes, std::chrono::milliseconds timeout,
                      const std::string &what) override {
    if (aborted_.load()) return makeError(what + ": the nccl communicator was aborted after an earlier failure");
    if (bytes == 0) return Error::success();
    const NcclApi &a = *api_;
    auto cu = [&](const char *call, int rc) {
      return rc == 0 ? Error::success() : makeError(ErrorCode::DeviceLost, what + ": " + call + ": CUDA error " + std::to_string(rc));
    };
    CGRAPH_RETURN_IF_ERROR(cu("cuCtxSetCurrent", a.cuCtxSetCurrent(ctx_)));
    // [0, world * bytes): what every rank sent; then this rank's own bytes.
    unsigned long long buf = 0;
    CGRAPH_RETURN_IF_ERROR(cu("cuMemAlloc", a.cuMemAlloc(&buf, bytes * (size_ + 1))));
    void *stream = nullptr;
    Error e = cu("cuStreamCreate", a.cuStreamCreate(&stream, kStreamNonBlocking));
    const unsigned long long send = buf + bytes * size_;
    // On the exchange's own stream, so the gather reads the bytes after they landed.
    if (!e) e = cu("cuMemcpyHtoDAsync", a.cuMemcpyHtoDAsync(send, mine, bytes, stream));
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    if (!e)
      e = settle(a.ncclAllGather(reinterpret_cast<const void *>(send), reinterpret_cast<void *>(buf), bytes,
                                 ncclUint8, comm_, stream),
                 "ncclAllGather", what, deadline, timeout);
    // The stream polled with NCCL's asynchronous errors and the time limit, as
    // rt::watchCollectives does for submissions.
    while (!e) {
      const int q = a.cuStreamQuery(stream);
      if (q == 0) break;
      if (q != kCudaErrorNotReady) e = cu("cuStreamQuery", q);
      else if (Error x = asyncError()) e = std::move(x).withContext(what);
      else if (std::chrono::steady_clock::now() >= deadline)
        e = makeError(ErrorCode::Timeout, what + ": not complete after " + std::to_string(timeout.count()) +
                                              " ms (a peer that stopped or never joined)");
      else std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (e && e.code() != ErrorCode::Invalid) abort(); // the ranks disagree on NCCL's state now
    if (!e) e = cu("cuMemcpyDtoH", a.cuMemcpyDtoH(all, buf, bytes * size_));
    if (stream) a.cuStreamDestroy(stream);
    a.cuMemFree(buf);
    return e;
  }

  void abort() override {
    if (aborted_.exchange(true)) return;
    if (owned_) api_->ncclCommAbort(comm_);
  }

private:
  // The host side of a call that returned `rc`: a non-blocking communicator (ours)
  // answers ncclInProgress and finishes on NCCL's own thread, which may wait for the
  // peers (the first use of a connection does); polled until done or until `deadline`,
  // when the communicator is aborted (a peer that never came; the message names the
  // caller's `timeout`, of which the deadline is the end). Blocking communicators
  // (wrapped ones may be) are done on return.
  Error settle(ncclResult_t rc, const char *call, const std::string &what,
               std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout) {
    if (rc != ncclSuccess && rc != ncclInProgress) return ncclError(*api_, call, rc, comm_).withContext(what);
    for (int polls = 0;; ++polls) {
      ncclResult_t state = ncclSuccess;
      if (ncclResult_t q = api_->ncclCommGetAsyncError(comm_, &state); q != ncclSuccess)
        return ncclError(*api_, "ncclCommGetAsyncError", q, comm_).withContext(what);
      if (state == ncclSuccess) return Error::success();
      if (state != ncclInProgress) return ncclError(*api_, call, state, comm_).withContext(what);
      if (std::chrono::steady_clock::now() >= deadline) {
        abort();
        return makeError(ErrorCode::Timeout, what + ": " + call + " still waiting for the other ranks after " +
                                                 std::to_string(timeout.count()) +
                                                 " ms (a peer that stopped or never joined); the communicator was "
                                                 "aborted");
      }
      if (polls < 1000) std::this_thread::yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  const NcclApi *api_;
  ncclComm_t comm_;
  bool owned_;
  int device_;
  void *ctx_;
  uint32_t rank_ = 0, size_ = 0;
  std::atomic<bool> aborted_{false};
};

} // namespace

Error ncclAvailable() {
  auto api = loadNccl();
  return api ? Error::success() : api.error();
}

int ncclVersion() {
  auto api = loadNccl();
  return api ? (*api)->version : 0;
}

Expected<NcclUniqueId> ncclNewUniqueId() {
  auto api = loadNccl();
  if (!api) return api.error();
  ncclUniqueId raw;
  if (ncclResult_t rc = (*api)->ncclGetUniqueId(&raw); rc != ncclSuccess)
    return ncclError(**api, "ncclGetUniqueId", rc);
  NcclUniqueId id;
  std::copy(raw.internal, raw.internal + sizeof(raw.internal), id.bytes.begin());
  return id;
}

Expected<std::unique_ptr<rt::Communicator>> makeNcclCommunicator(const NcclUniqueId &id, uint32_t rank,
                                                                 uint32_t world, int cudaDevice,
                                                                 std::chrono::milliseconds timeout) {
  auto loaded = loadNccl();
  if (!loaded) return loaded.error();
  const NcclApi &api = **loaded;
  if (world == 0 || rank >= world)
    return makeError("nccl: rank " + std::to_string(rank) + " is not in a world of " + std::to_string(world));
  int dev = 0;
  void *ctx = nullptr;
  if (api.cuDeviceGet(&dev, cudaDevice) != 0 || api.cuDevicePrimaryCtxRetain(&ctx, dev) != 0)
    return makeError(ErrorCode::Invalid, "nccl: CUDA device " + std::to_string(cudaDevice) + " cannot be opened");
  ncclUniqueId raw;
  std::copy(id.bytes.begin(), id.bytes.end(), raw.internal);
  // Non-blocking (config.blocking = 0): every call returns at once and finishes on
  // NCCL's threads, so a rank that never comes is a timeout here and in later calls,
  // never a thread stuck inside NCCL. NCCL takes the device from the calling thread's
  // context, set here and given back after.
  void *previous = nullptr;
  api.cuCtxGetCurrent(&previous);
  api.cuCtxSetCurrent(ctx);
  ncclConfig214 config;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t rc = api.ncclCommInitRankConfig(&comm, int(world), raw, int(rank), &config);
  api.cuCtxSetCurrent(previous);
  const std::string who = "nccl: rank " + std::to_string(rank) + " of " + std::to_string(world);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (rc == ncclInProgress && comm) {
    ncclResult_t state = ncclSuccess;
    if (ncclResult_t q = api.ncclCommGetAsyncError(comm, &state); q != ncclSuccess) rc = q;
    else if (state != ncclInProgress) rc = state;
    else if (std::chrono::steady_clock::now() >= deadline) {
      api.ncclCommAbort(comm);
      api.cuDevicePrimaryCtxRelease(dev);
      return makeError(ErrorCode::Timeout, who + ": the world did not form within " + std::to_string(timeout.count()) +
                                               " ms (every rank must join with the same unique id)");
    } else std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (rc != ncclSuccess) {
    Error e = ncclError(api, "ncclCommInitRankConfig", rc, comm).withContext(who);
    if (comm) api.ncclCommAbort(comm);
    api.cuDevicePrimaryCtxRelease(dev);
    return e;
  }
  return std::unique_ptr<rt::Communicator>(new NcclCommunicator(api, comm, true, cudaDevice, ctx));
}

Expected<std::unique_ptr<rt::Communicator>> wrapNcclCommunicator(void *ncclComm) {
  auto loaded = loadNccl();
  if (!loaded) return loaded.error();
  if (!ncclComm) return makeError("nccl: a null ncclComm_t");
  int dev = -1;
  ncclComm_t comm = static_cast<ncclComm_t>(ncclComm);
  if (ncclResult_t rc = (*loaded)->ncclCommCuDevice(comm, &dev); rc != ncclSuccess)
    return ncclError(**loaded, "ncclCommCuDevice", rc, comm);
  void *ctx = nullptr;
  if ((*loaded)->cuDevicePrimaryCtxRetain(&ctx, dev) != 0)
    return makeError(ErrorCode::Invalid, "nccl: CUDA device " + std::to_string(dev) + " cannot be opened");
  return std::unique_ptr<rt::Communicator>(new NcclCommunicator(**loaded, comm, false, dev, ctx));
}

} // namespace cgraph::comm
