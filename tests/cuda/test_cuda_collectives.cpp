// Collective nodes on the cuda backend through NCCL (lib/comm/nccl): every kind across
// two ranks, one thread and one GPU each, in replay and eager mode, against values
// computed here; a replay whose bound buffers change (the captured calls are captured
// again); a world of one rank; a rank that never submits (the other fails with a
// timeout naming its nodes instead of hanging); communicators the backend refuses.
// Finalize's check that every rank runs the same collectives, through NCCL: ranks that
// differ fail with one message; a rank that never finalizes times the other out.
// Needs NCCL (libnccl.so.2) and a CUDA device; two ranks need two devices.
#include "cgraph/backends/cuda/cuda_backend.h"
#include "cgraph/comm/nccl.h"
#include "cgraph/graph/builder.h"
#include "cgraph/expr.h"
#include "cgraph/runtime/communicator.h"
#include "../common/collective_graphs.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <tuple>

using namespace cgraph;

namespace {

rt::Backend &cudaBackend() {
  static std::unique_ptr<rt::Backend> b = cuda::makeCudaBackend();
  return *b;
}

size_t deviceCount() { return cudaBackend().probe().devices.size(); }

rt::Device &device(int ordinal) {
  auto d = cudaBackend().device(uint32_t(ordinal));
  REQUIRE(d.ok());
  return **d;
}

using cgraph::test::addExpr;
using cgraph::test::coll;

constexpr uint64_t kN = 1000; // not a multiple of any vector width

// Slots (f32): 0 g (all_reduce sum in place), 1 part -> 2 whole[2N] (all_gather),
// 2 whole -> 3 mine (reduce_scatter sum), 4 w (broadcast from root $world - 1), 5 act
// sent to ($rank + 1) % $world, 6 inbox received from it, 7 m (all_reduce max).
// `p2p`: with the send and recv nodes (two ranks; rank 1 runs them swapped).
Graph worldGraph(bool p2p) {
  GraphBuilder b("world");
  for (auto [name, n] : std::vector<std::pair<const char *, uint64_t>>{
           {"g", kN}, {"part", kN}, {"whole", 2 * kN}, {"mine", kN}, {"w", kN}, {"act", kN}, {"inbox", kN}, {"m", kN}}) {
    Slot s;
    s.name = name;
    s.size = n * 4;
    s.init = SlotInit::External;
    b.addSlot(s);
  }
  b.addParam(Param{"rank", ScalarType::I32, 0});
  b.addParam(Param{"world", ScalarType::I32, 1});
  b.addCollective("sum", coll(CollKind::AllReduce, 0, 0, kN));
  b.addCollective("gather", coll(CollKind::AllGather, 1, 2, kN));
  b.addCollective("scatter", coll(CollKind::ReduceScatter, 2, 3, kN));
  b.addCollective("bcast", coll(CollKind::Broadcast, 4, 4, kN));
  CollectiveOp mx = coll(CollKind::AllReduce, 7, 7, kN);
  mx.op = ReduceOp::Max;
  b.addCollective("max", mx);
  if (p2p) {
    b.addCollective("first", coll(CollKind::Send, 5, kNone, kN));
    b.addCollective("second", coll(CollKind::Recv, kNone, 6, kN));
  }
  Graph g = b.take();
  addExpr(g, 3, ExprField::CollPeer, "$world - 1");
  if (p2p) {
    addExpr(g, 5, ExprField::CollPeer, "($rank + 1) % $world");
    addExpr(g, 6, ExprField::CollPeer, "($rank + 1) % $world");
  }
  for (uint32_t i = 0; i + 1 < g.nodes.size(); ++i) g.edges.push_back({i, i + 1});
  return g;
}

float init(uint32_t rank, uint32_t slot, uint64_t i, int round) {
  return float(round) * 1000.0f + 100.0f * float(rank) + 10.0f * float(slot) + float(i % 97);
}

struct RankResult {
  Error error;
  std::vector<std::vector<std::vector<float>>> rounds; // per submission, per slot
};

// Runs `g` `rounds` times on `dev`, each submission with fresh buffers (round 1 on binds
// other addresses than round 0, so replay captures the collectives again). `check`:
// finalize compares the ranks' collective nodes (FinalizeOptions::checkCollectives).
RankResult runRank(rt::Device &dev, const Graph &g, rt::Communicator &comm, rt::ExecMode mode, int rounds,
                   std::chrono::milliseconds timeout = std::chrono::seconds(60), bool check = true) {
  RankResult out;
  rt::FinalizeOptions fo;
  fo.mode = mode;
  fo.communicator = &comm;
  fo.collectiveTimeout = timeout;
  fo.checkCollectives = check;
  auto exe = dev.finalize(g, fo);
  if (!exe) return {exe.error(), {}};
  rt::ParamValues pv;
  if (Error e = pv.set(g, "rank", std::to_string(comm.rank()))) return {std::move(e), {}};
  if (Error e = pv.set(g, "world", std::to_string(comm.size()))) return {std::move(e), {}};
  for (int round = 0; round < rounds; ++round) {
    std::vector<std::unique_ptr<rt::Buffer>> bufs;
    rt::BindingTable table;
    for (uint32_t s = 0; s < g.slots.size(); ++s) {
      auto buf = dev.allocate(g.slots[s].size, 256);
      if (!buf) return {buf.error(), {}};
      std::vector<float> host(g.slots[s].size / 4);
      for (uint64_t i = 0; i < host.size(); ++i) host[i] = init(comm.rank(), s, i, round);
      if (Error e = dev.write(**buf, 0, host.data(), g.slots[s].size)) return {std::move(e), {}};
      table.slots.push_back(rt::Binding{buf->get(), 0, 0});
      bufs.push_back(std::move(*buf));
    }
    auto ev = (*exe)->enqueue(table, pv);
    if (!ev) return {ev.error(), {}};
    if (Error e = (*ev)->wait()) return {std::move(e), {}};
    std::vector<std::vector<float>> slots;
    for (uint32_t s = 0; s < g.slots.size(); ++s) {
      std::vector<float> host(g.slots[s].size / 4);
      if (Error e = dev.read(*bufs[s], 0, host.data(), g.slots[s].size)) return {std::move(e), {}};
      slots.push_back(std::move(host));
    }
    out.rounds.push_back(std::move(slots));
  }
  return out;
}

// Checks rank r's slots of one round in a world of `world` ranks.
void checkRound(const std::vector<std::vector<float>> &s, uint32_t r, uint32_t world, int round, bool p2p) {
  for (uint64_t i = 0; i < kN; ++i) {
    INFO("rank " << r << " round " << round << " element " << i);
    float sum = 0, mx = -1e30f;
    for (uint32_t q = 0; q < world; ++q) {
      sum += init(q, 0, i, round);
      mx = std::max(mx, init(q, 7, i, round));
    }
    CHECK(s[0][i] == sum);
    for (uint32_t q = 0; q < world; ++q) CHECK(s[2][q * kN + i] == init(q, 1, i, round));
    CHECK(s[3][i] == float(world) * s[2][r * kN + i]);
    CHECK(s[4][i] == init(world - 1, 4, i, round));
    CHECK(s[7][i] == mx);
    if (p2p) CHECK(s[6][i] == init((r + world - 1) % world, 5, i, round));
  }
}

Expected<comm::NcclUniqueId> newId() { return comm::ncclNewUniqueId(); }

bool haveNccl() {
  Error e = comm::ncclAvailable();
  if (e) WARN("NCCL is not available: " << e.message());
  return !e;
}

// NCCL must load (else the case fails); the two-rank cases need two GPUs (else a
// warning and the case ends).
bool twoGpusWithNccl() {
  if (!haveNccl()) FAIL("libnccl.so.2 must be loadable for this test");
  if (deviceCount() >= 2) return true;
  WARN("one CUDA device: the two-rank cases need two");
  return false;
}

// Two NCCL ranks on devices 0 and 1, joined from two threads.
bool joinTwo(std::unique_ptr<rt::Communicator> (&c)[2]) {
  auto id = newId();
  REQUIRE(id.ok());
  std::thread t([&] {
    auto x = comm::makeNcclCommunicator(*id, 1, 2, 1, std::chrono::seconds(60));
    if (x) c[1] = std::move(*x);
  });
  auto x0 = comm::makeNcclCommunicator(*id, 0, 2, 0, std::chrono::seconds(60));
  t.join();
  if (x0) c[0] = std::move(*x0);
  return c[0] && c[1];
}
} // namespace

