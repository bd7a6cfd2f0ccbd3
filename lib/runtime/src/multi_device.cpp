// Multi-device graphs: segments per device, slot contents moved between devices
// directly where the backend can, else through host memory (multi_device.h says what
// and why).
#include "cgraph/runtime/multi_device.h"

#include "stages.h"

#include "cgraph/graph/flatten.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/graph/validate.h"

#include <algorithm>

namespace cgraph::rt {

namespace {


std::string deviceName(const Device &d) { return d.info().backend + " (" + d.info().name + ")"; }

class MultiDeviceExecutable : public Executable {
public:
  MultiDeviceExecutable(std::vector<Device *> devices, Graph flat, ExecMode mode)
      : Executable(*devices[0], flat, mode), devices_(std::move(devices)), plan_(std::move(flat)) {}

  Error build(const FinalizeOptions &opts) {
    const Graph &g = plan_;
    for (uint32_t n = 0; n < g.nodes.size(); ++n)
      if (g.nodes[n].device >= devices_.size())
        return makeError(nodeLabel(g, n) + " is placed on device " + std::to_string(g.nodes[n].device) + " but " +
                         std::to_string(devices_.size()) + " device" + (devices_.size() == 1 ? " was" : "s were") +
                         " given");
    // No memory planning: segments move and mirror slots one by one between devices.
    auto owned = allocateOwnedSlots(opts.host, 1, false);
    if (!owned) return owned.error();
    owned_ = std::move(*owned);
    mirrors_.resize(devices_.size());
    for (auto &m : mirrors_) m.resize(g.slots.size());
    for (size_t i = 0; i < g.order.size();) {
      Segment seg;
      seg.device = g.nodes[g.order[i]].device;
      while (i < g.order.size() && g.nodes[g.order[i]].device == seg.device) seg.nodes.push_back(g.order[i++]);
      // The segment's graph names only the slots its nodes use; each is moved to the
      // segment's device before it runs (written ones are then current only there).
      std::vector<uint32_t> used;
      Graph stage = detail::stageGraph(g, seg.nodes, &used);
      std::vector<uint8_t> writes(g.slots.size(), 0);
      for (uint32_t n : seg.nodes)
        for (const SlotAccess &a : nodeAccesses(g, n).accesses)
          if (a.slot < writes.size() && a.write) writes[a.slot] = 1;
      for (uint32_t s : used) seg.slots.push_back({s, writes[s] != 0});
      auto exe = devices_[seg.device]->finalizeOwned(std::move(stage), opts);
      if (!exe)
        return exe.error().withContext("device " + std::to_string(seg.device) + " (" +
                                       deviceName(*devices_[seg.device]) + "), segment from " +
                                       nodeLabel(g, seg.nodes[0]));
      seg.exe = std::move(*exe);
      segments_.push_back(std::move(seg));
    }
    return Error::success();
  }

protected:
  Expected<EventPtr> submit(const std::vector<ResolvedSlot> &slots, const std::vector<uint64_t> &params,
                            const SubmitOptions &opts) override {
    for (const EventPtr &e : opts.waitFor)
      if (e) CGRAPH_RETURN_IF_ERROR(e->wait().withContext("a waited-for submission failed"));
    Error e = run(slots, params, opts);
    return EventPtr(std::make_shared<detail::DoneEvent>(std::move(e), std::vector<NodeTiming>{}));
  }

  // Each updated node is in one segment: its executable gets the node's new state,
  // with slots renumbered to the segment's (a slot the segment does not use is refused).
  Error applyUpdate(const std::vector<uint32_t> &nodes) override {
    for (uint32_t n : nodes)
      for (Segment &seg : segments_) {
        auto it = std::find(seg.nodes.begin(), seg.nodes.end(), n);
        if (it == seg.nodes.end()) continue;
        std::vector<uint32_t> slotOf(plan_.slots.size(), kNone);
        for (uint32_t i = 0; i < seg.slots.size(); ++i) slotOf[seg.slots[i].slot] = i;
        auto u = detail::forwardedUpdate(plan_, graph_, n, uint32_t(it - seg.nodes.begin()), nodeEnabled(n), &slotOf);
        if (!u) return u.error();
        CGRAPH_RETURN_IF_ERROR(seg.exe->update(*u));
      }
    return Error::success();
  }

private:
  struct Segment {
    uint32_t device = 0;
    std::vector<uint32_t> nodes; // in execution order; segment node i = nodes[i]
    struct Use {
      uint32_t slot;
      bool writes;
    };
    std::vector<Use> slots;
    std::unique_ptr<Executable> exe;
  };

