// One rank per process: MPI under mpirun (or --mpi), the communicator collective nodes
// run through, the rank and world parameters, and how a multi-rank run ends.
#include "common.h"

#include "cgraph/runtime/communicator.h"

#ifdef CGRUN_HAVE_MPI
#include "cgraph/comm/mpi.h"
#endif

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
    // A launcher that sets RANK / WORLD_SIZE / LOCAL_RANK and no MPI: a world of one
    // runs locally; more ranks need a communicator from a unique id, not built yet.
    if (std::string(ws) != "1")
      return makeError(ErrorCode::Unsupported, std::string("WORLD_SIZE=") + ws +
                                                   " without mpirun: this cgrun forms multi-rank worlds "
                                                   "through MPI only (run it under mpirun)");
  }
  if (!out->comm) out->comm = std::make_unique<rt::LocalCommunicator>();
  out->rank = out->comm->rank();
  out->world = out->comm->size();
  // Results are printed by rank 0 only, unless asked for every rank; errors go to
  // stderr on every rank and name the rank where a collective failed.
  if (out->rank != 0 && !opts.allRanks) out->quiet = std::freopen("/dev/null", "w", stdout) != nullptr;
  return Error::success();
}

int finishRanks(RankSetup &ranks, int rc) {
  std::fflush(stdout);
  std::fflush(stderr);
#ifdef CGRUN_HAVE_MPI
  if (ranks.mpi) {
    // A failed rank takes the others down instead of leaving them waiting in a
    // collective (their timeouts would end them too, later).
    if (rc != 0 && ranks.world > 1) MPI_Abort(MPI_COMM_WORLD, rc);
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
