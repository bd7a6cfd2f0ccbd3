#include "test_helpers.h"

#include <cgraph/graph/validate.h>

#include <catch2/catch.hpp>

using namespace cgraph;
using namespace cgraph::test;

namespace {

// A valid graph: init (fill a) -> k (saxpy a -> t) -> c (copy t -> b) -> kf (fixed on b)
// -> h (checksum b).
Graph validateBase() {
  GraphBuilder b("base");
  b.addSlot(slot("a", 1024));
  b.addSlot(slot("b", 1024));
  b.addSlot(slot("t", 256, SlotInit::Transient));
  b.addParam(Param{"n", ScalarType::I32, 64});
  b.addParam(Param{"scale", ScalarType::F32, 0});
  KernelParam local;
  local.name = "tmp";
  local.typeName = "float*";
  local.kind = ParamKind::LocalBuffer;
  uint32_t saxpy = addKernel(b, "saxpy",
                             {bufferParam("x", true), bufferParam("y"), scalarParam("a", "float", 4),
                              scalarParam("n", "int", 4), local});
  uint32_t fixed = addKernel(b, "fixed", {bufferParam("y")});
  b.graph().kernels[fixed].reqdLocal[0] = 8;
  b.graph().kernels[fixed].reqdLocal[1] = 1;
  b.graph().kernels[fixed].reqdLocal[2] = 1;
  b.addFill("init", fillOp(0, 0, 1024, {1, 2, 3, 4}));
  b.addKernelNode("k", saxpy, range1D(256, 64),
                  {Arg::slot(0), Arg::slot(2), Arg::scalar(ScalarType::F32, f32Bits(2.0f)),
                   Arg::param(0), Arg::localMem(256)});
  b.addCopy("c", copyOp(2, 0, 1, 0, 256));
  b.addKernelNode("kf", fixed, range1D(64, 8), {Arg::slot(1)});
  b.addHost("h", HostOp{"checksum", ""}, {Arg::slot(1)});
  for (uint32_t i = 0; i < 4; ++i) b.addEdge(i, i + 1);
  return b.take();
}

std::vector<std::string> msgs(const Graph &g) {
  std::vector<std::string> m;
  for (const Diagnostic &d : validateGraph(g)) m.push_back(formatDiagnostic(d));
  return m;
}

std::string join(const std::vector<std::string> &v) {
  std::string s;
  for (const auto &x : v) s += x + "\n";
  return s;
}

} // namespace

#define EXPECT_DIAG(graph, text)                                                         \
  do {                                                                                   \
    auto m_ = msgs(graph);                                                               \
    INFO(join(m_));                                                                      \
    CHECK(std::count(m_.begin(), m_.end(), std::string(text)) == 1);                     \
  } while (0)

TEST_CASE("a valid graph has no diagnostics", "[graph][validate]") {
  Graph g = validateBase();
  CHECK(msgs(g).empty());
  CHECK_FALSE(firstError(validateGraph(g)).failed());
}

TEST_CASE("validate: cycles and edges", "[graph][validate]") {
  Graph g = validateBase();
  SECTION("cycle") {
    g.edges.push_back(Edge{4, 1});
    EXPECT_DIAG(g, "error: graph has a cycle through node 'k': 'k' -> 'c' -> 'kf' -> 'h' -> 'k'");
    auto d = validateGraph(g);
    REQUIRE_FALSE(d.empty());
    CHECK(d[0].node == 1);
  }
  SECTION("edge endpoint") {
    g.edges.push_back(Edge{0, 9});
    EXPECT_DIAG(g, "error: edge 4 (0 -> 9) points past the node table (5 nodes)");
  }
}

