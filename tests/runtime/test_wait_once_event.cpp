// rt::WaitOnceEvent: the backend's wait runs once; every wait, from any thread, gets
// its result; the timings it filled are what nodeTimings() returns.
#include "cgraph/runtime/wait_once_event.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using namespace cgraph;
using namespace cgraph::rt;

namespace {

class CountingEvent final : public WaitOnceEvent {
public:
  explicit CountingEvent(bool fail) : fail_(fail) {}
  bool isComplete() const override { return calls.load() > 0; }
  bool finished() const { return waited(); }
  std::atomic<int> calls{0};

private:
  Error waitOnce() override {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(20)); // let the other threads pile up
    timings_.push_back({7, 10, 20, 0});
    return fail_ ? makeError("device fault") : Error::success();
  }
  bool fail_;
};

} // namespace

TEST_CASE("wait-once event runs the backend's wait once, from many threads", "[runtime][event]") {
  for (bool fail : {false, true}) {
    CountingEvent e(fail);
    CHECK_FALSE(e.finished());
    std::vector<std::thread> threads;
    std::vector<std::string> messages(8);
    for (size_t i = 0; i < messages.size(); ++i)
      threads.emplace_back([&, i] {
        Error r = e.wait();
        messages[i] = r ? r.message() : "ok";
      });
    for (std::thread &t : threads) t.join();
    CHECK(e.calls.load() == 1);
    CHECK(e.finished());
    for (const std::string &m : messages) CHECK(m == (fail ? "device fault" : "ok"));
    Error again = e.wait();
    CHECK(bool(again) == fail);
    CHECK(e.calls.load() == 1);
    REQUIRE(e.nodeTimings().size() == 1);
    CHECK(e.nodeTimings()[0].node == 7);
    CHECK(e.nodeTimings()[0].endNs == 20);
  }
}