  // The home device's view of slot s for this submission.
  Binding home(const std::vector<ResolvedSlot> &slots, uint32_t s) const {
    if (slots[s].buffer) return Binding{slots[s].buffer, slots[s].offset, slots[s].length};
    if (s < owned_.size() && owned_[s]) return Binding{owned_[s].get(), 0, owned_[s]->size()};
    return Binding{};
  }

  // Device d's buffer for slot s, at least `bytes` long (allocated on first use).
  Expected<Binding> mirror(uint32_t d, uint32_t s, uint64_t bytes) {
    std::unique_ptr<Buffer> &b = mirrors_[d][s];
    if (!b || b->size() < bytes) {
      auto nb = devices_[d]->allocate(std::max<uint64_t>(bytes, 1), 64);
      if (!nb)
        return nb.error().withContext("device " + std::to_string(d) + ": slot '" + plan_.slots[s].name + "'");
      b = std::move(*nb);
    }
    return Binding{b.get(), 0, bytes};
  }

  // Device to device where the backend has a direct path (Device::copyFromDevice),
  // else staged through host memory.
  Error copy(uint32_t from, const Binding &src, uint32_t to, const Binding &dst, uint64_t bytes) {
    Error direct = devices_[to]->copyFromDevice(*devices_[from], *src.buffer, src.offset, *dst.buffer, dst.offset, bytes);
    if (!direct || direct.code() != ErrorCode::Unsupported) return direct;
    staging_.resize(bytes);
    CGRAPH_RETURN_IF_ERROR(devices_[from]->read(*src.buffer, src.offset, staging_.data(), bytes));
    return devices_[to]->write(*dst.buffer, dst.offset, staging_.data(), bytes);
  }

