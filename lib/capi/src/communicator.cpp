// The C API's communicators (cgraph.h, "communicators"): local, NCCL from a unique id
// or over the caller's ncclComm_t.
#include "internal.h"

#include "cgraph/comm/nccl.h"

#include <cstring>

using namespace cgraph;
using namespace cgraph::capi;

namespace {

cgraph_status hand(std::unique_ptr<rt::Communicator> c, cgraph_communicator *out) {
  auto h = std::make_unique<cgraph_communicator_s>();
  h->comm = std::move(c);
  *out = h.release();
  return CGRAPH_OK;
}

} // namespace

extern "C" {

cgraph_status cgraph_communicator_local(cgraph_communicator *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    return hand(std::make_unique<rt::LocalCommunicator>(), out);
  });
}

cgraph_status cgraph_nccl_unique_id(uint8_t id[CGRAPH_NCCL_UNIQUE_ID_BYTES]) {
  return guard([&] {
    if (!id) return nullArgument("id");
    auto made = comm::ncclNewUniqueId();
    if (!made) return fail(made.error());
    std::memcpy(id, made->bytes.data(), CGRAPH_NCCL_UNIQUE_ID_BYTES);
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_communicator_nccl(const uint8_t id[CGRAPH_NCCL_UNIQUE_ID_BYTES], uint32_t rank,
                                       uint32_t world, int cuda_device, uint64_t timeout_ms,
                                       cgraph_communicator *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!id) return nullArgument("id");
    comm::NcclUniqueId uid;
    std::memcpy(uid.bytes.data(), id, CGRAPH_NCCL_UNIQUE_ID_BYTES);
    const auto timeout = std::chrono::milliseconds(int64_t(std::min<uint64_t>(timeout_ms, INT64_MAX / 2)));
    auto c = comm::makeNcclCommunicator(uid, rank, world, cuda_device, timeout);
    if (!c) return fail(c.error());
    return hand(std::move(*c), out);
  });
}

cgraph_status cgraph_communicator_wrap_nccl(void *nccl_comm, cgraph_communicator *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!nccl_comm) return nullArgument("nccl_comm");
    auto c = comm::wrapNcclCommunicator(nccl_comm);
    if (!c) return fail(c.error());
    return hand(std::move(*c), out);
  });
}

cgraph_status cgraph_communicator_info(cgraph_communicator c, uint32_t *rank, uint32_t *world, const char **name) {
  return guard([&] {
    if (!c) return nullArgument("comm");
    if (rank) *rank = c->comm->rank();
    if (world) *world = c->comm->size();
    if (name) *name = c->comm->name();
    return CGRAPH_OK;
  });
}

void cgraph_communicator_release(cgraph_communicator c) { delete c; }

} // extern "C"
