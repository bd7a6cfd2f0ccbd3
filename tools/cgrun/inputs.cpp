// Slot inputs from the command line: --input, --random, --zeros, --fill.
#include "common.h"

#include "cgraph/runtime/npy.h"
#include "cgraph/runtime/scalar_text.h"
#include "cgraph/runtime/slot_init.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace cgraph::cgrun {

namespace {

// splitmix64: tiny, seedable, and the same sequence on every platform.
uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void fillRandom(std::vector<uint8_t> &out, ScalarType t, uint64_t seed) {
  uint64_t state = seed;
  const uint32_t item = scalarSize(t);
  const size_t n = out.size() / item;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = nextRandom(state);
    uint8_t *p = out.data() + i * item;
    // Floats uniform in [0, 1) (safe for sqrt/log-style kernels); integers in [0, 256).
    if (t == ScalarType::F32) {
      const float f = float(r >> 40) / float(1 << 24);
      std::memcpy(p, &f, 4);
    } else if (t == ScalarType::F64) {
      const double d = double(r >> 11) / double(uint64_t(1) << 53);
      std::memcpy(p, &d, 8);
    } else if (t == ScalarType::F16) {
      const uint16_t h = rt::floatToHalfBits(float(r >> 53) / 2048.0f);
      std::memcpy(p, &h, 2);
    } else {
      const uint64_t v = r & 0xFF;
      std::memcpy(p, &v, item);
    }
  }
  for (size_t i = n * item; i < out.size(); ++i) out[i] = uint8_t(nextRandom(state));
}

// "slot=rest" -> (slot, rest)
Error splitAssign(const std::string &arg, const std::string &option, std::string *slot,
                  std::string *rest) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    return makeError(option + " " + arg + ": expected slot=" +
                     (option == "--fill" ? "value[:type]" : "file"));
  *slot = arg.substr(0, eq);
  *rest = arg.substr(eq + 1);
  return Error::success();
}

// A .npy input's dtype must be the slot's element type (as the kernels bound to it
// declare it), unless the input says ":raw". Raw files and slots no kernel types are
// not checked.
Error checkInputType(const Graph &g, uint32_t s, const InputSpec &spec, const rt::NpyArray &header) {
  if (spec.raw || !rt::isNpyPath(spec.path)) return Error::success();
  std::vector<ScalarType> types = slotKernelTypes(g, s);
  if (types.empty() || std::find(types.begin(), types.end(), header.type) != types.end())
    return Error::success();
  std::string slotTypes;
  for (ScalarType t : types) slotTypes += std::string(slotTypes.empty() ? "" : " or ") + scalarName(t);
  const std::string arg = g.slots[s].name + "=" + spec.path;
  return makeError("--input " + arg + ": '" + spec.path + "' holds " + scalarName(header.type) + ", " +
                   slotLabel(g, s) + " is " + slotTypes + " (--input " + arg +
                   ":raw binds the file's bytes as they are)");
}

} // namespace

Expected<std::vector<InputSpec>> parseInputs(const Graph &g, const CommonOptions &o) {
  std::vector<InputSpec> specs(g.slots.size());
  auto assign = [&](uint32_t s, InputSpec spec, const std::string &option) -> Error {
    if (specs[s].kind != InputSpec::None)
      return makeError(option + ": " + slotLabel(g, s) + " already has an input");
    if (g.slots[s].init != SlotInit::External)
      return makeError(option + ": " + slotLabel(g, s) +
                       " is initialized by the graph; only external slots take inputs");
    specs[s] = std::move(spec);
    return Error::success();
  };
  for (const std::string &a : o.inputs) {
    std::string name, path;
    CGRAPH_RETURN_IF_ERROR(splitAssign(a, "--input", &name, &path));
    Expected<uint32_t> s = findSlotArg(g, name, "--input " + a);
    if (!s) return s.error();
    InputSpec spec;
    spec.kind = InputSpec::File;
    spec.path = path;
    // "file:raw": the bytes as they are, whatever the dtype of a .npy file.
    const std::string rawSuffix = ":raw";
    if (path.size() > rawSuffix.size() && path.compare(path.size() - rawSuffix.size(), rawSuffix.size(), rawSuffix) == 0) {
      spec.raw = true;
      spec.path = path.substr(0, path.size() - rawSuffix.size());
    }
    CGRAPH_RETURN_IF_ERROR(assign(*s, spec, "--input " + a));
  }
  for (const std::string &a : o.randoms) {
    InputSpec spec;
    spec.kind = InputSpec::Random;
    std::string name = a;
    size_t colon = a.find(':');
    if (colon != std::string::npos) {
      name = a.substr(0, colon);
      uint64_t seed;
      Error e = rt::parseScalarText(a.substr(colon + 1), ScalarType::U64, &seed);
      if (e) return e.withContext("--random " + a + ": seed");
      spec.seed = seed;
    }
    Expected<uint32_t> s = findSlotArg(g, name, "--random " + a);
    if (!s) return s.error();
    if (colon == std::string::npos) spec.seed = *s + 1;
    CGRAPH_RETURN_IF_ERROR(assign(*s, spec, "--random " + a));
  }
  for (const std::string &a : o.zeros) {
    Expected<uint32_t> s = findSlotArg(g, a, "--zeros " + a);
    if (!s) return s.error();
    InputSpec spec;
    spec.kind = InputSpec::Zeros;
    CGRAPH_RETURN_IF_ERROR(assign(*s, spec, "--zeros " + a));
  }
  for (const std::string &a : o.fills) {
    std::string name, rest;
    CGRAPH_RETURN_IF_ERROR(splitAssign(a, "--fill", &name, &rest));
    Expected<uint32_t> s = findSlotArg(g, name, "--fill " + a);
    if (!s) return s.error();
    InputSpec spec;
    spec.kind = InputSpec::Fill;
    spec.type = slotType(g, *s);
    size_t colon = rest.rfind(':');
    if (colon != std::string::npos) {
      if (!parseScalarType(rest.substr(colon + 1), &spec.type))
        return makeError("--fill " + a + ": unknown type '" + rest.substr(colon + 1) + "'");
      spec.typeGiven = true;
      rest = rest.substr(0, colon);
    }
    uint64_t bits;
    Error e = rt::parseScalarText(rest, spec.type, &bits);
    if (e) return e.withContext("--fill " + a);
    spec.value = rest;
    CGRAPH_RETURN_IF_ERROR(assign(*s, spec, "--fill " + a));
  }
  return specs;
}

