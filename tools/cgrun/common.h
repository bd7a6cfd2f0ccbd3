// cgrun internals shared by its commands (run, bench, compare, --list-devices).
// Tool code: errors are cgraph::Error values until main() prints them.
#pragma once

#include "cgraph/graph/labels.h"
#include "cgraph/graph/slot_types.h"

#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/communicator.h"
#include "cgraph/runtime/runtime.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::cgrun {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-8;
  int64_t ulp = -1;        // < 0: not used
  bool relAbsUsed = true;  // false when only --ulp was given
};

struct CommonOptions {
  std::string file;
  std::vector<std::string> backends; // --backend (compare takes two)
  std::string device;                // --device
  std::vector<std::string> inputs, randoms, zeros, fills, params, allowDirs;
  // Updates applied to every executable right after finalize (issue 10):
  // --set NODE.FIELD=VALUE, --disable NODE, --update-from OTHER.cgf.
  std::vector<std::string> sets, disables;
  std::string updateFrom;
  bool allowPlugins = false;
  bool checkBounds = false; // --check-bounds: the cpu backend's CpuOptions::checkBounds
  bool noMemoryPlan = false; // --no-memory-plan: FinalizeOptions::planMemory off
  bool json = false;
  Tolerance tol;
  // Collective nodes (ranks.cpp): the host communicator (null where the world has more
  // than one rank and no MPI), this rank, the world size and the longest one
  // collective may wait; `ranks` makes device communicators (communicatorFor).
  rt::Communicator *comm = nullptr;
  uint32_t rank = 0, world = 1;
  std::chrono::milliseconds collectiveTimeout{60000};
  struct RankSetup *ranks = nullptr;
};

// --mpi, --collective-timeout, --all-ranks, --nccl-id-file, --nccl-rendezvous.
struct RankOptions {
  bool mpi = false;
  double timeoutSeconds = 60;
  bool allRanks = false;
  std::string ncclIdFile;     // default: CGRAPH_NCCL_ID_FILE
  std::string ncclRendezvous; // HOST:PORT; default: CGRAPH_NCCL_RENDEZVOUS, else MASTER_ADDR:MASTER_PORT+1
};
// The process's rank: MPI when launched by mpirun (OMPI_COMM_WORLD_SIZE, PMI_SIZE or
// PMIX_RANK set) or with --mpi; else a launcher's RANK / WORLD_SIZE / LOCAL_RANK
// (torchrun and the like), whose host collectives then have no transport; else a world
// of one (rt::LocalCommunicator). Ranks other than 0 send stdout to /dev/null unless
// --all-ranks.
struct RankSetup {
  std::unique_ptr<rt::Communicator> comm;   // host collectives
  std::unique_ptr<rt::Communicator> device; // NCCL, made by communicatorFor
  uint32_t rank = 0, world = 1;
  int localRank = -1; // the launcher's local rank (the GPU to use), -1 if none
  bool mpi = false, quiet = false;
  // Every rank reached the same verdict through a collective (cgrun compare): a failure
  // ends each rank normally, none is left waiting, so MPI is not aborted.
  bool endedTogether = false;
  std::chrono::milliseconds timeout{60000};
  std::string ncclIdFile;
  std::string rendezvousHost; // the TCP rendezvous of NCCL's unique id (no MPI, no id file)
  uint16_t rendezvousPort = 0;
};
Error setupRanks(const RankOptions &opts, RankSetup *out);
// The communicator collective nodes of an executable on `dev` run through: for cuda an
// NCCL communicator on CUDA device `ordinal`, made at the first call (the unique id
// from rank 0 over MPI under mpirun, else through the id file every rank sees; a world
// of one needs neither); for host backends the host communicator, an error when there
// is none (more than one rank without MPI).
Expected<rt::Communicator *> communicatorFor(RankSetup &ranks, const rt::Device &dev, int ordinal);
// The GPU a rank uses when --device is not given: its local rank (modulo the devices
// of `backend`), or empty for one rank.
std::string rankDevice(const RankSetup &ranks, const std::string &backend);
// Whether `g` or any of its subgraphs has collective nodes.
bool graphHasCollectives(const Graph &g);
// FinalizeOptions::communicator for an executable of `g` on `dev` (opened from device
// spec `spec`): o.comm, or communicatorFor's where `g` has collectives.
Expected<rt::Communicator *> finalizeCommunicator(const CommonOptions &o, const Graph &g, const rt::Device &dev,
                                                  const std::string &spec);
