// Collective nodes on the cpu backend: every kind run by two executables of one graph
// in two threads (two ranks), through an in-process communicator that exchanges host
// pointers, checked against a C++ reference; rank and world size come from $rank and
// $world; a world of one rank through rt::LocalCommunicator; a missing communicator, a
// peer outside the world and a rank that never arrives (the timeout) fail with errors
// that name the node and rank. The MPI communicator is tested by tests/mpi.
#include "cpu_test_util.h"
#include "../common/collective_graphs.h"

#include "cgraph/expr.h"
#include "cgraph/runtime/communicator.h"

#include <chrono>
#include <condition_variable>
#include <algorithm>
#include <cstring>
#include <tuple>
#include <mutex>
#include <thread>

using namespace cgtest;

namespace {

// Ranks of one process meeting at each call: every rank posts its pointers, waits for
// the others, computes its own receive side from their send sides, and waits again so
// that no send side changes while a peer reads it.
class ThreadWorld {
public:
  explicit ThreadWorld(uint32_t size) : size_(size), calls_(size) {}
  uint32_t size() const { return size_; }

  Error run(uint32_t rank, const rt::CollectiveCall &c, std::chrono::milliseconds timeout) {
    CGRAPH_RETURN_IF_ERROR(arrive(rank, c, timeout));
    Error e = compute(rank, c);
    CGRAPH_RETURN_IF_ERROR(arrive(rank, c, timeout));
    return e;
  }

private:
  Error arrive(uint32_t rank, const rt::CollectiveCall &c, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(m_);
    calls_[rank] = c;
    const uint64_t gen = generation_;
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return Error::success();
    }
    if (!cv_.wait_for(lock, timeout, [&] { return generation_ != gen; }))
      return makeError(ErrorCode::Timeout, c.what + ": " + collKindName(c.kind) + " timed out waiting for the other ranks");
    return Error::success();
  }

  Error compute(uint32_t rank, const rt::CollectiveCall &c) {
    const uint64_t elem = scalarSize(c.type), n = c.count, bytes = n * elem;
    auto reduce = [&](float *out, const uint8_t *const *in, uint64_t at) {
      for (uint64_t i = 0; i < n; ++i) {
        float acc;
        std::memcpy(&acc, in[0] + (at + i) * 4, 4);
        for (uint32_t r = 1; r < size_; ++r) {
          float v;
          std::memcpy(&v, in[r] + (at + i) * 4, 4);
          acc = c.op == ReduceOp::Sum ? acc + v : c.op == ReduceOp::Max ? std::max(acc, v)
                : c.op == ReduceOp::Min ? std::min(acc, v) : acc * v;
        }
        out[i] = acc;
      }
    };
    // The calls as posted, copied under the lock: a rank that finished computing writes
    // its entry again at its second arrival while others still read.
    std::vector<rt::CollectiveCall> calls;
    {
      std::lock_guard<std::mutex> lock(m_);
      calls = calls_;
    }
    std::vector<const uint8_t *> sends(size_);
    for (uint32_t r = 0; r < size_; ++r) sends[r] = static_cast<const uint8_t *>(calls[r].send);
    std::vector<uint8_t> tmp(c.kind == CollKind::AllGather ? bytes * size_ : bytes);
    switch (c.kind) {
    case CollKind::AllReduce:
    case CollKind::ReduceScatter:
      if (c.type != ScalarType::F32) return makeError("the test world reduces f32 only");
      reduce(reinterpret_cast<float *>(tmp.data()), sends.data(), c.kind == CollKind::AllReduce ? 0 : rank * n);
      break;
    case CollKind::AllGather:
      for (uint32_t r = 0; r < size_; ++r) std::memcpy(tmp.data() + r * bytes, sends[r], bytes);
      break;
    case CollKind::Broadcast: std::memcpy(tmp.data(), sends[c.peer], bytes); break;
    case CollKind::Send: return Error::success();
    case CollKind::Recv:
      if (calls[c.peer].kind != CollKind::Send) return makeError(c.what + ": the peer does not send");
      std::memcpy(tmp.data(), sends[c.peer], bytes);
      break;
    }
    // Everyone has read the send sides only after the second arrival: write after a
    // private copy, which is what makes in place safe here.
    std::lock_guard<std::mutex> lock(writeMutex_);
    pending_.push_back({c.recv, std::move(tmp)});
    return Error::success();
  }

public:
  // Called by each rank after the second arrival: its receive side gets its result.
  void flush(void *recv) {
    std::lock_guard<std::mutex> lock(writeMutex_);
    for (auto it = pending_.begin(); it != pending_.end(); ++it)
      if (it->first == recv) {
        std::memcpy(recv, it->second.data(), it->second.size());
        pending_.erase(it);
        return;
      }
  }

private:
  uint32_t size_;
  std::mutex m_, writeMutex_;
  std::condition_variable cv_;
  uint32_t arrived_ = 0;
  uint64_t generation_ = 0;
  std::vector<rt::CollectiveCall> calls_;
  std::vector<std::pair<void *, std::vector<uint8_t>>> pending_;
};

