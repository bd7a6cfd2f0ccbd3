// Collective nodes as host steps (collective.h).
#include "collective.h"

#include <vector>

namespace cgraph::cpu {

Error runCollective(const Graph &g, uint32_t node, const CollectiveOp &c, char *const *base,
                    const uint64_t *length, rt::Communicator &comm, std::chrono::milliseconds timeout) {
  std::vector<uint64_t> address(g.slots.size());
  for (size_t s = 0; s < address.size(); ++s) address[s] = uint64_t(reinterpret_cast<uintptr_t>(base[s]));
  auto call = rt::resolveCollective(g, node, c, address.data(), length, comm.rank(), comm.size());
  if (!call) return call.error();
  if (c.count == 0) return Error::success();
  return comm.run(*call, timeout);
}

} // namespace cgraph::cpu
