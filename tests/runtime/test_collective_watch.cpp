// The portable parts of stream-ordered collectives: rt::watchCollectives (the
// submission's event polled with the communicator's asynchronous errors and a time
// limit, the communicator aborted on either) and rt::resolveCollective's checks. The
// communicator here is a scripted transport (which error, when); the events are
// WaitOnceEvents completed by a flag, as a device would.
#include "cgraph/graph/builder.h"
#include "cgraph/runtime/communicator.h"
#include "cgraph/runtime/wait_once_event.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

using namespace cgraph;
using namespace cgraph::rt;

namespace {

class FlagEvent final : public WaitOnceEvent {
public:
  bool isComplete() const override { return done.load(); }
  std::atomic<bool> done{false};

private:
  Error waitOnce() override {
    while (!done.load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
    timings_.push_back({3, 1, 2, 0});
    return Error::success();
  }
};

class ScriptedComm final : public Communicator {
public:
  uint32_t rank() const override { return 1; }
  uint32_t size() const override { return 2; }
  const char *name() const override { return "scripted"; }
  Error run(const CollectiveCall &, std::chrono::milliseconds) override { return Error::success(); }
  bool streamOrdered() const override { return true; }
  Error asyncError() override {
    ++polls;
    return failAsync.load() ? makeError(ErrorCode::DeviceLost, "remote peer closed the connection") : Error::success();
  }
  void abort() override { ++aborts; }
  std::atomic<bool> failAsync{false};
  std::atomic<int> polls{0}, aborts{0};
};

using std::chrono::milliseconds;

} // namespace

TEST_CASE("watchCollectives: completes with the inner event and its timings", "[runtime][collective]") {
  auto inner = std::make_shared<FlagEvent>();
  ScriptedComm comm;
  EventPtr e = watchCollectives(inner, comm, milliseconds(5000), "node 'sum' (rank 1 of 2)");
  CHECK_FALSE(e->isComplete());
  CHECK(&unwrapWatched(*e) == inner.get());
  CHECK(&unwrapWatched(*inner) == inner.get());
  std::thread t([&] {
    std::this_thread::sleep_for(milliseconds(30));
    inner->done = true;
  });
  Error err = e->wait();
  t.join();
  CHECK_FALSE(err);
  CHECK(e->isComplete());
  REQUIRE(e->nodeTimings().size() == 1);
  CHECK(e->nodeTimings()[0].node == 3);
  CHECK(comm.aborts == 0);
  CHECK(comm.polls > 0);
}

TEST_CASE("watchCollectives: a stuck submission times out and aborts the communicator", "[runtime][collective]") {
  auto inner = std::make_shared<FlagEvent>();
  ScriptedComm comm;
  EventPtr e = watchCollectives(inner, comm, milliseconds(200), "node 'sum' (rank 1 of 2)");
  const auto t0 = std::chrono::steady_clock::now();
  Error err = e->wait();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(err);
  CHECK(err.code() == ErrorCode::Timeout);
  CHECK(err.message() == "node 'sum' (rank 1 of 2): not complete after 200 ms (a peer that stopped or never "
                         "joined); the scripted communicator was aborted");
  CHECK(ms >= 190);
  CHECK(ms < 5000);
  CHECK(comm.aborts == 1);
  // The result is kept: a second wait returns it at once.
  CHECK(e->wait().message() == err.message());
  inner->done = true;
}

TEST_CASE("watchCollectives: an asynchronous transport error fails the wait at once", "[runtime][collective]") {
  auto inner = std::make_shared<FlagEvent>();
  ScriptedComm comm;
  comm.failAsync = true;
  EventPtr e = watchCollectives(inner, comm, milliseconds(60000), "node 'g' (rank 1 of 2)");
  const auto t0 = std::chrono::steady_clock::now();
  Error err = e->wait();
  REQUIRE(err);
  CHECK(err.code() == ErrorCode::DeviceLost);
  CHECK(err.message().find("remote peer closed the connection") != std::string::npos);
  CHECK(err.message().find("node 'g' (rank 1 of 2)") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  CHECK(comm.aborts == 1);
  inner->done = true;
}

TEST_CASE("resolveCollective: addresses, and the checks every backend shares", "[runtime][collective]") {
  GraphBuilder b("g");
  for (auto [name, bytes] : std::vector<std::pair<const char *, uint64_t>>{{"a", 64}, {"b", 128}}) {
    Slot s;
    s.name = name;
    s.size = bytes;
    b.addSlot(s);
  }
  CollectiveOp c;
  c.kind = CollKind::AllGather;
  c.sendSlot = 0;
  c.recvSlot = 1;
  c.count = 16;
  b.addCollective("gather", c);
  Graph g = b.take();
  const uint64_t base[2] = {0x10000, 0x20000}, length[2] = {64, 128};
  auto call = resolveCollective(g, 0, c, base, length, 1, 2);
  REQUIRE(call.ok());
  CHECK(call->send == reinterpret_cast<const void *>(uintptr_t(0x10000)));
  CHECK(call->recv == reinterpret_cast<void *>(uintptr_t(0x20000)));
  CHECK(call->what == "node 'gather' (rank 1 of 2)");
  // Three ranks: the receive side needs 3 x 16 floats, more than 'b' holds.
  auto big = resolveCollective(g, 0, c, base, length, 1, 3);
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().message() == "node 'gather' (rank 1 of 3): all_gather receive side: 48 elements of 4 bytes "
                                 "from offset 0 are past the end of slot 'b' (128 bytes)");
  CollectiveOp bc = c;
  bc.kind = CollKind::Broadcast;
  bc.peer = 2;
  auto root = resolveCollective(g, 0, bc, base, length, 0, 2);
  REQUIRE_FALSE(root.ok());
  CHECK(root.error().message() == "node 'gather' (rank 0 of 2): broadcast root 2 is not a rank of the world");
}