TEST_CASE("validate: dangling references", "[graph][validate]") {
  Graph g = validateBase();
  SECTION("kernel") {
    g.nodes[1].kernel = 5;
    EXPECT_DIAG(g, "error: node 'k': kernel index 5 but the graph has 2 kernels");
  }
  SECTION("module") {
    g.kernels[1].module = 3;
    EXPECT_DIAG(g, "error: kernel 'fixed': module index 3 but the graph has 1 modules");
  }
  SECTION("slot arg") {
    g.nodes[1].args[1].index = 7;
    EXPECT_DIAG(g, "error: node 'k': arg 1 refers to slot 7 but the graph has 3 slots");
    auto d = validateGraph(g);
    REQUIRE_FALSE(d.empty());
    CHECK(d[0].node == 1);
    CHECK(d[0].slot == 7);
  }
  SECTION("param arg") {
    g.nodes[1].args[3].index = 4;
    EXPECT_DIAG(g, "error: node 'k': arg 3 refers to param 4 but the graph has 2 params");
  }
  SECTION("copy slots") {
    g.nodes[2].copy.srcSlot = 9;
    g.nodes[2].copy.dstSlot = 8;
    EXPECT_DIAG(g, "error: node 'c': copy source refers to slot 9 but the graph has 3 slots");
    EXPECT_DIAG(g, "error: node 'c': copy destination refers to slot 8 but the graph has 3 slots");
  }
  SECTION("fill slot") {
    g.nodes[0].fill.slot = 9;
    EXPECT_DIAG(g, "error: node 'init': fill refers to slot 9 but the graph has 3 slots");
  }
  SECTION("subgraph index and binding") {
    Node s;
    s.name = "s";
    s.kind = NodeKind::Subgraph;
    s.subgraph = 3;
    g.nodes.push_back(s);
    EXPECT_DIAG(g, "error: node 's': subgraph index 3 but the graph has 0 subgraphs");
    g.subgraphs.push_back(Graph());
    g.subgraphs[0].name = "child";
    g.subgraphs[0].slots.push_back(slot("cs", 0));
    g.nodes.back().subgraph = 0;
    g.nodes.back().subgraphSlots = {9};
    EXPECT_DIAG(g, "error: node 's': subgraph slot binding 0 refers to slot 9 but the graph has 3 slots");
  }
  SECTION("order entries") {
    g.order = {0, 1, 2, 3, 9};
    EXPECT_DIAG(g, "error: order[4] refers to node 9 but the graph has 5 nodes");
    g.order = {0, 1, 2, 3};
    EXPECT_DIAG(g, "error: order has 4 entries but the graph has 5 nodes");
    g.order = {0, 1, 1, 3, 4};
    EXPECT_DIAG(g, "error: order lists node 'k' twice");
    g.order = {0, 2, 1, 3, 4};
    EXPECT_DIAG(g, "error: order places node 'c' before its predecessor node 'k'");
    g.order = {0, 1, 2, 3, 4};
    CHECK(msgs(g).empty());
  }
  SECTION("partition entries") {
    g.partitions = {Partition{{0, 1, 2, 3, 9}, {5}}};
    EXPECT_DIAG(g, "error: partitions[0].nodes[4] refers to node 9 but the graph has 5 nodes");
    EXPECT_DIAG(g, "error: partitions[0].deps[0] refers to partition 5 but there are 1 partitions");
    EXPECT_DIAG(g, "error: node 'h' is in no partition");
    g.partitions = {Partition{{0, 1, 2, 3}, {}}, Partition{{1, 4}, {0}}};
    EXPECT_DIAG(g, "error: node 'k' is in partitions 0 and 1");
  }
  SECTION("nd-range params") {
    g.nodes[1].range.global[0] = paramDim(5);
    EXPECT_DIAG(g, "error: node 'k': global[0] refers to param 5 but the graph has 2 params");
    g.nodes[1].range.global[0] = paramDim(1);
    EXPECT_DIAG(g, "error: node 'k': global[0] uses param 'scale' of type f32 (must be an integer)");
    g.nodes[1].range.global[0] = paramDim(0);
    CHECK(msgs(g).empty());
  }
}