TEST_CASE("cuda collectives: every kind across two ranks on two GPUs, replay and eager", "[cuda][collective]") {
  if (!haveNccl()) FAIL("libnccl.so.2 must be loadable for this test");
  if (deviceCount() < 2) {
    WARN("one CUDA device: the two-rank cases need two (NCCL puts one rank on a GPU)");
    return;
  }
  for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
    INFO((mode == rt::ExecMode::Replay ? "replay" : "eager"));
    Graph g0 = worldGraph(true);
    Graph g1 = g0;
    std::swap(g1.nodes[5].coll, g1.nodes[6].coll); // rank 1 receives first
    auto id = newId();
    REQUIRE(id.ok());
    std::unique_ptr<rt::Communicator> c[2];
    Error joined[2];
    std::thread t([&] {
      auto x = comm::makeNcclCommunicator(*id, 1, 2, 1, std::chrono::seconds(60));
      if (x) c[1] = std::move(*x);
      else joined[1] = x.error();
    });
    auto x0 = comm::makeNcclCommunicator(*id, 0, 2, 0, std::chrono::seconds(60));
    t.join();
    REQUIRE(x0.ok());
    REQUIRE_FALSE(joined[1]);
    c[0] = std::move(*x0);
    CHECK(c[0]->streamOrdered());
    CHECK(c[1]->rank() == 1);
    rt::Device &d0 = device(0), &d1 = device(1);
    RankResult r0, r1;
    std::thread t1([&] { r1 = runRank(d1, g1, *c[1], mode, 2); });
    r0 = runRank(d0, g0, *c[0], mode, 2);
    t1.join();
    INFO((r0.error ? r0.error.message() : std::string()) + " | " + (r1.error ? r1.error.message() : std::string()));
    REQUIRE_FALSE(r0.error);
    REQUIRE_FALSE(r1.error);
    for (int round = 0; round < 2; ++round) {
      checkRound(r0.rounds[round], 0, 2, round, true);
      checkRound(r1.rounds[round], 1, 2, round, true);
    }
  }
}

