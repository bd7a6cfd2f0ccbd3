#include "test_helpers.h"

#include <cstring>

namespace cgraph::test {

EdgeSet edgeSet(const Graph &g) {
  EdgeSet s;
  for (const Edge &e : g.edges) s.insert({e.from, e.to});
  return s;
}

Slot slot(const std::string &name, uint64_t size, SlotInit init) {
  Slot s;
  s.name = name;
  s.size = size;
  s.init = init;
  return s;
}

KernelParam bufferParam(const std::string &name, bool isConst) {
  KernelParam p;
  p.name = name;
  p.typeName = isConst ? "const float*" : "float*";
  p.kind = ParamKind::GlobalBuffer;
  p.size = 4;
  p.qualifiers = isConst ? uint32_t(kQualConst) : 0u;
  return p;
}

KernelParam scalarParam(const std::string &name, const std::string &type, uint32_t size) {
  KernelParam p;
  p.name = name;
  p.typeName = type;
  p.kind = ParamKind::Scalar;
  p.size = size;
  return p;
}

uint32_t addKernel(GraphBuilder &b, const std::string &name, std::vector<KernelParam> params) {
  uint32_t m = b.graph().modules.empty() ? b.addModule(KernelModule{"m.cl", {}}) : 0;
  Kernel k;
  k.name = name;
  k.module = m;
  k.params = std::move(params);
  return b.addKernel(std::move(k));
}

uint32_t f32Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

std::vector<uint64_t> slotSizes(const Graph &g) {
  std::vector<uint64_t> bytes;
  for (const Slot &s : g.slots) bytes.push_back(s.size);
  return bytes;
}

} // namespace cgraph::test
