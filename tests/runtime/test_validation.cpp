// Executable::enqueue validation (every message) and Registry::open.
#include "recording_device.h"

#include "cgraph/expr.h"

#include "cgraph/graph/builder.h"

#include <catch2/catch.hpp>

using namespace cgraph;
using namespace cgraph::rt;
using namespace cgraph::rt::test;

namespace {

Slot makeSlot(const std::string &name, uint64_t size, uint32_t align,
              SlotInit init = SlotInit::External) {
  Slot s;
  s.name = name;
  s.size = size;
  s.alignment = align;
  s.init = init;
  if (init == SlotInit::Fill) s.data = {1, 2, 3, 4};
  return s;
}

Graph testGraph() {
  GraphBuilder b("t");
  uint32_t x = b.addSlot(makeSlot("x", 4096, 16));
  uint32_t y = b.addSlot(makeSlot("y", 1024, 64));
  uint32_t c = b.addSlot(makeSlot("c", 16, 16, SlotInit::Fill));
  uint32_t z = b.addSlot(makeSlot("z", 0, 4)); // unsized: needs come from its uses
  Param a;
  a.name = "a";
  a.type = ScalarType::F32;
  a.defaultBits = 0x40000000; // 2.0f
  b.addParam(a);
  Param n;
  n.name = "n";
  n.type = ScalarType::I32;
  n.defaultBits = 7;
  b.addParam(n);
  b.addCopy("cp", copyOp(x, 0, y, 0, 1024));
  b.addCopy("cc", copyOp(c, 0, x, 0, 16));
  b.addFill("fz", fillOp(z, 2048, 1024, {0, 0, 0, 0}));
  return b.take();
}

struct Fixture {
  RecordingDevice dev{"dev0"};
  RecordingDevice other{"dev1"};
  std::unique_ptr<Executable> exe;
  RecordingExecutable *rec = nullptr;
  std::unique_ptr<Buffer> bx, by, bz, bc;
  BindingTable table;
  Fixture() {
    exe = std::move(*dev.finalize(testGraph(), {}));
    rec = static_cast<RecordingExecutable *>(exe.get());
    bx = std::move(*dev.allocate(4096));
    by = std::move(*dev.allocate(2048));
    bz = std::move(*dev.allocate(3072));
    bc = std::move(*dev.allocate(16));
    table.slots = {{bx.get(), 0, 0}, {by.get(), 0, 0}, {nullptr, 0, 0}, {bz.get(), 0, 0}};
  }
  std::string fails() {
    Expected<EventPtr> e = exe->enqueue(table, ParamValues{});
    REQUIRE_FALSE(e.ok());
    return e.error().message();
  }
};

} // namespace

TEST_CASE("a valid binding table reaches submit resolved", "[runtime][validation]") {
  Fixture f;
  f.table.slots[1] = {f.by.get(), 64, 0};
  Expected<EventPtr> e = f.exe->enqueue(f.table, ParamValues{});
  REQUIRE(e.ok());
  REQUIRE_FALSE((*e)->wait());
  REQUIRE(f.rec->submits == 1);
  REQUIRE(f.rec->lastSlots.size() == 4);
  CHECK(f.rec->lastSlots[0].buffer == f.bx.get());
  CHECK(f.rec->lastSlots[0].length == 4096);
  CHECK(f.rec->lastSlots[1].offset == 64);
  CHECK(f.rec->lastSlots[1].length == 2048 - 64); // length 0 = to the end of the buffer
  CHECK(f.rec->lastSlots[2].buffer == nullptr);   // runtime-owned
  CHECK(f.rec->lastParams == std::vector<uint64_t>{0x40000000, 7});
  CHECK(f.rec->needSize(3) == 3072); // unsized slot: offset + bytes of its fill
}

TEST_CASE("a repeated binding table passes again; any change to it is checked again", "[runtime][validation]") {
  Fixture f;
  auto ok = [&](const ParamValues &p = {}) {
    Expected<EventPtr> e = f.exe->enqueue(f.table, p);
    REQUIRE(e.ok());
    REQUIRE_FALSE((*e)->wait());
  };
  ok();
  ok();
  CHECK(f.rec->submits == 2);
  CHECK(f.rec->lastSlots[1].length == 2048);
  f.table.slots[0].length = 1024; // the same table object, one field changed
  CHECK(f.fails() == "slot 'x': bound range is 1024 bytes, the graph needs at least 4096");
  f.table.slots[0].length = 0;
  ok();
  auto small = std::move(*f.dev.allocate(512));
  f.table.slots[1].buffer = small.get();
  CHECK(f.fails() == "slot 'y': bound range is 512 bytes, the graph needs at least 1024");
  f.table.slots[1] = {f.bx.get(), 0, 1024}; // y over x, which the graph writes
  CHECK(f.fails().find("are bound to overlapping ranges of one buffer") != std::string::npos);
  f.table.slots[1] = {f.by.get(), 0, 0};
  ok();
  ParamValues p;
  p.bits = {0x3f800000, 9};
  ok(p);
  CHECK(f.rec->lastParams == std::vector<uint64_t>{0x3f800000, 9});
  ok();
  CHECK(f.rec->lastParams == std::vector<uint64_t>{0x40000000, 7});
  p.bits = {1};
  Expected<EventPtr> e = f.exe->enqueue(f.table, p);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message() == "expected 2 parameter values, got 1");
  CHECK(f.rec->submits == 6);
}

