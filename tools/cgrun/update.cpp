// --set NODE.FIELD=VALUE, --disable NODE and --update-from FILE: updates of a finalized
// executable from the command line (rt::Executable::update does the checking).
#include "common.h"

#include "cgraph/graph/flatten.h"
#include "cgraph/runtime/scalar_text.h"

#include <map>

namespace cgraph::cgrun {

namespace {

Expected<uint64_t> parseSize(const std::string &text, const std::string &what) {
  if (text.empty()) return makeError(what + ": empty value");
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return makeError(what + ": '" + text + "' is not a non-negative integer");
    if (v > (~uint64_t(0) - 9) / 10) return makeError(what + ": '" + text + "' is too large");
    v = v * 10 + uint64_t(c - '0');
  }
  return v;
}

Expected<std::vector<uint64_t>> parseSizes(const std::string &text, const std::string &what) {
  std::vector<uint64_t> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    auto v = parseSize(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start), what);
    if (!v) return v.error();
    out.push_back(*v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.size() > 3) return makeError(what + ": at most 3 dimensions");
  return out;
}

Expected<Arg> parseArg(const Graph &g, const Arg &old, const std::string &text, const std::string &what) {
  Arg a = old;
  switch (old.kind) {
  case ArgKind::Scalar:
    if (Error e = rt::parseScalarText(text, old.type, &a.value)) return e.withContext(what);
    return a;
  case ArgKind::Slot: {
    const size_t plus = text.find('+');
    const std::string name = text.substr(0, plus);
    a.value = 0;
    if (plus != std::string::npos) {
      auto off = parseSize(text.substr(plus + 1), what);
      if (!off) return off.error();
      a.value = *off;
    }
    for (uint32_t s = 0; s < g.slots.size(); ++s)
      if (g.slots[s].name == name) {
        a.index = s;
        return a;
      }
    return makeError(what + ": no slot named '" + name + "'");
  }
  case ArgKind::Param:
    for (uint32_t p = 0; p < g.params.size(); ++p)
      if (g.params[p].name == text) {
        a.index = p;
        return a;
      }
    return makeError(what + ": no parameter named '" + text + "'");
  case ArgKind::LocalMem: {
    auto v = parseSize(text, what);
    if (!v) return v.error();
    a.value = *v;
    return a;
  }
  case ArgKind::String: break;
  }
  return makeError(what + ": this argument cannot be updated");
}

bool sameArg(const Arg &x, const Arg &y) {
  return x.kind == y.kind && x.type == y.type && x.index == y.index && x.value == y.value && x.text == y.text;
}

// rt::Executable::update(Graph) updates kernel nodes only; a host task that differs in
// the source graph would be silently kept as it was. Refused here instead, naming the node.
Error checkHostTasksUnchanged(const Graph &mine, const Graph &source) {
  auto flat = flattenSubgraphs(source);
  if (!flat || flat->nodes.size() != mine.nodes.size()) return Error::success(); // update reports it
  for (size_t n = 0; n < mine.nodes.size(); ++n) {
    const Node &a = mine.nodes[n], &b = flat->nodes[n];
    if (a.kind != NodeKind::Host || b.kind != NodeKind::Host) continue;
    const std::string what = "node '" + a.name + "': the host task differs in the source graph (";
    const std::string why = "); host tasks cannot be updated";
    auto task = [](const HostOp &h) { return "'" + (h.library.empty() ? h.op : h.library + ":" + h.op) + "'"; };
    if (a.host.op != b.host.op || a.host.library != b.host.library)
      return makeError(what + task(b.host) + " instead of " + task(a.host) + why);
    if (a.args.size() != b.args.size())
      return makeError(what + std::to_string(b.args.size()) + " arguments instead of " + std::to_string(a.args.size()) + why);
    for (size_t i = 0; i < a.args.size(); ++i) {
      // A stored expression's argument (a Param past the graph's) follows the parameters.
      if (a.args[i].kind == ArgKind::Param && a.args[i].index >= mine.params.size()) continue;
      if (!sameArg(a.args[i], b.args[i])) return makeError(what + "arg " + std::to_string(i) + why);
    }
  }
  return Error::success();
}

} // namespace