// Ends the run: on failure in a multi-rank MPI world, MPI_Abort (the other ranks stop
// instead of waiting in a collective); else frees the communicator and finalizes MPI.
// Returns rc.
int finishRanks(RankSetup &ranks, int rc);
// Sets the graph's `rank` and `world` parameters (where it has them and --param did
// not give them) from o.rank and o.world, when the graph has collective nodes or the
// world has more than one rank.
Error setRankParams(const Graph &g, const CommonOptions &o, rt::ParamValues *params);

// One input per external slot, from the command line.
struct InputSpec {
  enum Kind { None, File, Random, Zeros, Fill } kind = None;
  std::string path;
  uint64_t seed = 0;
  std::string value;
  ScalarType type = ScalarType::F32;
  bool typeGiven = false;
  bool raw = false; // --input slot=file:raw: the file's bytes whatever its dtype
};

// Output lines that are not results: stderr (stdout carries results only with --json).
void note(const std::string &line);
// Notes "cgrun: error: <message>" and returns 1, the exit code of a failed run.
int fail(const Error &e);
// Progress lines (bench runs, run iterations, finalize) go to stderr when it is a
// terminal and --json was not given.
bool progressEnabled(const CommonOptions &o);
// The FinalizeOptions every subcommand starts from: the host policy, --no-memory-plan,
// --collective-timeout, and with progressEnabled a line "cgrun: finalize: compiling
// kernels i/n" rewritten in place (cleared when the phase ends).
rt::FinalizeOptions finalizeOptions(const CommonOptions &o, const rt::HostPolicy &policy);
// Whether `t` is a floating-point type (f16, f32, f64).
bool isFloat(ScalarType t);

double msSince(std::chrono::steady_clock::time_point t0);
uint64_t nsBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b);

// All backends compiled into this binary.
std::unique_ptr<rt::Registry> makeRegistry(bool checkBounds = false);
// "cpu" / "cpu:1" / --backend X --device N.
// "a,b,,c" -> {"a", "b", "", "c"}; "" -> {""}.
std::vector<std::string> splitList(const std::string &text);
// Prints "cgrun: error: MSG" and returns 2 (a usage error).
int usage(const std::string &msg);
std::string deviceSpec(const std::string &backend, const std::string &device);
// --device's forms: an index of `backend`'s devices (cpu when empty), BACKEND or
// BACKEND:INDEX. Anything else is an Error (a usage error) giving these forms and the
// number of devices the backend has.
Error checkDeviceOption(const std::string &backend, const std::string &device);

Expected<Graph> loadGraph(const std::string &path);
rt::HostPolicy hostPolicy(const CommonOptions &o);

// Bytes a binding of slot s needs (declared size or accumulated requirement).
std::vector<uint64_t> slotBytes(const Graph &g);
// Slots whose size is an expression over parameters (.cgf 2.2): sets each one's
// Slot::size to its largest value over `paramSets`, so that the buffers cgrun binds,
// the inputs it expects and the outputs it writes have this run's size. A set that
// does not evaluate (the runtime reports why at enqueue) is skipped.
void sizeSlotsForParams(Graph &g, const std::vector<rt::ParamValues> &paramSets);
// The element type of a slot, from the kernel parameters it is bound to (float* -> f32);
// f32 when unknown and the size is a multiple of 4, else u8.
ScalarType slotType(const Graph &g, uint32_t slot);
// slotKernelTypes (the element types kernels use for a slot): cgraph/graph/slot_types.h.
using ::cgraph::slotKernelTypes;
// This host's physical memory in bytes (0 when unknown): no slot cgrun holds a host copy
// of may be larger.
uint64_t hostMemoryBytes();
Expected<uint32_t> findSlotArg(const Graph &g, const std::string &name, const std::string &option);

// Parses --input/--random/--zeros/--fill into one spec per slot.
Expected<std::vector<InputSpec>> parseInputs(const Graph &g, const CommonOptions &o);
Expected<rt::ParamValues> parseParams(const Graph &g, const CommonOptions &o);
// Host contents of every slot: external slots from `specs` (zeros and a note when none);
// runtime-owned slots from their init (only when `allSlots`, else left empty).
Expected<std::vector<std::vector<uint8_t>>> initialContents(const Graph &g,
                                                            const std::vector<InputSpec> &specs,
                                                            const rt::HostPolicy &policy,
                                                            const std::vector<bool> &wanted,
                                                            bool quiet);