TEST_CASE("binding errors name the slot", "[runtime][validation]") {
  Fixture f;
  SECTION("missing binding for an external slot") {
    f.table.slots[0].buffer = nullptr;
    CHECK(f.fails() == "slot 'x': no binding (the slot is external and 4096 bytes are needed)");
  }
  SECTION("short table") {
    f.table.slots.resize(1);
    CHECK(f.fails() == "slot 'y': no binding (the slot is external and 1024 bytes are needed)");
  }
  SECTION("bound range too small") {
    f.table.slots[0] = {f.bx.get(), 0, 1024};
    CHECK(f.fails() == "slot 'x': bound range is 1024 bytes, the graph needs at least 4096");
  }
  SECTION("bound range too small after the offset") {
    f.table.slots[0] = {f.bx.get(), 16, 0};
    CHECK(f.fails() == "slot 'x': bound range is 4080 bytes, the graph needs at least 4096");
  }
  SECTION("requirement from a use past the declared size") {
    auto small = std::move(*f.dev.allocate(3000));
    f.table.slots[3] = {small.get(), 0, 0};
    CHECK(f.fails() == "slot 'z': bound range is 3000 bytes, the graph needs at least 3072");
  }
  SECTION("misaligned offset") {
    f.table.slots[1] = {f.by.get(), 8, 1024};
    CHECK(f.fails() == "slot 'y': offset 8 is not a multiple of the slot's alignment 64");
  }
  SECTION("offset past the buffer") {
    f.table.slots[1] = {f.by.get(), 4096, 0};
    CHECK(f.fails() == "slot 'y': offset 4096 is past the end of its 2048-byte buffer");
  }
  SECTION("range past the buffer") {
    f.table.slots[1] = {f.by.get(), 1024, 1088};
    CHECK(f.fails() == "slot 'y': bound range [1024, 1024+1088) exceeds its 2048-byte buffer");
  }
  SECTION("buffer of another device") {
    auto foreign = std::move(*f.other.allocate(4096));
    f.table.slots[0] = {foreign.get(), 0, 0};
    CHECK(f.fails() == "slot 'x': buffer belongs to device test (dev1), not test (dev0)");
  }
  SECTION("too many entries") {
    f.table.slots.push_back({f.bx.get(), 0, 0});
    CHECK(f.fails() == "binding table has 5 entries but the graph has 4 slots");
  }
  CHECK(f.rec->submits == 0);
}

TEST_CASE("runtime-owned slots are ignored unless overridden", "[runtime][validation]") {
  Fixture f;
  f.table.slots[2] = {f.bc.get(), 0, 0};
  REQUIRE(f.exe->enqueue(f.table, ParamValues{}).ok());
  CHECK(f.rec->lastSlots[2].buffer == nullptr);
  f.table.overrideInternal = true;
  REQUIRE(f.exe->enqueue(f.table, ParamValues{}).ok());
  CHECK(f.rec->lastSlots[2].buffer == f.bc.get());
  // An override is validated like any binding.
  auto tiny = std::move(*f.dev.allocate(8));
  f.table.slots[2] = {tiny.get(), 0, 0};
  CHECK(f.fails() == "slot 'c': bound range is 8 bytes, the graph needs at least 16");
}

TEST_CASE("parameter values are checked and passed", "[runtime][validation]") {
  Fixture f;
  ParamValues p;
  p.bits = {1};
  Expected<EventPtr> e = f.exe->enqueue(f.table, p);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message() == "expected 2 parameter values, got 1");
  CHECK(p.set(f.exe->graph(), "n", "42").message() ==
        "parameter values have 1 entries but the graph has 2 params");
  ParamValues q;
  REQUIRE_FALSE(q.set(f.exe->graph(), "n", "42"));
  REQUIRE(f.exe->enqueue(f.table, q).ok());
  CHECK(f.rec->lastParams == std::vector<uint64_t>{0x40000000, 42});
}

