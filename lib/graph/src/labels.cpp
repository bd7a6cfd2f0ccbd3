#include <cgraph/graph/labels.h>

namespace cgraph {

std::string nodeLabel(const Graph &g, uint32_t n) {
  if (n < g.nodes.size() && !g.nodes[n].name.empty()) return "node '" + g.nodes[n].name + "'";
  return "node #" + std::to_string(n);
}

std::string slotLabel(const Graph &g, uint32_t s) {
  if (s < g.slots.size() && !g.slots[s].name.empty()) return "slot '" + g.slots[s].name + "'";
  return "slot #" + std::to_string(s);
}

} // namespace cgraph