TEST_CASE("validate: args against the kernel signature", "[graph][validate]") {
  Graph g = validateBase();
  std::vector<Arg> &args = g.nodes[1].args;
  SECTION("count") {
    args.pop_back();
    EXPECT_DIAG(g, "error: node 'k': kernel 'saxpy' takes 5 args but the node gives 4");
  }
  SECTION("buffer parameter given a scalar or a param") {
    args[0] = Arg::scalar(ScalarType::I32, 1);
    EXPECT_DIAG(g, "error: node 'k': arg 0 ('x'): kernel parameter is a buffer but the arg is a scalar");
    args[0] = Arg::param(0);
    EXPECT_DIAG(g, "error: node 'k': arg 0 ('x'): kernel parameter is a buffer but the arg is a param");
  }
  SECTION("scalar parameter given a slot") {
    args[2] = Arg::slot(0);
    EXPECT_DIAG(g, "error: node 'k': arg 2 ('a'): kernel parameter is a scalar but the arg is a slot");
  }
  SECTION("scalar size") {
    args[3] = Arg::scalar(ScalarType::I64, 5);
    EXPECT_DIAG(g, "error: node 'k': arg 3 ('n'): scalar of 8 bytes (i64) but the parameter takes 4 bytes");
  }
  SECTION("scalar type class") {
    args[2] = Arg::scalar(ScalarType::I32, 2);
    EXPECT_DIAG(g, "error: node 'k': arg 2 ('a'): scalar of type i32 for a parameter of type 'float'");
    args[2] = Arg::scalar(ScalarType::F32, 0); // unsigned vs signed of one size is accepted
    args[3] = Arg::scalar(ScalarType::U32, 7);
    CHECK(msgs(g).empty());
  }
  SECTION("invalid scalar type") {
    args[2] = Arg::scalar(ScalarType(0), 0);
    EXPECT_DIAG(g, "error: node 'k': arg 2 ('a'): invalid scalar type");
  }
  SECTION("param type") {
    args[3] = Arg::param(1);
    EXPECT_DIAG(g, "error: node 'k': arg 3 ('n'): param 'scale' of type f32 for a parameter of type 'int'");
    args[3] = Arg::param(0);
    args[2] = Arg::param(1);
    CHECK(msgs(g).empty());
  }
  SECTION("local memory only for __local parameters") {
    args[1] = Arg::localMem(16);
    EXPECT_DIAG(g, "error: node 'k': arg 1 ('y'): local memory arg for a parameter that is not __local");
    args[1] = Arg::slot(2);
    args[4] = Arg::slot(0);
    EXPECT_DIAG(g, "error: node 'k': arg 4 ('tmp'): kernel parameter is __local but the arg is a slot");
    args[4] = Arg::scalar(ScalarType::I32, 4);
    EXPECT_DIAG(g, "error: node 'k': arg 4 ('tmp'): kernel parameter is __local but the arg is a scalar");
    args[4] = Arg::localMem(0);
    EXPECT_DIAG(g, "error: node 'k': arg 4 ('tmp'): local memory arg of 0 bytes");
  }
  SECTION("string args") {
    args[4] = Arg::string("x");
    EXPECT_DIAG(g, "error: node 'k': arg 4 ('tmp'): string args are only allowed for host tasks");
  }
  SECTION("slot offset past the end") {
    args[0] = Arg::slot(0, 1024);
    EXPECT_DIAG(g, "error: node 'k': arg 0 offset 1024 is past the end of slot 'a' (1024 bytes)");
  }
  SECTION("signature checks can be turned off") {
    args.pop_back();
    ValidateOptions o;
    o.checkSignatures = false;
    CHECK(validateGraph(g, o).empty());
  }
}

