#include <cgraph/graph/recorder.h>

namespace cgraph {

uint32_t Recorder::record(uint32_t node) {
  lastDeps_ = tracker_.add(builder_.graph(), node);
  for (uint32_t p : lastDeps_) builder_.addEdge(p, node);
  return node;
}

uint32_t Recorder::addKernelNode(std::string name, uint32_t kernel, NDRange range,
                                 std::vector<Arg> args) {
  return record(builder_.addKernelNode(std::move(name), kernel, range, std::move(args)));
}
uint32_t Recorder::addCopy(std::string name, CopyOp op) {
  return record(builder_.addCopy(std::move(name), op));
}
uint32_t Recorder::addCopyRect(std::string name, CopyOp op) {
  return record(builder_.addCopyRect(std::move(name), op));
}
uint32_t Recorder::addFill(std::string name, FillOp op) {
  return record(builder_.addFill(std::move(name), std::move(op)));
}
uint32_t Recorder::addHost(std::string name, HostOp op, std::vector<Arg> args) {
  return record(builder_.addHost(std::move(name), std::move(op), std::move(args)));
}
uint32_t Recorder::addBarrier(std::string name) {
  return record(builder_.addBarrier(std::move(name)));
}
uint32_t Recorder::addSubgraph(std::string name, Graph child, std::vector<uint32_t> slotBinding) {
  return record(builder_.addSubgraph(std::move(name), std::move(child), std::move(slotBinding)));
}

Graph Recorder::take() {
  tracker_ = HazardTracker();
  lastDeps_.clear();
  return builder_.take();
}

} // namespace cgraph