TEST_CASE("cuda collectives: a world of one rank", "[cuda][collective]") {
  if (!haveNccl()) FAIL("libnccl.so.2 must be loadable for this test");
  auto id = newId();
  REQUIRE(id.ok());
  auto c = comm::makeNcclCommunicator(*id, 0, 1, 0, std::chrono::seconds(30));
  REQUIRE(c.ok());
  for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
    RankResult r = runRank(device(0), worldGraph(false), **c, mode, 2);
    INFO((r.error ? r.error.message() : std::string()));
    REQUIRE_FALSE(r.error);
    for (int round = 0; round < 2; ++round) checkRound(r.rounds[round], 0, 1, round, false);
  }
}

TEST_CASE("cuda collectives: communicators the backend refuses", "[cuda][collective]") {
  Graph g = worldGraph(false);
  rt::FinalizeOptions fo;
  auto none = device(0).finalize(g, fo);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message().find("no communicator was given") != std::string::npos);
  rt::LocalCommunicator local;
  fo.communicator = &local;
  auto host = device(0).finalize(g, fo);
  REQUIRE_FALSE(host.ok());
  CHECK(host.error().message().find("the local communicator runs on the host") != std::string::npos);
  if (!haveNccl() || deviceCount() < 2) return;
  auto id = newId();
  REQUIRE(id.ok());
  auto c = comm::makeNcclCommunicator(*id, 0, 1, 1, std::chrono::seconds(30));
  REQUIRE(c.ok());
  fo.communicator = c->get();
  auto other = device(0).finalize(g, fo);
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().message().find("runs on cuda device 1, the executable on device 0") != std::string::npos);
}

