// Collective nodes on the cpu backend: a host step between partitions that hands the
// slots' host memory to the executable's rt::Communicator (communicator.h).
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/communicator.h"

#include <chrono>
#include <cstdint>

namespace cgraph::cpu {

// Runs collective node `node` of `g` with its fields resolved for this submission
// (`c`: rt::Executable::collective). `base[s]` / `length[s]`: slot s's storage and
// bytes. rt::resolveCollective checks the call, then `comm` runs it. Blocking, up to
// `timeout` inside the communicator.
Error runCollective(const Graph &g, uint32_t node, const CollectiveOp &c, char *const *base,
                    const uint64_t *length, rt::Communicator &comm, std::chrono::milliseconds timeout);

} // namespace cgraph::cpu
