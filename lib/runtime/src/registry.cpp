// The registry of backends and the device specs it opens ("cuda:1").
#include "cgraph/runtime/runtime.h"

#include <cstdlib>
#include <string>

namespace cgraph::rt {

void Registry::add(std::unique_ptr<Backend> backend) {
  if (backend) backends_.push_back(std::move(backend));
}

Backend *Registry::find(const std::string &name) const {
  for (const auto &b : backends_)
    if (name == b->name()) return b.get();
  return nullptr;
}

Expected<Device *> Registry::open(const std::string &spec) const {
  std::string name = spec;
  uint32_t index = 0;
  size_t colon = spec.find(':');
  if (colon != std::string::npos) {
    name = spec.substr(0, colon);
    std::string idx = spec.substr(colon + 1);
    char *end = nullptr;
    unsigned long v = idx.empty() ? 0 : std::strtoul(idx.c_str(), &end, 10);
    if (idx.empty() || *end != '\0' || idx[0] == '-' || v > 0xFFFFFFFEul)
      return makeError("device '" + spec + "': '" + idx + "' is not a device index");
    index = uint32_t(v);
  }
  Backend *b = find(name);
  if (!b) {
    std::string known;
    for (const auto &k : backends_)
      known += std::string(known.empty() ? "" : ", ") + k->name();
    return makeError("device '" + spec + "': no backend '" + name +
                     "' (compiled in: " + (known.empty() ? std::string("none") : known) + ")");
  }
  Expected<Device *> d = b->device(index);
  if (!d) return d.error().withContext("device '" + spec + "'");
  return d;
}

} // namespace cgraph::rt