// Device buffers for the slots that have contents, and the table binding them.
struct Bound {
  std::vector<std::unique_ptr<rt::Buffer>> buffers; // per slot; null when not bound
  rt::BindingTable table;
};
Expected<Bound> bindContents(rt::Device &dev, const Graph &g,
                             const std::vector<std::vector<uint8_t>> &contents);
Error uploadContents(rt::Device &dev, Bound &b, const std::vector<std::vector<uint8_t>> &contents);
Expected<std::vector<uint8_t>> readSlot(rt::Device &dev, Bound &b, uint32_t slot, uint64_t offset,
                                        uint64_t bytes);

// Element-wise comparison with tolerances (checks.cpp).
struct CompareResult {
  bool ok = true;
  uint64_t elements = 0;
  uint64_t firstBad = 0;
  std::string gotText, expectedText;
  double maxAbsErr = 0;
  uint64_t maxUlp = 0;
  std::string message; // "element 17 differs: 1 vs 1.5" when !ok
};
CompareResult compareElements(const uint8_t *got, const uint8_t *expected, uint64_t bytes,
                              ScalarType t, const Tolerance &tol);

// Applies --set / --disable / --update-from to `exe` (update.cpp). FIELD: argN (a scalar
// as text, a slot as NAME or NAME+OFFSET, a parameter by name, a __local size in bytes),
// global, local, offset (comma-separated sizes), kernel (one of the node's
// alternatives, by name), enabled (0 or 1). Several --set of one
// node make one update.
Error applyUpdates(rt::Executable &exe, const CommonOptions &o);
bool hasUpdates(const CommonOptions &o);

nlohmann::json deviceJson(const rt::DeviceInfo &d);
// Runtime-owned memory of an executable and its memory plan: one line for people
// ("memory: 655360 bytes runtime-owned; plan: 4 transient slots share one arena,
// 851968 -> 655360 bytes") and an object for --json.
std::string memoryLine(const rt::Executable &exe);
nlohmann::json memoryJson(const rt::Executable &exe);

int runCommand(const CommonOptions &o, uint32_t iterations, const std::vector<std::string> &outputs,
               const std::vector<std::string> &checks, const std::string &tracePath);
struct BenchOptions {
  uint32_t warmup = 3;
  uint32_t repetitions = 10;
  double minTime = 0.0; // seconds per mode
  std::string modes;     // --modes a,b,...|all (empty: eager, replay, replay-rebind[, replay-reshape])
};
int benchCommand(const CommonOptions &o, const BenchOptions &b);
struct CompareOptions {
  std::string modes;            // --modes "replay,eager" (empty: the defaults, compare_cmd.cpp)
  std::string norm = "none";    // --norm l2: per-range relative L2 norm instead of elementwise
  uint64_t memoryBudget = 2048ull << 20; // snapshot bytes per node-by-node round
  // Several ranks (compare_ranks.cpp): --reference-param NAME=VALUE (the one-process
  // run's parameters over --param's) and --slot NAME (the slots compared; empty: every
  // slot a node writes that has the same size in both runs).
  std::vector<std::string> referenceParams;
  std::vector<std::string> slots;
};
int compareCommand(const CommonOptions &o, const CompareOptions &c);
// --modes M1[,M2] (compare_cmd.cpp): one or two of replay, eager; an error naming the value.
Expected<std::vector<rt::ExecMode>> parseModes(const std::string &text);
// `cgrun compare` in a world of several ranks (compare_ranks.cpp): each rank's results
// against the same graph run as one process.
int compareRanksCommand(const CommonOptions &o, const CompareOptions &c);

// One compared range of one slot: a (the reference) against b.
struct Verdict {
  bool ok = true;
  ScalarType type = ScalarType::F32;
  uint64_t elements = 0;
  std::string detail; // what failed: element, both values, figures
  nlohmann::json j;
};
// `bytes` of elements of type `t` from `a` and `b` (element `firstElement` first, for
// the messages), element by element within `tol` or, with c.norm "l2", by the norm.
Verdict compareRange(const uint8_t *a, const uint8_t *b, uint64_t bytes, uint64_t firstElement, ScalarType t,
                     const CompareOptions &c, const Tolerance &tol);
int listDevices(bool json);

} // namespace cgraph::cgrun
