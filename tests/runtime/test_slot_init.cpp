// Initial contents of runtime-owned slots.
#include "../common/temp_dir.h"

#include "cgraph/runtime/npy.h"
#include "cgraph/runtime/slot_init.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <new>

using namespace cgraph;
using namespace cgraph::rt;
using cgraph::test::TempDir;

namespace {
Slot slot(SlotInit init, uint64_t size, std::vector<uint8_t> data = {}, std::string path = "") {
  Slot s;
  s.name = "s";
  s.size = size;
  s.init = init;
  s.data = std::move(data);
  s.path = std::move(path);
  return s;
}
} // namespace

TEST_CASE("slot init kinds", "[runtime][slot_init]") {
  TempDir dir;
  HostPolicy p;
  p.allowedDirs = {dir.str()};
  p.baseDir = dir.str();

  auto data = initialSlotContents(slot(SlotInit::Data, 3, {7, 8, 9}), p);
  REQUIRE(data.ok());
  CHECK(*data == std::vector<uint8_t>{7, 8, 9});

  auto fill = initialSlotContents(slot(SlotInit::Fill, 7, {1, 2, 3}), p);
  REQUIRE(fill.ok());
  CHECK(*fill == std::vector<uint8_t>{1, 2, 3, 1, 2, 3, 1});
  std::vector<uint8_t> big(1000);
  const uint8_t pat[4] = {0xA, 0xB, 0xC, 0xD};
  fillPattern(big.data(), big.size(), pat, 4);
  for (size_t i = 0; i < big.size(); ++i) REQUIRE(big[i] == pat[i % 4]);

  auto transient = initialSlotContents(slot(SlotInit::Transient, 5), p);
  REQUIRE(transient.ok());
  CHECK(*transient == std::vector<uint8_t>(5, 0));

  const uint8_t raw[6] = {1, 2, 3, 4, 5, 6};
  REQUIRE_FALSE(writeBinaryFile(dir.str("raw.bin"), raw, 6));
  auto file = initialSlotContents(slot(SlotInit::File, 4, {}, "raw.bin"), p);
  REQUIRE(file.ok());
  CHECK(*file == std::vector<uint8_t>{1, 2, 3, 4});

  REQUIRE_FALSE(writeNpyFile(dir.str("v.npy"), ScalarType::U8, raw, 6));
  auto npy = initialSlotContents(slot(SlotInit::File, 6, {}, "v.npy"), p);
  REQUIRE(npy.ok());
  CHECK(*npy == std::vector<uint8_t>(raw, raw + 6));
}

TEST_CASE("slot init errors", "[runtime][slot_init]") {
  TempDir dir;
  HostPolicy p;
  p.allowedDirs = {dir.str()};
  p.baseDir = dir.str();
  CHECK(initialSlotContents(slot(SlotInit::External, 4), p).error().message() ==
        "slot 's': is external; the binding table supplies it");
  CHECK(initialSlotContents(slot(SlotInit::Data, 4, {1}), p).error().message() ==
        "slot 's': has 1 bytes of data, needs 4");
  CHECK(initialSlotContents(slot(SlotInit::Fill, 4), p).error().message() ==
        "slot 's': fill pattern has 0 bytes, expected 1 to 128");
  const uint8_t raw[2] = {1, 2};
  REQUIRE_FALSE(writeBinaryFile(dir.str("small.bin"), raw, 2));
  CHECK(initialSlotContents(slot(SlotInit::File, 4, {}, "small.bin"), p).error().message() ==
        "slot 's': file 'small.bin' has 2 bytes of data, the slot needs 4");
  auto escape = initialSlotContents(slot(SlotInit::File, 4, {}, "../../etc/passwd"), p);
  REQUIRE_FALSE(escape.ok());
  CHECK(escape.error().message().rfind("slot 's': path '../../etc/passwd' resolves to '", 0) == 0);
  CHECK(escape.error().message().find("outside the allowed directories") != std::string::npos);
}

namespace {
// Memory the runtime can reach only through write (no host pointer), as on a GPU; the
// device records the largest single write.
class DeviceOnlyBuffer : public Buffer {
public:
  explicit DeviceOnlyBuffer(uint64_t n) : bytes(size_t(n)) {}
  uint64_t size() const override { return bytes.size(); }
  std::vector<uint8_t> bytes;
};

class WriteOnlyDevice : public Device {
public:
  uint64_t largestWrite = 0;
  int allocations = 0;
  bool throwBadAlloc = false; // allocate() throws std::bad_alloc, as an allocator may
  DeviceInfo info_;
  const DeviceInfo &info() const override { return info_; }
  Expected<std::unique_ptr<Buffer>> allocate(uint64_t bytes, uint32_t) override {
    ++allocations;
    if (throwBadAlloc) throw std::bad_alloc();
    return std::unique_ptr<Buffer>(new DeviceOnlyBuffer(bytes));
  }
  Error write(Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) override {
    auto &b = static_cast<DeviceOnlyBuffer &>(dst).bytes;
    if (offset > b.size() || bytes > b.size() - offset) return makeError("write out of range");
    std::memcpy(b.data() + offset, src, size_t(bytes));
    largestWrite = std::max(largestWrite, bytes);
    return Error::success();
  }
  Error read(Buffer &, uint64_t, void *, uint64_t) override { return makeError("not used"); }
  Expected<std::unique_ptr<Executable>> finalizeFlat(FlatGraph, const FinalizeOptions &) override {
    return makeError("not used");
  }
};
} // namespace