class ThreadCommunicator final : public rt::Communicator {
public:
  ThreadCommunicator(ThreadWorld &w, uint32_t rank) : w_(w), rank_(rank) {}
  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return w_.size(); }
  const char *name() const override { return "threads"; }
  Error run(const rt::CollectiveCall &c, std::chrono::milliseconds timeout) override {
    ++calls;
    CGRAPH_RETURN_IF_ERROR(w_.run(rank_, c, timeout));
    if (c.recv) w_.flush(c.recv);
    return Error::success();
  }
  int calls = 0;

private:
  ThreadWorld &w_;
  uint32_t rank_;
};

using cgraph::test::addExpr;
using cgraph::test::coll;

constexpr uint64_t kN = 8;

// Slots (f32): 0 g[8] (all_reduce sum in place), 1 part[8] -> 2 whole[16] (all_gather),
// 2 whole -> 3 mine[8] (reduce_scatter sum), 4 w[8] (broadcast from root 1), node 4
// sends 5 act[8] to ($rank + 1) % $world, node 5 receives 6 inbox[8] from the same
// rank (the test's communicator pairs a send with a recv at the same step, so rank 1
// runs the graph with nodes 4 and 5 swapped).
Graph worldGraph() {
  GraphBuilder b("world");
  for (auto [name, n] : std::vector<std::pair<const char *, uint64_t>>{
           {"g", kN}, {"part", kN}, {"whole", 2 * kN}, {"mine", kN}, {"w", kN}, {"act", kN}, {"inbox", kN}})
    addSlot(b, name, n * 4);
  b.addParam(Param{"rank", ScalarType::I32, 0});
  b.addParam(Param{"world", ScalarType::I32, 1});
  b.addCollective("sum", coll(CollKind::AllReduce, 0, 0, kN));
  b.addCollective("gather", coll(CollKind::AllGather, 1, 2, kN));
  b.addCollective("scatter", coll(CollKind::ReduceScatter, 2, 3, kN));
  CollectiveOp bc = coll(CollKind::Broadcast, 4, 4, kN);
  bc.peer = 1;
  b.addCollective("bcast", bc);
  b.addCollective("first", coll(CollKind::Send, 5, kNone, kN));   // 4: send on rank 0, recv on rank 1
  b.addCollective("second", coll(CollKind::Recv, kNone, 6, kN));  // 5: recv on rank 0, send on rank 1
  Graph g = b.take();
  addExpr(g, 4, ExprField::CollPeer, "($rank + 1) % $world");
  addExpr(g, 5, ExprField::CollPeer, "($rank + 1) % $world");
  for (uint32_t i = 0; i + 1 < g.nodes.size(); ++i) g.edges.push_back({i, i + 1});
  return g;
}

struct RankResult {
  Error error;
  std::vector<std::vector<float>> slots;
};