TEST_CASE("validate: nd-range sanity", "[graph][validate]") {
  Graph g = validateBase();
  NDRange &r = g.nodes[1].range;
  SECTION("dimensions") {
    r.dims = 4;
    EXPECT_DIAG(g, "error: node 'k': nd-range has 4 dimensions (must be 1..3)");
    r.dims = 0;
    EXPECT_DIAG(g, "error: node 'k': nd-range has 0 dimensions (must be 1..3)");
  }
  SECTION("global size 0") {
    r = range2D(64, 0);
    EXPECT_DIAG(g, "error: node 'k': global size 0 in dimension 1");
  }
  SECTION("local divides global") {
    r = range1D(250, 64);
    EXPECT_DIAG(g, "error: node 'k': local size 64 does not divide global size 250 in dimension 0");
  }
  SECTION("stored expressions are checked per submission, not here") {
    r = range1D(250, 64);
    FieldExpr e;
    e.node = 1;
    e.field = ExprField::Global0; // the code is not looked at by validation
    g.exprs.push_back(e);
    CHECK(msgs(g).empty());
    g.exprs[0].field = ExprField::Local0;
    CHECK(msgs(g).empty());
    g.exprs[0].field = ExprField::Offset0; // an offset does not make the sizes unknown
    EXPECT_DIAG(g, "error: node 'k': local size 64 does not divide global size 250 in dimension 0");
  }
  SECTION("local given in some dimensions only") {
    r = range2D(64, 64, 8, 8);
    r.local[1].value = 0;
    EXPECT_DIAG(g, "error: node 'k': local size 0 in dimension 1 while other dimensions are given");
  }
  SECTION("reqd_work_group_size") {
    g.nodes[3].range = range1D(64, 16);
    EXPECT_DIAG(g, "error: node 'kf': kernel 'fixed' requires work-group size (8,1,1) but the node uses (16,1,1)");
    g.nodes[3].range = range1D(60);
    EXPECT_DIAG(g, "error: node 'kf': global size 60 in dimension 0 is not a multiple of the required work-group size 8 of kernel 'fixed'");
    g.nodes[3].range = range1D(64);
    CHECK(msgs(g).empty());
  }
}

TEST_CASE("validate: copies and fills", "[graph][validate]") {
  Graph g = validateBase();
  CopyOp &c = g.nodes[2].copy;
  FillOp &f = g.nodes[0].fill;
  SECTION("copy out of range") {
    c.bytes = 300;
    EXPECT_DIAG(g, "error: node 'c': copy reads bytes [0, 300) of slot 't' which has 256 bytes");
    c.bytes = 256;
    c.dstOffset = 800;
    EXPECT_DIAG(g, "error: node 'c': copy writes bytes [800, 1056) of slot 'b' which has 1024 bytes");
  }
  SECTION("unsized slots are not range checked") {
    g.slots[1].size = 0;
    c.dstOffset = 1 << 20;
    CHECK(msgs(g).empty());
  }
  SECTION("copy and fill fields that are expressions are checked per submission") {
    // .cgf 2.2: the placeholders may lie outside the slot; the runtime checks the values.
    auto expr = [&](uint32_t node, ExprField field) {
      FieldExpr e;
      e.node = node;
      e.field = field;
      e.code = {1, 0}; // param 0
      return e;
    };
    c.bytes = 300;
    f.bytes = 3;
    g.exprs = {expr(0, ExprField::FillBytes), expr(2, ExprField::CopyBytes)};
    INFO(join(msgs(g)));
    CHECK(msgs(g).empty());
    // A slot whose size is an expression: literal accesses are checked per submission too.
    g.exprs = {expr(0, ExprField::FillBytes)};
    EXPECT_DIAG(g, "error: node 'c': copy reads bytes [0, 300) of slot 't' which has 256 bytes");
    FieldExpr size = expr(kNone, ExprField::SlotSize);
    size.arg = 2; // 't'
    g.exprs.push_back(size);
    CHECK(msgs(g).empty());
  }
  SECTION("copy overlap") {
    c = copyOp(0, 0, 0, 100, 200);
    EXPECT_DIAG(g, "error: node 'c': copy source and destination overlap in slot 'a'");
  }
  SECTION("copy of 0 bytes") {
    c.bytes = 0;
    EXPECT_DIAG(g, "warning: node 'c': copy of 0 bytes");
  }
  SECTION("rect copy") {
    g.nodes[2].kind = NodeKind::CopyRect;
    c.region[0] = 0;
    EXPECT_DIAG(g, "error: node 'c': rect copy region has a zero extent (0,1,1)");
    c.region[0] = 16;
    c.region[1] = 4;
    c.srcRowPitch = 8;
    EXPECT_DIAG(g, "error: node 'c': rect copy source row pitch 8 is less than the region width 16");
    c.srcRowPitch = 0;
    c.region[2] = 2;
    c.dstSlicePitch = 32;
    EXPECT_DIAG(g, "error: node 'c': rect copy destination slice pitch 32 is less than row pitch * height 64");
    c.dstSlicePitch = 0;
    c.region[0] = 64;
    c.region[1] = 8;
    c.region[2] = 1;
    c.srcRowPitch = 64;
    EXPECT_DIAG(g, "error: node 'c': rect copy reads bytes [0, 512) of slot 't' which has 256 bytes");
    c.region[1] = 4;
    CHECK(msgs(g).empty());
  }
  SECTION("fill pattern size") {
    f.pattern.clear();
    EXPECT_DIAG(g, "error: node 'init': fill pattern has 0 bytes (must be 1..128)");
    f.pattern.assign(129, 0);
    EXPECT_DIAG(g, "error: node 'init': fill pattern has 129 bytes (must be 1..128)");
  }
  SECTION("fill bytes and offset multiples of the pattern") {
    f.bytes = 10;
    EXPECT_DIAG(g, "error: node 'init': fill of 10 bytes is not a multiple of the pattern size 4");
    f.bytes = 8;
    f.offset = 2;
    EXPECT_DIAG(g, "error: node 'init': fill offset 2 is not a multiple of the pattern size 4");
  }
  SECTION("fill out of range") {
    f.offset = 1020;
    f.bytes = 8;
    EXPECT_DIAG(g, "error: node 'init': fill writes bytes [1020, 1028) of slot 'a' which has 1024 bytes");
    auto d = validateGraph(g);
    REQUIRE(d.size() == 1);
    CHECK(d[0].node == 0);
    CHECK(d[0].slot == 0);
  }
}