TEST_CASE("registry opens backend:index specs", "[runtime][registry]") {
  Registry r;
  r.add(std::make_unique<RecordingBackend>());
  REQUIRE(r.find("test") != nullptr);
  CHECK(r.find("cuda") == nullptr);
  Expected<Device *> d0 = r.open("test");
  REQUIRE(d0.ok());
  CHECK((*d0)->info().name == "dev0");
  Expected<Device *> d1 = r.open("test:1");
  REQUIRE(d1.ok());
  CHECK((*d1)->info().name == "dev1");
  Expected<Device *> bad = r.open("test:2");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == "device 'test:2': no device 2 (2 devices)");
  Expected<Device *> idx = r.open("test:x");
  REQUIRE_FALSE(idx.ok());
  CHECK(idx.error().message() == "device 'test:x': 'x' is not a device index");
  Expected<Device *> none = r.open("cuda:0");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message() == "device 'cuda:0': no backend 'cuda' (compiled in: test)");
}

// Stored parameter expressions: evaluated in the portable layer and handed to submit()
// as extra parameter values after the graph's own; refused on a device that does not
// declare Capabilities::storedExpressions, and on expressions a reader would refuse.
TEST_CASE("stored expressions reach submit as extra parameters", "[runtime][validation][expr]") {
  Graph g = testGraph(); // params: a (f32), n (i32 = 7)
  Kernel kk;
  kk.name = "kk";
  kk.module = 0;
  kk.params = {KernelParam{"s", "short", ParamKind::Scalar, 2, 0}, KernelParam{"f", "float", ParamKind::Scalar, 4, 0}};
  g.modules.push_back(KernelModule{"m.cl", {}});
  g.kernels.push_back(kk);
  Node k;
  k.name = "k";
  k.kind = NodeKind::Kernel;
  k.kernel = 0;
  k.range.dims = 2;
  k.range.global[0].value = 1;
  k.range.global[1].value = 4;
  k.args = {Arg::scalar(ScalarType::I16, 0), Arg::scalar(ScalarType::F32, 0)};
  g.nodes.push_back(k);
  const uint32_t node = uint32_t(g.nodes.size() - 1);
  auto fe = [&](ExprField f, uint32_t arg, const char *text, uint32_t var) {
    auto p = expr::parse(text);
    REQUIRE(p.ok());
    FieldExpr e;
    e.node = node;
    e.field = f;
    e.arg = arg;
    e.code = expr::encode(*expr::remapVariables(*p, {var}));
    return e;
  };
  g.exprs = {fe(ExprField::Global0, 0, "$n * 3", 1), fe(ExprField::ScalarArg, 0, "-$n", 1)};
  BindingTable table;
  RecordingDevice plain("plain");
  std::unique_ptr<Buffer> bx = std::move(*plain.allocate(4096)),
                          by = std::move(*plain.allocate(2048)),
                          bz = std::move(*plain.allocate(3072));
  table.slots = {{bx.get(), 0, 0}, {by.get(), 0, 0}, {nullptr, 0, 0}, {bz.get(), 0, 0}};
  {
    auto fin = plain.finalize(g, {});
    INFO((fin ? std::string() : fin.error().message()));
    REQUIRE(fin.ok());
    auto exe = std::move(*fin);
    Expected<EventPtr> e = exe->enqueue(table, ParamValues{});
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().message() ==
          "the graph has 2 parameter expressions, and device test (plain) does not "
          "evaluate stored expressions yet");
  }
  RecordingDevice dev("dev", true);
  std::unique_ptr<Buffer> cx = std::move(*dev.allocate(4096)), cy = std::move(*dev.allocate(2048)),
                          cz = std::move(*dev.allocate(3072));
  table.slots = {{cx.get(), 0, 0}, {cy.get(), 0, 0}, {nullptr, 0, 0}, {cz.get(), 0, 0}};
  auto exe = std::move(*dev.finalize(g, {}));
  auto *rec = static_cast<RecordingExecutable *>(exe.get());
  CHECK(exe->graph().nodes[node].range.global[0].param == 2); // params.size() + 0
  CHECK(exe->graph().nodes[node].args[0].kind == ArgKind::Param);
  CHECK(exe->graph().nodes[node].args[0].index == 3);
  REQUIRE(exe->enqueue(table, ParamValues{}).ok());
  CHECK(rec->lastParams == std::vector<uint64_t>{0x40000000, 7, 21, uint64_t(-7)});
  ParamValues p;
  REQUIRE_FALSE(p.set(exe->graph(), "n", "-2"));
  Expected<EventPtr> bad = exe->enqueue(table, p);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == "node 'k': global[0] = $n * 3 is -6; it must be at least 1");
  REQUIRE_FALSE(p.set(exe->graph(), "n", "40000"));
  bad = exe->enqueue(table, p);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() ==
        "node 'k': arg 0 = -$n is -40000, which does not fit its type i16");
  CHECK(rec->submits == 1);

  // What a reader would refuse is refused here too (graphs built by hand).
  Graph f = g;
  f.exprs[1] = fe(ExprField::ScalarArg, 1, "$n", 1); // a float argument
  auto fexe = std::move(*dev.finalize(f, {}));
  Expected<EventPtr> fe1 = fexe->enqueue(table, ParamValues{});
  REQUIRE_FALSE(fe1.ok());
  CHECK(fe1.error().message() == "node 'k': arg 1: not an integer scalar argument");
  Graph h = g;
  h.exprs[0] = fe(ExprField::Global0, 0, "$a", 0); // a float parameter
  auto hexe = std::move(*dev.finalize(h, {}));
  Expected<EventPtr> he = hexe->enqueue(table, ParamValues{});
  REQUIRE_FALSE(he.ok());
  CHECK(he.error().message() == "node 'k': global[0]: parameter 'a' is not an integer");
}

