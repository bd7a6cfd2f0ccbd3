// Initial contents of runtime-owned slots.
#include "temp_dir.h"

#include "cgraph/runtime/npy.h"
#include "cgraph/runtime/slot_init.h"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace cgraph;
using namespace cgraph::rt;
using namespace cgraph::rt::test;

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