Expected<std::vector<std::vector<uint8_t>>> initialContents(const Graph &g,
                                                            const std::vector<InputSpec> &specs,
                                                            const rt::HostPolicy &policy,
                                                            const std::vector<bool> &wanted,
                                                            bool quiet) {
  std::vector<uint64_t> bytes = slotBytes(g);
  std::vector<std::vector<uint8_t>> out(g.slots.size());
  for (uint32_t s = 0; s < g.slots.size(); ++s) {
    const Slot &slot = g.slots[s];
    if (slot.init != SlotInit::External && !wanted[s]) continue;
    // A zeroed host copy of the slot: refused before allocating when the host could
    // never hold it, and an allocation failure names the slot.
    const uint64_t size = std::max<uint64_t>(bytes[s], 1);
    const uint64_t host = hostMemoryBytes();
    if (host && size > host)
      return makeError(slotLabel(g, s) + ": " + std::to_string(size) + " bytes is more than this host's memory (" +
                       std::to_string(host) + " bytes)");
    try {
      out[s].assign(size_t(size), 0);
    } catch (const std::bad_alloc &) {
      return makeError(slotLabel(g, s) + ": out of memory allocating " + std::to_string(size) + " bytes");
    }
    if (slot.init != SlotInit::External) {
      // Bound by cgrun so it can be read back; same contents the backend would give it.
      Error e = rt::initializeSlot(slot, policy, out[s].data(), std::min(bytes[s], slot.size));
      if (e) return e;
      continue;
    }
    std::vector<uint8_t> &v = out[s];
    const InputSpec &spec = specs[s];
    switch (spec.kind) {
    case InputSpec::None:
      if (!quiet) note("cgrun: note: " + slotLabel(g, s) + " has no input; using zeros");
      break;
    case InputSpec::Zeros:
      break;
    case InputSpec::Random:
      fillRandom(v, slotType(g, s), spec.seed);
      break;
    case InputSpec::Fill: {
      uint64_t bitsValue = 0;
      Error e = rt::parseScalarText(spec.value, spec.type, &bitsValue);
      if (e) return e;
      uint8_t pattern[8];
      std::memcpy(pattern, &bitsValue, 8);
      rt::fillPattern(v.data(), bytes[s], pattern, scalarSize(spec.type));
      break;
    }
    case InputSpec::File: {
      rt::NpyArray header;
      Expected<std::vector<uint8_t>> data = rt::readDataFile(spec.path, &header);
      if (!data) return data.error().withContext("--input " + slot.name);
      CGRAPH_RETURN_IF_ERROR(checkInputType(g, s, spec, header));
      if (data->size() != bytes[s])
        return makeError("--input " + slot.name + "=" + spec.path + ": file has " +
                         std::to_string(data->size()) + " bytes of data, " + slotLabel(g, s) +
                         " has " + std::to_string(bytes[s]));
      std::memcpy(v.data(), data->data(), data->size());
      break;
    }
    }
  }
  return out;
}

} // namespace cgraph::cgrun