TEST_CASE("cuda collectives: a rank that never submits times out the other", "[cuda][collective]") {
  if (!twoGpusWithNccl()) return;
  std::unique_ptr<rt::Communicator> c[2];
  REQUIRE(joinTwo(c));
  const auto t0 = std::chrono::steady_clock::now();
  // Past finalize's check (the peer never finalizes either), into the submission.
  RankResult r =
      runRank(device(0), worldGraph(false), *c[0], rt::ExecMode::Replay, 1, std::chrono::milliseconds(1500), false);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r.error);
  INFO(r.error.message());
  CHECK(r.error.code() == ErrorCode::Timeout);
  CHECK(r.error.message().find("node 'sum'") != std::string::npos);
  CHECK(r.error.message().find("rank 0 of 2") != std::string::npos);
  CHECK(s < 30);
  c[1]->abort(); // its peer is gone: not destroyed collectively
}


TEST_CASE("cuda collectives: ranks that would run different collectives fail at finalize", "[cuda][collective]") {
  if (!twoGpusWithNccl()) return;
  std::unique_ptr<rt::Communicator> c[2];
  REQUIRE(joinTwo(c));
  Graph g0 = worldGraph(false);
  Graph g1 = g0;
  g1.nodes[4].coll.op = ReduceOp::Sum; // "max" becomes a sum on rank 1
  Error e[2];
  std::thread t([&] {
    rt::FinalizeOptions fo;
    fo.communicator = c[1].get();
    auto x = device(1).finalize(g1, fo);
    if (!x) e[1] = x.error();
  });
  rt::FinalizeOptions fo;
  fo.communicator = c[0].get();
  auto x = device(0).finalize(g0, fo);
  if (!x) e[0] = x.error();
  t.join();
  REQUIRE(e[0]);
  INFO(e[0].message());
  CHECK(e[0].message().rfind("the ranks run different collectives: rank 0 has 5 ", 0) == 0);
  CHECK(e[0].message().find("rank 1 has 5 that differ") != std::string::npos);
  REQUIRE(e[1]);
  CHECK(e[1].message() == e[0].message());
  // The communicators still work: the same graph on both ranks finalizes and runs.
  RankResult r[2];
  std::thread t1([&] { r[1] = runRank(device(1), g0, *c[1], rt::ExecMode::Replay, 1); });
  r[0] = runRank(device(0), g0, *c[0], rt::ExecMode::Replay, 1);
  t1.join();
  REQUIRE_FALSE(r[0].error);
  REQUIRE_FALSE(r[1].error);
  checkRound(r[0].rounds[0], 0, 2, 0, false);
  checkRound(r[1].rounds[0], 1, 2, 0, false);
}

TEST_CASE("cuda collectives: a rank that never finalizes times out the other's finalize", "[cuda][collective]") {
  if (!twoGpusWithNccl()) return;
  std::unique_ptr<rt::Communicator> c[2];
  REQUIRE(joinTwo(c));
  rt::FinalizeOptions fo;
  fo.communicator = c[0].get();
  fo.collectiveTimeout = std::chrono::milliseconds(1500);
  const auto t0 = std::chrono::steady_clock::now();
  auto x = device(0).finalize(worldGraph(false), fo);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE_FALSE(x.ok());
  INFO(x.error().message());
  CHECK(x.error().code() == ErrorCode::Timeout);
  CHECK(x.error().message().find("comparing the ranks' collective nodes (rank 0 of 2)") != std::string::npos);
  CHECK(s < 30);
  c[1]->abort();
}