TEST_CASE("validate: names, host tasks, unknown kinds", "[graph][validate]") {
  Graph g = validateBase();
  SECTION("duplicate node name") {
    g.nodes[2].name = "k";
    EXPECT_DIAG(g, "error: duplicate node name 'k' (nodes 1 and 2)");
  }
  SECTION("duplicate slot name") {
    g.slots[1].name = "a";
    EXPECT_DIAG(g, "error: duplicate slot name 'a' (slots 0 and 1)");
  }
  SECTION("duplicate param name") {
    g.params[1].name = "n";
    EXPECT_DIAG(g, "error: duplicate param name 'n' (params 0 and 1)");
  }
  SECTION("unnamed nodes are shown by index") {
    g.nodes[1].name.clear();
    g.nodes[1].args[1].index = 7;
    EXPECT_DIAG(g, "error: node #1: arg 1 refers to slot 7 but the graph has 3 slots");
  }
  SECTION("host task without op") {
    g.nodes[4].host.op.clear();
    EXPECT_DIAG(g, "error: node 'h': host task has no op");
  }
  SECTION("host task with local memory") {
    g.nodes[4].args.push_back(Arg::localMem(4));
    EXPECT_DIAG(g, "error: node 'h': arg 1: local memory args are only allowed for kernels");
  }
  SECTION("unknown node kind") {
    g.nodes[4].kind = NodeKind(42);
    EXPECT_DIAG(g, "error: node 'h': unknown node kind 42");
  }
  SECTION("built-in host task arguments (host_ops.h)") {
    g.nodes[4].host.op = "system";
    EXPECT_DIAG(g, "error: node 'h': unknown built-in host task 'system' (built-ins: checksum, print, write_file, "
                   "read_file, compare)");
    g.nodes[4].host.library = "libmine.so"; // a plugin's arguments are its own
    CHECK(msgs(g).empty());
    g.nodes[4].host = HostOp{"print", ""};
    g.nodes[4].args.push_back(Arg::slot(0));
    EXPECT_DIAG(g, "error: node 'h': arg 1: 'print' takes 1 slot argument");
    g.nodes[4].args.clear();
    EXPECT_DIAG(g, "error: node 'h': 'print' needs 1 slot argument, got 0 args");
  }
}

