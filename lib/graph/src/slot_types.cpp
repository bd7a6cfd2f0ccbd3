#include "cgraph/graph/slot_types.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>

namespace cgraph {

bool scalarFromKernelTypeName(std::string t, ScalarType *out) {
  for (const char *q : {"const ", "__global ", "global ", "__constant ", "constant ", "volatile ", "restrict "}) {
    size_t p;
    while ((p = t.find(q)) != std::string::npos) t.erase(p, std::strlen(q));
  }
  while (!t.empty() && (t.back() == '*' || t.back() == ' ')) t.pop_back();
  while (!t.empty() && std::isdigit(static_cast<unsigned char>(t.back()))) t.pop_back();
  static const std::pair<const char *, ScalarType> kMap[] = {
      {"float", ScalarType::F32}, {"double", ScalarType::F64}, {"half", ScalarType::F16},
      {"char", ScalarType::I8},   {"uchar", ScalarType::U8},   {"unsigned char", ScalarType::U8},
      {"short", ScalarType::I16}, {"ushort", ScalarType::U16}, {"unsigned short", ScalarType::U16},
      {"int", ScalarType::I32},   {"uint", ScalarType::U32},   {"unsigned int", ScalarType::U32},
      {"long", ScalarType::I64},  {"ulong", ScalarType::U64},  {"unsigned long", ScalarType::U64},
  };
  for (const auto &m : kMap)
    if (t == m.first) {
      *out = m.second;
      return true;
    }
  return false;
}

std::vector<ScalarType> slotKernelTypes(const Graph &g, uint32_t slot) {
  std::vector<ScalarType> out;
  for (const Node &n : g.nodes) {
    if (n.kind != NodeKind::Kernel || n.kernel >= g.kernels.size()) continue;
    const Kernel &k = g.kernels[n.kernel];
    for (size_t i = 0; i < n.args.size() && i < k.params.size(); ++i) {
      ScalarType t;
      if (n.args[i].kind == ArgKind::Slot && n.args[i].index == slot &&
          scalarFromKernelTypeName(k.params[i].typeName, &t) && std::find(out.begin(), out.end(), t) == out.end())
        out.push_back(t);
    }
  }
  return out;
}

} // namespace cgraph