bool hasUpdates(const CommonOptions &o) {
  return !o.sets.empty() || !o.disables.empty() || !o.updateFrom.empty();
}

Error applyUpdates(rt::Executable &exe, const CommonOptions &o) {
  if (!o.updateFrom.empty()) {
    Expected<Graph> other = loadGraph(o.updateFrom);
    if (!other) return other.error().withContext("--update-from");
    CGRAPH_RETURN_IF_ERROR(checkHostTasksUnchanged(exe.graph(), *other).withContext("--update-from " + o.updateFrom));
    CGRAPH_RETURN_IF_ERROR(exe.update(*other).withContext("--update-from " + o.updateFrom));
  }
  const Graph &g = exe.graph();
  std::map<uint32_t, rt::NodeUpdate> updates; // node order: deterministic
  auto nodeNamed = [&](const std::string &name, const std::string &what) -> Expected<uint32_t> {
    const uint32_t n = exe.findNode(name);
    if (n == kNone) return makeError(what + ": no node named '" + name + "'");
    return n;
  };
  auto entry = [&](uint32_t n) -> rt::NodeUpdate & {
    rt::NodeUpdate &u = updates[n];
    u.node = n;
    return u;
  };
  for (const std::string &d : o.disables) {
    auto n = nodeNamed(d, "--disable " + d);
    if (!n) return n.error();
    entry(*n).enabled = 0;
  }
  for (const std::string &s : o.sets) {
    const std::string what = "--set " + s;
    const size_t eq = s.find('=');
    const size_t dot = eq == std::string::npos ? std::string::npos : s.rfind('.', eq);
    if (eq == std::string::npos || dot == std::string::npos || dot == 0)
      return makeError(what + ": expected NODE.FIELD=VALUE (FIELD: argN, global, local, offset, kernel, enabled)");
    auto n = nodeNamed(s.substr(0, dot), what);
    if (!n) return n.error();
    const std::string field = s.substr(dot + 1, eq - dot - 1), value = s.substr(eq + 1);
    rt::NodeUpdate &u = entry(*n);
    const Node &node = g.nodes[*n];
    if (field == "kernel") {
      const uint32_t k = g.findKernel(value);
      if (k == kNone) return makeError(what + ": no kernel named '" + value + "'");
      u.kernel = k;
    } else if (field == "enabled") {
      if (value != "0" && value != "1" && value != "true" && value != "false")
        return makeError(what + ": enabled is 0 or 1");
      u.enabled = value == "1" || value == "true";
    } else if (field.rfind("arg", 0) == 0) {
      auto idx = parseSize(field.substr(3), what);
      if (!idx) return idx.error();
      if (*idx >= node.args.size())
        return makeError(what + ": node '" + node.name + "' has " + std::to_string(node.args.size()) +
                         " arguments");
      auto a = parseArg(g, node.args[*idx], value, what);
      if (!a) return a.error();
      u.args.emplace_back(uint32_t(*idx), *a);
    } else if (field == "global" || field == "local" || field == "offset") {
      if (node.kind != NodeKind::Kernel) return makeError(what + ": not a kernel node");
      auto v = parseSizes(value, what);
      if (!v) return v.error();
      if (!u.setRange) {
        u.setRange = true;
        u.range = node.range;
      }
      NDRange &r = u.range;
      if (field == "global") {
        r.dims = uint32_t(v->size());
        for (uint32_t d = 0; d < 3; ++d) r.global[d] = Dim{d < v->size() ? (*v)[d] : 1, kNone};
      } else {
        // Dimensions not given: local 1 (0 when the local size is left to the
        // runtime, `local=0`), offset 0.
        const bool local = field == "local";
        const uint64_t rest = local && (*v)[0] != 0 ? 1 : 0;
        Dim *dims = local ? r.local : r.offset;
        for (uint32_t d = 0; d < 3; ++d) dims[d] = Dim{d < v->size() ? (*v)[d] : rest, kNone};
      }
    } else {
      return makeError(what + ": unknown field '" + field + "' (argN, global, local, offset, kernel, enabled)");
    }
  }
  for (auto &[n, u] : updates)
    CGRAPH_RETURN_IF_ERROR(exe.update(u).withContext("update"));
  return Error::success();
}

} // namespace cgraph::cgrun