// `check`: the ranks compare their collectives at finalize (off where one rank of a
// larger world runs alone, to reach the errors of a submission).
RankResult runRank(const Graph &g, rt::Communicator &comm, std::chrono::milliseconds timeout, bool check = true) {
  RankResult out;
  rt::FinalizeOptions fo;
  fo.communicator = &comm;
  fo.collectiveTimeout = timeout;
  fo.checkCollectives = check;
  auto exe = cpuDevice().finalize(g, fo);
  if (!exe) return {exe.error(), {}};
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable table;
  const float r = float(comm.rank());
  for (uint32_t s = 0; s < g.slots.size(); ++s) {
    auto buf = cpuDevice().allocate(g.slots[s].size, 64);
    if (!buf) return {buf.error(), {}};
    float *p = static_cast<float *>((*buf)->hostPointer());
    for (uint64_t i = 0; i < g.slots[s].size / 4; ++i) p[i] = 100 * r + 10 * float(s) + float(i);
    table.slots.push_back(rt::Binding{buf->get(), 0, 0});
    bufs.push_back(std::move(*buf));
  }
  rt::ParamValues pv;
  if (g.findParam("rank") != kNone)
    if (Error e = pv.set(g, "rank", std::to_string(comm.rank()))) return {std::move(e), {}};
  if (g.findParam("world") != kNone)
    if (Error e = pv.set(g, "world", std::to_string(comm.size()))) return {std::move(e), {}};
  auto ev = (*exe)->enqueue(table, pv);
  if (!ev) return {ev.error(), {}};
  if (Error e = (*ev)->wait()) return {std::move(e), {}};
  for (auto &b : bufs) {
    const float *p = static_cast<const float *>(b->hostPointer());
    out.slots.emplace_back(p, p + b->size() / 4);
  }
  return out;
}

float init(uint32_t rank, uint32_t slot, uint64_t i) { return 100.0f * rank + 10.0f * slot + float(i); }

} // namespace

TEST_CASE("collectives: every kind across two ranks on the cpu backend", "[cpu][collective]") {
  // Rank 1's graph swaps send and recv (node 4 receives, node 5 sends).
  Graph g0 = worldGraph();
  Graph g1 = g0;
  std::swap(g1.nodes[4].coll, g1.nodes[5].coll);
  ThreadWorld world(2);
  ThreadCommunicator c0(world, 0), c1(world, 1);
  RankResult r0, r1;
  std::thread t1([&] { r1 = runRank(g1, c1, std::chrono::seconds(20)); });
  r0 = runRank(g0, c0, std::chrono::seconds(20));
  t1.join();
  INFO((r0.error ? r0.error.message() : std::string()) + " | " + (r1.error ? r1.error.message() : std::string()));
  REQUIRE_FALSE(r0.error);
  REQUIRE_FALSE(r1.error);
  CHECK(c0.calls == 7); // the six nodes and finalize's comparison
  const RankResult *rs[2] = {&r0, &r1};
  for (uint32_t r = 0; r < 2; ++r) {
    const auto &s = rs[r]->slots;
    for (uint64_t i = 0; i < kN; ++i) {
      INFO("rank " << r << " element " << i);
      CHECK(s[0][i] == init(0, 0, i) + init(1, 0, i));                     // all_reduce sum
      CHECK(s[2][i] == init(0, 1, i));                                     // all_gather block 0
      CHECK(s[2][kN + i] == init(1, 1, i));                                // all_gather block 1
      CHECK(s[3][i] == 2 * s[2][r * kN + i]);                              // reduce_scatter sum of 'whole'
      CHECK(s[4][i] == init(1, 4, i));                                     // broadcast from root 1
      CHECK(s[6][i] == init(1 - r, 5, i));                                 // recv from the other rank
    }
  }
}

TEST_CASE("collectives: a world of one rank runs through LocalCommunicator", "[cpu][collective]") {
  GraphBuilder b("one");
  addSlot(b, "g", 16);
  addSlot(b, "out", 16);
  b.addCollective("gather", coll(CollKind::AllGather, 0, 1, 4));
  Graph g = b.take();
  rt::LocalCommunicator local;
  RankResult r = runRank(g, local, std::chrono::seconds(5));
  REQUIRE_FALSE(r.error);
  for (uint64_t i = 0; i < 4; ++i) CHECK(r.slots[1][i] == init(0, 0, i));
}

