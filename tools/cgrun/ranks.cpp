// One rank per process: MPI under mpirun (or --mpi), the communicator collective nodes
// run through, the rank and world parameters, and how a multi-rank run ends.
#include "common.h"

#include "cgraph/runtime/communicator.h"

#ifdef CGRUN_HAVE_MPI
#include "cgraph/comm/mpi.h"
#endif
#ifdef CGRUN_HAVE_NCCL
#include "cgraph/comm/nccl.h"
#endif

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace cgraph::cgrun {

namespace {

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Launched by mpirun (Open MPI, or a PMI-based launcher such as MPICH's or Slurm's).
bool underMpirun() { return env("OMPI_COMM_WORLD_SIZE") || env("PMI_SIZE") || env("PMIX_RANK"); }

// Where the cuda ranks of a launcher without MPI meet over TCP: --nccl-rendezvous or
// CGRAPH_NCCL_RENDEZVOUS (HOST:PORT), else torchrun's MASTER_ADDR with MASTER_PORT + 1
// (its own store listens on MASTER_PORT). Unset when none is given; an explicit address
// that does not parse is an error.
Error rendezvousAddress(const RankOptions &opts, RankSetup *out) {
  std::string spec = !opts.ncclRendezvous.empty() ? opts.ncclRendezvous
                     : env("CGRAPH_NCCL_RENDEZVOUS") ? env("CGRAPH_NCCL_RENDEZVOUS")
                                                     : "";
  unsigned long port = 0;
  char *end = nullptr;
  if (!spec.empty()) {
    const size_t colon = spec.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return makeError("--nccl-rendezvous " + spec + ": expected HOST:PORT");
    port = std::strtoul(spec.c_str() + colon + 1, &end, 10);
    if (!end || *end || end == spec.c_str() + colon + 1 || port == 0 || port > 65535)
      return makeError("--nccl-rendezvous " + spec + ": the port must be 1 to 65535");
    out->rendezvousHost = spec.substr(0, colon);
  } else if (env("MASTER_ADDR") && env("MASTER_PORT")) {
    // A launcher's variables, read only when they make a port (runs without NCCL must
    // not fail on them).
    port = std::strtoul(env("MASTER_PORT"), &end, 10) + 1;
    if (!end || *end || port < 2 || port > 65535) port = 0;
    else out->rendezvousHost = env("MASTER_ADDR");
  }
  out->rendezvousPort = uint16_t(port);
  return Error::success();
}

} // namespace

Error setupRanks(const RankOptions &opts, RankSetup *out) {
  out->timeout = std::chrono::milliseconds(int64_t(opts.timeoutSeconds * 1000));
  const bool mpi = opts.mpi || underMpirun();
  if (mpi) {
#ifdef CGRUN_HAVE_MPI
    CGRAPH_RETURN_IF_ERROR(comm::mpiInit(nullptr, nullptr));
    out->mpi = true;
    auto c = comm::makeMpiCommunicator();
    if (!c) return c.error();
    out->comm = std::move(*c);
#else
    return makeError(ErrorCode::Unsupported,
                     "launched under mpirun (or with --mpi), but this cgrun was built without MPI "
                     "(install libopenmpi-dev and rebuild)");
#endif
  } else if (const char *ws = env("WORLD_SIZE")) {
    // A launcher that sets RANK / WORLD_SIZE / LOCAL_RANK and no MPI (torchrun): the
    // ranks meet through NCCL's unique id (communicatorFor); host collectives have no
    // transport.
    auto number = [](const char *name, const char *text, uint32_t *v) -> Error {
      char *end = nullptr;
      errno = 0;
      const unsigned long x = std::strtoul(text, &end, 10);
      if (errno || !end || *end || end == text || x > 1u << 20)
        return makeError(std::string(name) + "=" + text + ": not a rank count");
      *v = uint32_t(x);
      return Error::success();
    };
    CGRAPH_RETURN_IF_ERROR(number("WORLD_SIZE", ws, &out->world));
    if (const char *r = env("RANK")) CGRAPH_RETURN_IF_ERROR(number("RANK", r, &out->rank));
    if (out->world == 0 || out->rank >= out->world)
      return makeError("RANK=" + std::to_string(out->rank) + " is not a rank of WORLD_SIZE=" + std::to_string(out->world));
    if (out->world == 1) out->comm = std::make_unique<rt::LocalCommunicator>();
  } else {
    out->comm = std::make_unique<rt::LocalCommunicator>();
  }
  if (out->comm) {
    out->rank = out->comm->rank();
    out->world = out->comm->size();
  }
  uint32_t local = 0;
  for (const char *name : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *v = env(name)) {
      char *end = nullptr;
      local = uint32_t(std::strtoul(v, &end, 10));
      if (end && !*end) out->localRank = int(local);
      break;
    }
  out->ncclIdFile = !opts.ncclIdFile.empty() ? opts.ncclIdFile : env("CGRAPH_NCCL_ID_FILE") ? env("CGRAPH_NCCL_ID_FILE") : "";
  CGRAPH_RETURN_IF_ERROR(rendezvousAddress(opts, out));
  // Results are printed by rank 0 only, unless asked for every rank; errors go to
  // stderr on every rank and name the rank where a collective failed.
  if (out->rank != 0 && !opts.allRanks) out->quiet = std::freopen("/dev/null", "w", stdout) != nullptr;
  return Error::success();
}

Expected<rt::Communicator *> communicatorFor(RankSetup &ranks, const rt::Device &dev, int ordinal) {
  if (dev.info().backend != "cuda") {
    if (ranks.comm) return ranks.comm.get();
    return makeError(ErrorCode::Unsupported, "collective nodes on the " + dev.info().backend + " backend with " +
                                                 std::to_string(ranks.world) +
                                                 " ranks need MPI (run cgrun under mpirun)");
  }
#ifdef CGRUN_HAVE_NCCL
  if (ranks.device) return ranks.device.get();
  Expected<comm::NcclUniqueId> id = makeError("no unique id");
  if (ranks.world == 1) {
    id = comm::ncclNewUniqueId();
  } else if (ranks.mpi) {
#ifdef CGRUN_HAVE_MPI
    comm::NcclUniqueId mine;
    if (ranks.rank == 0) {
      id = comm::ncclNewUniqueId();
      if (id) mine = *id;
    }
    // Every rank takes part in the broadcast, rank 0's failure included (an empty id
    // then fails every rank's join instead of leaving them waiting here).
    MPI_Bcast(mine.bytes.data(), int(mine.bytes.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (ranks.rank != 0) id = mine;
#endif
  } else if (!ranks.ncclIdFile.empty()) {
    id = comm::exchangeUniqueIdFile(ranks.ncclIdFile, ranks.rank, ranks.timeout);
  } else if (ranks.rendezvousPort != 0) {
    id = comm::exchangeUniqueIdTcp(ranks.rendezvousHost, ranks.rendezvousPort, ranks.rank, ranks.world, ranks.timeout);
  } else {
    return makeError("collective nodes on cuda with WORLD_SIZE=" + std::to_string(ranks.world) +
                     " and no MPI: give --nccl-id-file PATH (or CGRAPH_NCCL_ID_FILE), a file every rank sees, "
                     "or --nccl-rendezvous HOST:PORT (or MASTER_ADDR and MASTER_PORT, as torchrun sets them), "
                     "where rank 0 hands out NCCL's unique id");
  }
  if (!id) return id.error();
  auto c = comm::makeNcclCommunicator(*id, ranks.rank, ranks.world, ordinal, ranks.timeout);
  if (!c) return c.error();
  ranks.device = std::move(*c);
  return ranks.device.get();
#else
  (void)ordinal;
  return makeError(ErrorCode::Unsupported, "this cgrun was built without the NCCL communicator");
#endif
}

std::string rankDevice(const RankSetup &ranks, const std::string &backend) {
  if (ranks.world <= 1 || ranks.localRank < 0 || backend.rfind("cuda", 0) != 0) return "";
  return std::to_string(ranks.localRank);
}

int finishRanks(RankSetup &ranks, int rc) {
  std::fflush(stdout);
  std::fflush(stderr);
  ranks.device.reset(); // before MPI goes (NCCL's bootstrap does not use it)
#ifdef CGRUN_HAVE_MPI
  if (ranks.mpi) {
    // A failed rank takes the others down instead of leaving them waiting in a
    // collective (their timeouts would end them too, later).
    if (rc != 0 && ranks.world > 1 && !ranks.endedTogether) MPI_Abort(MPI_COMM_WORLD, rc);
    ranks.comm.reset(); // frees its MPI communicator before MPI_Finalize
    comm::mpiFinalize();
  }
#endif
  return rc;
}

namespace {
bool anyCollectives(const Graph &g, int depth = 0) {
  if (rt::hasCollectives(g)) return true;
  if (depth < 16)
    for (const Graph &child : g.subgraphs)
      if (anyCollectives(child, depth + 1)) return true;
  return false;
}
} // namespace

bool graphHasCollectives(const Graph &g) { return anyCollectives(g); }

Expected<rt::Communicator *> finalizeCommunicator(const CommonOptions &o, const Graph &g, const rt::Device &dev,
                                                  const std::string &spec) {
  if (!o.ranks || !anyCollectives(g)) return o.comm;
  const size_t colon = spec.find(':');
  int ordinal = 0;
  if (colon != std::string::npos) ordinal = std::atoi(spec.c_str() + colon + 1);
  return communicatorFor(*o.ranks, dev, ordinal);
}

Error setRankParams(const Graph &g, const CommonOptions &o, rt::ParamValues *params) {
  // A graph without collectives run as one rank keeps its own parameters, whatever
  // they are called.
  if (o.world == 1 && !anyCollectives(g)) return Error::success();
  auto given = [&](const std::string &name) {
    for (const std::string &p : o.params)
      if (p.rfind(name + "=", 0) == 0) return true;
    return false;
  };
  if (g.findParam("rank") != kNone && !given("rank"))
    CGRAPH_RETURN_IF_ERROR(params->set(g, "rank", std::to_string(o.rank)));
  if (g.findParam("world") != kNone && !given("world"))
    CGRAPH_RETURN_IF_ERROR(params->set(g, "world", std::to_string(o.world)));
  return Error::success();
}

} // namespace cgraph::cgrun
