// The graph conformance cases (graph_cases.h). Every value the kernels compute is a
// small integer in float, so results are exact on every backend.
#include "graph_cases.h"

#include "../common/transfer_conformance.h" // addOneKernel

#include "cgraph/graph/builder.h"
#include "cgraph/graph/order.h"

#include <catch2/catch.hpp>

#include <cstring>

namespace cgraph::conformance {

Bytes floatBytes(const std::vector<float> &v) {
  Bytes b(v.size() * 4);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Bytes wordBytes(const std::vector<uint32_t> &v) {
  Bytes b(v.size() * 4);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

namespace {

constexpr uint32_t kN = 256; // floats per slot

const char *kAxpb = R"CL(
__kernel void axpb(__global float *y, __global const float *x, float a, float b) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + b;
}
)CL";
const char *kAddSlot = R"CL(
__kernel void add_slot(__global float *y, __global const float *d) {
  size_t i = get_global_id(0);
  y[i] += d[i];
}
)CL";

Slot makeSlot(const std::string &name, SlotInit init, Bytes data = {}, uint64_t bytes = 4 * kN) {
  Slot s;
  s.name = name;
  s.size = bytes;
  s.init = init;
  s.data = std::move(data);
  return s;
}

NDRange range(uint64_t global) {
  NDRange r;
  r.global[0].value = global;
  return r;
}

Arg f32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return Arg::scalar(ScalarType::F32, bits);
}

std::vector<float> ramp(float scale = 1) {
  std::vector<float> v(kN);
  for (uint32_t i = 0; i < kN; ++i) v[i] = scale * float(i);
  return v;
}

Graph ordered(GraphBuilder &b) {
  Graph g = b.take();
  Error e = finalizeForFile(g);
  INFO(e.message());
  REQUIRE_FALSE(e);
  return g;
}

// x (external, i) -> t = 2x + 1 (transient) -> y = t (copy) -> barrier -> y += d (embedded
// data, 100 + i) -> y[0, N/4) = 7 (fill) -> subgraph { y += 1 } -> y[3N/4, N) = f's
// (a fill-pattern slot of 1.5) -> checksum of y (a host task between device nodes) ->
// y[N/2] += 1000.
GraphCase nodeKinds() {
  GraphCase c;
  c.name = "node kinds";
  GraphBuilder b("graph-node-kinds");
  const uint32_t kAxpbK = addOneKernel(b, kAxpb, "axpb.cl"), kAdd = addOneKernel(b, kAddSlot, "add_slot.cl");
  const uint32_t kValue = addOneKernel(b, kAddValueKernel, "add_value.cl");
  std::vector<float> d(kN);
  for (uint32_t i = 0; i < kN; ++i) d[i] = 100.0f + float(i);
  const float pattern = 1.5f;
  const uint32_t x = b.addSlot(makeSlot("x", SlotInit::External)), y = b.addSlot(makeSlot("y", SlotInit::External));
  const uint32_t t = b.addSlot(makeSlot("t", SlotInit::Transient));
  const uint32_t ds = b.addSlot(makeSlot("d", SlotInit::Data, floatBytes(d)));
  const uint32_t fs = b.addSlot(makeSlot("f", SlotInit::Fill, floatBytes({pattern})));
  std::vector<uint32_t> chain;
  chain.push_back(b.addKernelNode("axpb", kAxpbK, range(kN), {Arg::slot(t), Arg::slot(x), f32(2), f32(1)}));
  CopyOp whole;
  whole.srcSlot = t;
  whole.dstSlot = y;
  whole.bytes = 4 * kN;
  chain.push_back(b.addCopy("copy", whole));
  chain.push_back(b.addBarrier("barrier"));
  chain.push_back(b.addKernelNode("add_d", kAdd, range(kN), {Arg::slot(y), Arg::slot(ds)}));
  FillOp seven;
  seven.slot = y;
  seven.bytes = kN; // N/4 floats
  seven.pattern = floatBytes({7.0f});
  chain.push_back(b.addFill("fill", seven));
  GraphBuilder child("plus_one");
  const uint32_t childValue = addOneKernel(child, kAddValueKernel, "add_value.cl");
  const uint32_t cy = child.addSlot(makeSlot("cy", SlotInit::External));
  child.addKernelNode("plus1", childValue, range(kN), {Arg::slot(cy), f32(1)});
  chain.push_back(b.addSubgraph("sub", child.take(), {y}));
  CopyOp part;
  part.srcSlot = fs;
  part.srcOffset = 4 * (3 * kN / 4);
  part.dstSlot = y;
  part.dstOffset = 4 * (3 * kN / 4);
  part.bytes = 4 * (kN / 4);
  chain.push_back(b.addCopy("copy_part", part));
  HostOp sum;
  sum.op = "checksum";
  chain.push_back(b.addHost("checksum", sum, {Arg::slot(y), Arg::string("f32")}));
  chain.push_back(b.addKernelNode("bump", kValue, range(1), {Arg::slot(y, 4 * (kN / 2)), f32(1000)}));
  for (size_t i = 1; i < chain.size(); ++i) b.addEdge(chain[i - 1], chain[i]);
  c.graph = ordered(b);

  std::vector<float> want(kN);
  double checksum = 0;
  for (uint32_t i = 0; i < kN; ++i) {
    float v = 2.0f * float(i) + 1.0f + d[i];
    if (i < kN / 4) v = 7.0f;
    v += 1.0f;
    if (i >= 3 * kN / 4) v = pattern;
    checksum += v;
    want[i] = v + (i == kN / 2 ? 1000.0f : 0.0f);
  }
  c.inputs.resize(c.graph.slots.size());
  c.inputs[x] = floatBytes(ramp());
  c.inputs[y] = floatBytes(std::vector<float>(kN, -1.0f));
  char text[64];
  std::snprintf(text, sizeof text, "sum=%.9g", checksum);
  Submission once;
  once.want = {{y, floatBytes(want)}};
  once.hostLine = text;
  c.runs = {once, once}; // twice: the transient and fill-pattern slots are set up again
  return c;
}