  // Segments are enqueued without waiting for one another: a segment waits (waitFor)
  // for the earlier segments on its device that used its slots, and a copy waits for
  // the segments that used the slot on either side. Segments on different devices with
  // no slot between them overlap.
  Error run(const std::vector<ResolvedSlot> &slots, const std::vector<uint64_t> &params, const SubmitOptions &opts) {
    const Graph &g = plan_;
    const uint32_t nSlots = uint32_t(g.slots.size());
    // Per slot: the bytes that move (the bound length) and which devices hold the
    // latest contents (bit d); every slot starts current on the home device only.
    std::vector<uint64_t> length(nSlots, 0), holders(nSlots, 1);
    for (uint32_t s = 0; s < nSlots; ++s) length[s] = home(slots, s).length;
    // The last segment's event that used slot s on device d (index d * nSlots + s).
    std::vector<EventPtr> lastUse(devices_.size() * nSlots);
    std::vector<std::pair<EventPtr, std::string>> inFlight;
    auto settle = [&](const EventPtr &e) -> Error {
      if (!e) return Error::success();
      for (auto &[ev, where] : inFlight)
        if (ev == e) return e->wait().withContext(where);
      return e->wait();
    };
    // The first failure of a segment already enqueued wins over what stopped the loop.
    auto finish = [&](Error e) -> Error {
      for (auto &[ev, where] : inFlight)
        if (Error w = ev->wait(); w && !e) e = std::move(w).withContext(where);
      return e;
    };
    ParamValues pv;
    pv.bits.assign(params.begin(), params.begin() + g.params.size());
    auto view = [&](uint32_t d, uint32_t s) -> Expected<Binding> {
      if (d == 0) return home(slots, s);
      return mirror(d, s, length[s]);
    };
    // Makes slot s current on device `to` (a copy from a holder) and returns its view.
    auto bring = [&](uint32_t to, uint32_t s) -> Expected<Binding> {
      auto dst = view(to, s);
      if (!dst || (holders[s] & (1ull << to))) return dst;
      uint32_t from = 0;
      while (!(holders[s] & (1ull << from))) ++from;
      auto src = view(from, s);
      if (!src) return src.error();
      CGRAPH_RETURN_IF_ERROR(settle(lastUse[size_t(from) * nSlots + s]));
      CGRAPH_RETURN_IF_ERROR(settle(lastUse[size_t(to) * nSlots + s]));
      CGRAPH_RETURN_IF_ERROR(copy(from, *src, to, *dst, length[s]).withContext("moving slot '" + g.slots[s].name + "'"));
      holders[s] |= 1ull << to;
      return dst;
    };
    for (Segment &seg : segments_) {
      const std::string where = "device " + std::to_string(seg.device) + ", segment from " + nodeLabel(g, seg.nodes[0]);
      BindingTable t;
      t.overrideInternal = true;
      SubmitOptions so;
      for (const Segment::Use &u : seg.slots) {
        auto dst = bring(seg.device, u.slot);
        if (!dst) return finish(dst.error().withContext(where));
        t.slots.push_back(*dst); // stage slot i = seg.slots[i]
        const EventPtr &before = lastUse[size_t(seg.device) * nSlots + u.slot];
        if (before && std::find(so.waitFor.begin(), so.waitFor.end(), before) == so.waitFor.end())
          so.waitFor.push_back(before);
      }
      if (opts.afterNode) so.afterNode = [&](uint32_t n) { return opts.afterNode(seg.nodes[n]); };
      auto ev = seg.exe->enqueue(t, pv, so);
      if (!ev) return finish(ev.error().withContext(where));
      inFlight.emplace_back(*ev, where);
      for (const Segment::Use &u : seg.slots) {
        lastUse[size_t(seg.device) * nSlots + u.slot] = *ev;
        if (u.writes) holders[u.slot] = 1ull << seg.device;
      }
    }
    // Results back where the caller looks.
    for (uint32_t s = 0; s < nSlots; ++s) {
      if (holders[s] & 1) continue;
      auto back = bring(0, s);
      if (!back) return finish(back.error().withContext("back to device 0"));
    }
    return finish(Error::success());
  }

  std::vector<Device *> devices_;
  Graph plan_;
  std::vector<std::unique_ptr<Buffer>> owned_;                // on the home device
  std::vector<std::vector<std::unique_ptr<Buffer>>> mirrors_; // [device][slot], device > 0
  std::vector<Segment> segments_;
  std::vector<uint8_t> staging_;
};

bool placed(const Graph &g, int depth) {
  if (depth > 64) return false;
  for (const Node &n : g.nodes) {
    if (n.device != 0) return true;
    if (n.kind == NodeKind::Subgraph && n.subgraph < g.subgraphs.size() && placed(g.subgraphs[n.subgraph], depth + 1))
      return true;
  }
  return false;
}

} // namespace

bool hasPlacement(const Graph &graph) { return placed(graph, 0); }

Expected<std::unique_ptr<Executable>> finalizeMultiDevice(const std::vector<Device *> &devices, const Graph &graph,
                                                          const FinalizeOptions &opts) {
  if (devices.empty()) return makeError("finalizeMultiDevice: no devices");
  if (devices.size() > kMaxDevices)
    return makeError("finalizeMultiDevice: " + std::to_string(devices.size()) + " devices (at most " +
                     std::to_string(kMaxDevices) + ")");
  for (Device *d : devices)
    if (!d) return makeError("finalizeMultiDevice: a null device");
  if (devices.size() == 1) return devices[0]->finalize(graph, opts);
  CGRAPH_RETURN_IF_ERROR(firstError(validateGraph(graph, ValidateOptions{false, true, true})));
  auto flat = flattenSubgraphs(graph);
  if (!flat) return flat.error();
  auto exe = std::make_unique<MultiDeviceExecutable>(devices, std::move(*flat), opts.mode);
  CGRAPH_RETURN_IF_ERROR(exe->build(opts));
  return std::unique_ptr<Executable>(std::move(exe));
}

} // namespace cgraph::rt