TEST_CASE("collectives: errors name the node and rank", "[cpu][collective]") {
  GraphBuilder b("errs");
  addSlot(b, "a", 32);
  b.addParam(Param{"peer", ScalarType::I32, 3});
  b.addCollective("tx", coll(CollKind::Send, 0, kNone, 8));
  Graph g = b.take();
  addExpr(g, 0, ExprField::CollPeer, "$peer");
  SECTION("no communicator") {
    auto exe = cpuDevice().finalize(g, rt::FinalizeOptions{});
    REQUIRE_FALSE(exe.ok());
    CHECK(exe.error().message() == "the graph has collective nodes but no communicator was given (run it under "
                                   "mpirun, or bind one in FinalizeOptions)");
  }
  SECTION("a peer outside the world") {
    ThreadWorld world(2);
    ThreadCommunicator c0(world, 0);
    RankResult r = runRank(g, c0, std::chrono::seconds(5), false);
    REQUIRE(r.error);
    CHECK(r.error.message() == "node 'tx' (rank 0 of 2): send peer 3 is not a rank of the world");
  }
  SECTION("sides that overlap in a world of this size") {
    GraphBuilder b2("overlap");
    addSlot(b2, "s", 64);
    b2.addParam(Param{"off", ScalarType::I32, 32});
    b2.addCollective("gather", coll(CollKind::AllGather, 0, 0, 4)); // recv at $off - 24: 2 blocks of 16 bytes
    Graph g2 = b2.take();
    addExpr(g2, 0, ExprField::CollRecvOffset, "$off - 24");
    ThreadWorld world(2);
    ThreadCommunicator c0(world, 0);
    RankResult r = runRank(g2, c0, std::chrono::seconds(5), false);
    REQUIRE(r.error);
    CHECK(r.error.message() == "node 'gather' (rank 0 of 2): all_gather send side [0, 16) and receive side [8, 40) "
                               "overlap in slot 's'");
  }
  SECTION("a rank that never arrives times out") {
    Graph g2 = g;
    g2.exprs.clear();
    g2.nodes[0].coll.peer = 1;
    ThreadWorld world(2);
    ThreadCommunicator c0(world, 0);
    const auto t0 = std::chrono::steady_clock::now();
    RankResult r = runRank(g2, c0, std::chrono::milliseconds(200), false);
    REQUIRE(r.error);
    CHECK(r.error.code() == ErrorCode::Timeout);
    CHECK(r.error.message().find("node 'tx' (rank 0 of 2): send timed out") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  }
}

TEST_CASE("collectives: ranks that would run different collectives fail at finalize", "[cpu][collective]") {
  auto graphWith = [](uint64_t count, ReduceOp op) {
    GraphBuilder b("mismatch");
    addSlot(b, "g", 64);
    CollectiveOp c = coll(CollKind::AllReduce, 0, 0, count);
    c.op = op;
    b.addCollective("sum", c);
    return b.take();
  };
  struct Case {
    Graph other;
    const char *detail;
  };
  for (Case &k : std::vector<Case>{{graphWith(8, ReduceOp::Max), " that differ"}, {Graph{}, ""}}) {
    if (k.other.name.empty()) { // rank 1 has no all_reduce at all, only its slot
      GraphBuilder b("none");
      addSlot(b, "g", 64);
      b.addCollective("tx", coll(CollKind::Send, 0, kNone, 4));
      k.other = b.take();
    }
    const Graph g0 = graphWith(8, ReduceOp::Sum);
    ThreadWorld world(2);
    ThreadCommunicator c0(world, 0), c1(world, 1);
    Error e0, e1;
    std::thread t([&] {
      rt::FinalizeOptions fo;
      fo.communicator = &c1;
      fo.collectiveTimeout = std::chrono::seconds(20);
      auto x = cpuDevice().finalize(k.other, fo);
      if (!x) e1 = x.error();
    });
    rt::FinalizeOptions fo;
    fo.communicator = &c0;
    fo.collectiveTimeout = std::chrono::seconds(20);
    auto x0 = cpuDevice().finalize(g0, fo);
    t.join();
    REQUIRE_FALSE(x0.ok());
    INFO(x0.error().message());
    CHECK(x0.error().message().rfind("the ranks run different collectives: rank 0 has 1 "
                                     "all_reduce/all_gather/reduce_scatter/broadcast nodes, rank 1 has ", 0) == 0);
    CHECK(x0.error().message().find(k.detail) != std::string::npos);
    REQUIRE(e1);
    CHECK(e1.message() == x0.error().message()); // every rank says the same
  }
}