TEST_CASE("validate: slot use warnings", "[graph][validate]") {
  Graph g = validateBase();
  SECTION("transient read before written") {
    g.slots.push_back(slot("t2", 64, SlotInit::Transient));
    g.nodes.push_back(Node());
    g.nodes.back().name = "p";
    g.nodes.back().kind = NodeKind::Host;
    g.nodes.back().host.op = "print";
    g.nodes.back().args = {Arg::slot(3)};
    g.nodes.push_back(g.nodes.back());
    g.nodes.back().name = "w";
    g.nodes.back().host.op = "read_file";
    g.nodes.back().args.push_back(Arg::string("t2.bin"));
    g.edges.push_back(Edge{5, 6});
    EXPECT_DIAG(g, "warning: node 'p': reads transient slot 't2' before any node writes it");
    auto d = validateGraph(g);
    REQUIRE(d.size() == 1);
    CHECK(d[0].severity == Diagnostic::Warning);
    CHECK(d[0].node == 5);
    CHECK(d[0].slot == 3);
    CHECK_FALSE(firstError(d).failed());
    // Written first (the edge makes w run before p): no warning.
    g.edges.back() = Edge{6, 5};
    CHECK(msgs(g).empty());
  }
  SECTION("external and data slots may be read first") {
    g.slots.push_back(slot("in", 64, SlotInit::Data));
    g.nodes[4].host.op = "compare"; // two slots
    g.nodes[4].args.push_back(Arg::slot(3));
    CHECK(msgs(g).empty());
  }
  SECTION("slot never used") {
    g.slots.push_back(slot("spare", 64));
    EXPECT_DIAG(g, "warning: slot 'spare' is never used");
    ValidateOptions o;
    o.warnings = false;
    CHECK(validateGraph(g, o).empty());
  }
  SECTION("errors come before warnings") {
    g.slots.push_back(slot("spare", 64));
    g.nodes[4].host.op.clear();
    auto m = msgs(g);
    REQUIRE(m.size() == 2);
    CHECK(m[0] == "error: node 'h': host task has no op");
    CHECK(m[1] == "warning: slot 'spare' is never used");
    Error e = firstError(validateGraph(g));
    REQUIRE(e.failed());
    CHECK(e.message() == "node 'h': host task has no op");
  }
}

TEST_CASE("validate: subgraphs", "[graph][validate]") {
  Graph g = validateBase();
  GraphBuilder cb("child");
  cb.addSlot(slot("cs", 512));
  cb.addSlot(slot("cd", 0));
  cb.addCopy("cc", copyOp(0, 0, 1, 0, 64));
  Node s;
  s.name = "s";
  s.kind = NodeKind::Subgraph;
  s.subgraph = 0;
  s.subgraphSlots = {0, 1};
  g.nodes.push_back(s);
  g.edges.push_back(Edge{4, 5});
  SECTION("valid") {
    g.subgraphs.push_back(cb.take());
    CHECK(msgs(g).empty());
  }
  SECTION("binding count") {
    g.subgraphs.push_back(cb.take());
    g.nodes[5].subgraphSlots = {0};
    EXPECT_DIAG(g, "error: node 's': subgraph 'child' has 2 slots but the node binds 1");
  }
  SECTION("params bind by name and type") {
    cb.addParam(Param{"m", ScalarType::I32, 0});
    cb.addParam(Param{"n", ScalarType::F32, 0});
    g.subgraphs.push_back(cb.take());
    EXPECT_DIAG(g, "error: node 's': subgraph param 'm' has no parent param of that name");
    EXPECT_DIAG(g, "error: node 's': subgraph param 'n' is f32 but the parent param is i32");
  }
  SECTION("child slot larger than the parent slot") {
    cb.graph().slots[0].size = 2048;
    g.subgraphs.push_back(cb.take());
    EXPECT_DIAG(g, "error: node 's': subgraph slot 'cs' needs 2048 bytes but parent slot 'a' has 1024");
  }
  SECTION("errors inside the child are prefixed") {
    cb.addFill("cf", fillOp(0, 0, 4, {}));
    g.subgraphs.push_back(cb.take());
    EXPECT_DIAG(g, "error: subgraph 'child': node 'cf': fill pattern has 0 bytes (must be 1..128)");
    auto d = validateGraph(g);
    REQUIRE(d.size() == 1);
    CHECK(d[0].node == kNone);
    ValidateOptions o;
    o.recurseSubgraphs = false;
    CHECK(validateGraph(g, o).empty());
  }
}