TEST_CASE("a slot only a conditional's body writes counts as written for overlaps", "[runtime][validation]") {
  // The body fills its slot 0, bound to the parent's "b"; "a" is only read (a copy
  // source) at the top level. Bound to overlapping ranges of one buffer, the pair is an
  // error because of the body's write.
  GraphBuilder body("body");
  body.addSlot(makeSlot("inner", 64, 4));
  body.addFill("zero", fillOp(0, 0, 64, {0, 0, 0, 0}));
  GraphBuilder b("cond");
  const uint32_t a = b.addSlot(makeSlot("a", 64, 4));
  const uint32_t bs = b.addSlot(makeSlot("b", 64, 4));
  const uint32_t c = b.addSlot(makeSlot("c", 64, 4));
  const uint32_t flag = b.addSlot(makeSlot("flag", 4, 4));
  b.addCopy("read-a", copyOp(a, 0, c, 0, 64));
  Node cond;
  cond.name = "if";
  cond.kind = NodeKind::Conditional;
  cond.cond.slot = flag;
  cond.subgraph = b.addSubgraphGraph(body.take());
  cond.subgraphSlots = {bs};
  b.addNode(cond);
  RecordingDevice dev{"dev0"};
  auto exe = dev.finalize(b.take(), {});
  REQUIRE(exe.ok());
  auto shared = std::move(*dev.allocate(256));
  auto other = std::move(*dev.allocate(64));
  auto flagBuf = std::move(*dev.allocate(4));
  BindingTable t;
  t.slots = {{shared.get(), 0, 64}, {shared.get(), 32, 64}, {other.get(), 0, 0}, {flagBuf.get(), 0, 0}};
  Expected<EventPtr> e = (*exe)->enqueue(t, ParamValues{});
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().message().find("slot 'a' and slot 'b' are bound to overlapping ranges of one buffer") !=
        std::string::npos);
  t.slots[1] = {shared.get(), 64, 64}; // apart: accepted
  Expected<EventPtr> ok = (*exe)->enqueue(t, ParamValues{});
  REQUIRE(ok.ok());
  REQUIRE_FALSE((*ok)->wait());
}

// Device::copyFromDevice's default: a direct copy between host-memory buffers, a range
// error outside them, and "no direct path" (Unsupported, the caller stages) otherwise.
TEST_CASE("copies between devices: direct between host buffers, else unsupported", "[runtime][multi-device]") {
  RecordingDevice a("a"), b("b");
  auto src = std::move(*a.allocate(64)), dst = std::move(*b.allocate(64));
  for (int i = 0; i < 64; ++i) static_cast<uint8_t *>(src->hostPointer())[i] = uint8_t(i + 1);
  REQUIRE_FALSE(b.copyFromDevice(a, *src, 8, *dst, 16, 32));
  const auto *out = static_cast<const uint8_t *>(dst->hostPointer());
  CHECK(out[15] == 0);
  CHECK(out[16] == 9);
  CHECK(out[47] == 40);
  CHECK(out[48] == 0);
  Error outside = b.copyFromDevice(a, *src, 40, *dst, 0, 32);
  REQUIRE(outside);
  CHECK(outside.code() == ErrorCode::Invalid);
  CHECK(outside.message().find("outside a buffer") != std::string::npos);
  struct DeviceOnly final : Buffer { // device memory the host cannot address
    uint64_t size() const override { return 64; }
    const Device *device() const override { return nullptr; }
  } far;
  Error none = b.copyFromDevice(a, far, 0, *dst, 0, 8);
  REQUIRE(none);
  CHECK(none.code() == ErrorCode::Unsupported);
}