TEST_CASE("owned slots on a device without host pointers: large zero and fill slots are written in pieces",
          "[runtime][slot_init]") {
  WriteOnlyDevice dev;
  Graph g;
  constexpr uint64_t kMiB = uint64_t(1) << 20;
  g.slots = {slot(SlotInit::Transient, 20 * kMiB + 3), slot(SlotInit::Fill, 17 * kMiB + 5, {1, 2, 3}),
             slot(SlotInit::Data, 10, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}), slot(SlotInit::Fill, 100, {4, 5})};
  // The second fill slot's nodes need more than it declares: zeros past its 100 bytes;
  // likewise 1 MiB of zeros past the large fill slot's pattern.
  const std::vector<uint64_t> minSizes = {0, 18 * kMiB + 5, 0, 300};
  auto bufs = allocateOwnedSlots(dev, g, minSizes, HostPolicy{}, 64);
  REQUIRE(bufs.ok());
  auto bytesOf = [&](size_t i) -> const std::vector<uint8_t> & {
    return static_cast<DeviceOnlyBuffer &>(*(*bufs)[i]).bytes;
  };
  CHECK(dev.largestWrite <= 8 * kMiB); // never a host buffer of the slot's size
  const std::vector<uint8_t> &zeros = bytesOf(0);
  REQUIRE(zeros.size() == 20 * kMiB + 3);
  CHECK(std::all_of(zeros.begin(), zeros.end(), [](uint8_t b) { return b == 0; }));
  const std::vector<uint8_t> &fill = bytesOf(1);
  REQUIRE(fill.size() == 18 * kMiB + 5);
  size_t wrong = 0;
  for (size_t i = 0; i < fill.size(); ++i)
    wrong += fill[i] != (i < 17 * kMiB + 5 ? uint8_t(1 + i % 3) : uint8_t(0));
  CHECK(wrong == 0);
  CHECK(bytesOf(2) == std::vector<uint8_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  const std::vector<uint8_t> &small = bytesOf(3);
  REQUIRE(small.size() == 300);
  for (size_t i = 0; i < small.size(); ++i) REQUIRE(small[i] == (i < 100 ? uint8_t(4 + i % 2) : 0));

  // A bad fill pattern is still an error naming the slot.
  Graph bad;
  bad.slots = {slot(SlotInit::Fill, 9 * kMiB, {})};
  auto none = allocateOwnedSlots(dev, bad, {}, HostPolicy{}, 64);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message().find("slot 's': fill pattern has 0 bytes") != std::string::npos);
}

TEST_CASE("owned slots larger than the device's memory are refused before anything is allocated",
          "[runtime][slot_init]") {
  WriteOnlyDevice dev;
  dev.info_.name = "small";
  dev.info_.caps.globalMemoryBytes = uint64_t(1) << 30;
  Graph g;
  g.slots = {slot(SlotInit::Transient, 64), slot(SlotInit::Transient, uint64_t(1) << 40)};
  g.slots[1].name = "big";
  auto bufs = allocateOwnedSlots(dev, g, {}, HostPolicy{}, 64);
  REQUIRE_FALSE(bufs.ok());
  CHECK(bufs.error().message() ==
        "slot 'big': 1099511627776 bytes is more than the memory of device 'small' (1073741824 bytes)");
  CHECK(dev.allocations == 0);
  // A slot's minimum size from its nodes counts, not only its declared size.
  Graph grows;
  grows.slots = {slot(SlotInit::Transient, 64)};
  auto min = allocateOwnedSlots(dev, grows, {(uint64_t(1) << 30) + 1}, HostPolicy{}, 64);
  REQUIRE_FALSE(min.ok());
  CHECK(min.error().message().rfind("slot 's': 1073741825 bytes is more than the memory", 0) == 0);
  CHECK(dev.allocations == 0);
  // At the limit it is allocated.
  CHECK(checkSlotFits(dev.info(), "s", uint64_t(1) << 30).failed() == false);

  // Devices that do not say: host-memory buffers are bounded by the host's memory,
  // others are not bounded here.
  DeviceInfo host;
  host.caps.hostPointerBuffers = true;
  CHECK(deviceMemoryLimit(host) > 0);
  CHECK(checkSlotFits(host, "huge", uint64_t(1) << 62).failed());
  CHECK(deviceMemoryLimit(DeviceInfo{}) == 0);
  CHECK_FALSE(checkSlotFits(DeviceInfo{}, "huge", uint64_t(1) << 62).failed());
}

TEST_CASE("an allocation failure while setting up owned slots names the slot and its size",
          "[runtime][slot_init]") {
  WriteOnlyDevice dev;
  dev.throwBadAlloc = true;
  Graph g;
  g.slots = {slot(SlotInit::Fill, 4096, {1, 2})};
  auto bufs = allocateOwnedSlots(dev, g, {}, HostPolicy{}, 64);
  REQUIRE_FALSE(bufs.ok());
  CHECK(bufs.error().message() == "slot 's': out of memory allocating 4096 bytes");
}