// y = a * x + 1 over the first $n elements, a = $a: three runs with other values.
GraphCase parameters() {
  GraphCase c;
  c.name = "parameters";
  GraphBuilder b("graph-parameters");
  const uint32_t k = addOneKernel(b, kAxpb, "axpb.cl");
  const uint32_t x = b.addSlot(makeSlot("x", SlotInit::External)), y = b.addSlot(makeSlot("y", SlotInit::External));
  Param n;
  n.name = "n";
  n.type = ScalarType::U32;
  n.defaultBits = kN;
  Param a;
  a.name = "a";
  a.type = ScalarType::F32;
  const float two = 2.0f;
  uint32_t bits;
  std::memcpy(&bits, &two, 4);
  a.defaultBits = bits;
  const uint32_t pn = b.addParam(n), pa = b.addParam(a);
  NDRange r;
  r.global[0].param = pn;
  b.addKernelNode("axpb", k, r, {Arg::slot(y), Arg::slot(x), Arg::param(pa), f32(1)});
  c.graph = ordered(b);
  c.inputs.resize(c.graph.slots.size());
  c.inputs[x] = floatBytes(ramp());
  c.inputs[y] = floatBytes(std::vector<float>(kN, 0.0f));
  std::vector<float> y1(kN), y2(kN), y3(kN);
  for (uint32_t i = 0; i < kN; ++i) {
    y1[i] = 2.0f * float(i) + 1.0f;                          // defaults: n = N, a = 2
    y2[i] = i < kN / 2 ? 3.0f * float(i) + 1.0f : y1[i];     // n = N/2, a = 3
    y3[i] = i < 17 ? -1.0f * float(i) + 1.0f : y2[i];        // n = 17, a = -1
  }
  const auto f = [](float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return uint64_t(u);
  };
  c.runs.push_back({{}, {}, false, "", {{y, floatBytes(y1)}}, ""});
  c.runs.push_back({{kN / 2, f(3.0f)}, {}, false, "", {{y, floatBytes(y2)}}, ""});
  c.runs.push_back({{17, f(-1.0f)}, {}, false, "", {{y, floatBytes(y3)}}, ""});
  return c;
}

// y = 2x + 1 ("axpb"), then y += 1 ("plus1"); updates between runs: axpb's a to 5,
// plus1 disabled, plus1 enabled over the first half only.
GraphCase updates() {
  GraphCase c;
  c.name = "updates";
  GraphBuilder b("graph-updates");
  const uint32_t k = addOneKernel(b, kAxpb, "axpb.cl"), kv = addOneKernel(b, kAddValueKernel, "add_value.cl");
  const uint32_t x = b.addSlot(makeSlot("x", SlotInit::External)), y = b.addSlot(makeSlot("y", SlotInit::External));
  const uint32_t n0 = b.addKernelNode("axpb", k, range(kN), {Arg::slot(y), Arg::slot(x), f32(2), f32(1)});
  const uint32_t n1 = b.addKernelNode("plus1", kv, range(kN), {Arg::slot(y), f32(1)});
  b.addEdge(n0, n1);
  c.graph = ordered(b);
  c.inputs.resize(c.graph.slots.size());
  c.inputs[x] = floatBytes(ramp());
  c.inputs[y] = floatBytes(std::vector<float>(kN, 0.0f));
  std::vector<float> w0(kN), w1(kN), w2(kN), w3(kN);
  for (uint32_t i = 0; i < kN; ++i) {
    w0[i] = 2.0f * float(i) + 2.0f;
    w1[i] = 5.0f * float(i) + 2.0f;
    w2[i] = 5.0f * float(i) + 1.0f;
    w3[i] = 5.0f * float(i) + (i < kN / 2 ? 2.0f : 1.0f);
  }
  rt::NodeUpdate scalar;
  scalar.args = {{2, f32(5)}};
  rt::NodeUpdate off;
  off.enabled = 0;
  rt::NodeUpdate half;
  half.enabled = 1;
  half.setRange = true;
  half.range = range(kN / 2);
  c.runs.push_back({{}, {}, false, "", {{y, floatBytes(w0)}}, ""});
  c.runs.push_back({{}, {{"axpb", scalar}}, false, "", {{y, floatBytes(w1)}}, ""});
  c.runs.push_back({{}, {{"plus1", off}}, false, "", {{y, floatBytes(w2)}}, ""});
  c.runs.push_back({{}, {{"plus1", half}}, false, "", {{y, floatBytes(w3)}}, ""});
  return c;
}

} // namespace

std::vector<GraphCase> graphCases() {
  std::vector<GraphCase> out;
  out.push_back(nodeKinds());
  out.push_back(parameters());
  out.push_back(updates());
  for (GraphCase &c : conditionalCases()) out.push_back(std::move(c));
  return out;
}

} // namespace cgraph::conformance
