// Nodes of a graph description: the seven node kinds, their arguments and ranges,
// repeat blocks (with slot rotation) and "after" edges.
#include "reader.h"
#include "values.h"

#include "cgraph/graph/hazards.h"

#include <algorithm>

namespace cgraph::desc {

namespace {

const char *const kKindKeys[] = {"kernel",     "copy",       "copy_rect",      "fill",      "host",
                                 "barrier",    "subgraph",   "if",             "while",     "all_reduce",
                                 "all_gather", "reduce_scatter", "broadcast",  "send",      "recv"};

std::vector<std::string> slotNames(const Graph &g) {
  std::vector<std::string> out;
  for (const auto &s : g.slots)
    out.push_back(s.name);
  return out;
}

} // namespace

// ---- names, slots, repeat frames ---------------------------------------------------------

std::string DescriptionReader::instanceName(GraphCtx &c, const std::string &templateName,
                                            size_t frameLevel) {
  std::string name = templateName;
  for (size_t k = 0; k < frameLevel && k < c.frames.size(); ++k)
    name += "." + std::to_string(c.frames[k].iter);
  return name;
}

uint32_t DescriptionReader::resolveSlot(GraphCtx &c, const JValue &nameValue) {
  std::string name = toStr(c.file, nameValue, "a slot name");
  // Innermost repeat block first: its rotation applies to the names written in the
  // template, the enclosing blocks' rotations to the result.
  for (size_t k = c.frames.size(); k-- > 0;) {
    const Frame &fr = c.frames[k];
    for (const auto &group : fr.rotations) {
      auto it = std::find(group.begin(), group.end(), name);
      if (it == group.end()) continue;
      size_t idx = size_t(it - group.begin());
      name = group[(idx + fr.iter) % group.size()];
      break;
    }
  }
  auto it = c.slotByName.find(name);
  if (it == c.slotByName.end())
    failAt(c.file, nameValue, "unknown slot '" + name + "'" + suggest(name, slotNames(c.g())));
  return it->second;
}

std::pair<uint32_t, uint64_t> DescriptionReader::readSlotRef(GraphCtx &c, const JValue &v,
                                                             const std::string &context) {
  if (v.isString()) return {resolveSlot(c, v), 0};
  if (!v.isObject() || !v.find("slot"))
    failAt(c.file, v,
           std::string("expected a slot name or {\"slot\": ..., \"offset\": ...}, found ") +
               v.kindName());
  checkKeys(c.file, v, {"slot", "offset"}, "slot reference");
  uint64_t off = 0;
  if (const JValue *o = v.find("offset")) off = readUInt(c, *o, "'offset'", false, context);
  return {resolveSlot(c, *v.find("slot")), off};
}

std::pair<uint32_t, uint64_t> DescriptionReader::readTransferRef(GraphCtx &c, const JValue &v,
                                                                 const std::string &context,
                                                                 ExprField field) {
  if (!v.isObject() || !v.find("slot") || !v.find("offset")) return readSlotRef(c, v, context);
  checkKeys(c.file, v, {"slot", "offset"}, "slot reference");
  const uint64_t off = readTransferUInt(c, *v.find("offset"), "'offset'", context, field);
  return {resolveSlot(c, *v.find("slot")), off};
}

// ---- arguments and ranges ----------------------------------------------------------------

Arg DescriptionReader::readArg(GraphCtx &c, const JValue &v, const KernelParam *param, bool host,
                               size_t index) {
  const std::string &f = c.file;
  ScalarType sigType = ScalarType::I32;
  bool haveSigType =
      param && param->kind == ParamKind::Scalar && scalarTypeForOpenCL(param->typeName, &sigType);
  auto scalarFrom = [&](const JValue &num, ScalarType t) {
    uint64_t bits = 0;
    std::string err = encodeScalar(t, num, &bits);
    if (!err.empty()) failAt(f, num, err);
    return Arg::scalar(t, bits);
  };
  // An integer expression, folded to a constant and encoded as type `t`.
  auto exprScalar = [&](const JValue &sv, ScalarType t) {
    // "arg 2 ('k')", as validateGraph names arguments
    const std::string label = "arg " + std::to_string(index) +
                              (param && !param->name.empty() ? " ('" + param->name + "')" : "");
    JValue num;
    num.kind = JValue::Kind::Number;
    num.pos = sv.pos;
    std::vector<uint8_t> code;
    std::optional<int64_t> atDefaults;
    const bool isInt = t != ScalarType::F16 && t != ScalarType::F32 && t != ScalarType::F64;
    std::optional<int64_t> folded =
        foldOrStore(c, sv, label, !isInt ? nullptr : &code, &atDefaults);
    if (!folded) {
      // Stored (.cgf 2.0; 2.2 for a host task): the argument keeps its value at the parameters'
      // defaults when that fits its type, else 0; the runtime evaluates it per submission.
      FieldExpr fe;
      fe.field = ExprField::ScalarArg;
      fe.arg = uint32_t(index);
      fe.code = std::move(code);
      c.pendingExprs.push_back(std::move(fe));
      num.text = std::to_string(atDefaults ? *atDefaults : 0);
      uint64_t bits = 0;
      if (!encodeScalar(t, num, &bits).empty()) bits = 0;
      return Arg::scalar(t, bits);
    }
    num.text = std::to_string(*folded);
    uint64_t bits = 0;
    std::string err = encodeScalar(t, num, &bits);
    if (!err.empty()) failAt(f, sv, label + " is " + num.text + " ('" + sv.text + "'): " + err);
    return Arg::scalar(t, bits);
  };
  if (v.isString()) {
    // "$name" alone keeps its meaning (a parameter or repeat variable, or an unknown
    // parameter error); anything else starting with '$', and strings that look like an
    // expression and name no slot, are expressions.
    const bool plainRef = isPlainRef(c, v);
    if (!plainRef && ((!v.text.empty() && v.text[0] == '$') ||
                      (c.slotByName.count(v.text) == 0 && isExpressionText(v.text, true))))
      return exprScalar(v, haveSigType ? sigType : ScalarType::I32);
    if (plainRef) {
      std::string name = v.text.substr(1);
      for (size_t k = c.frames.size(); k-- > 0;)
        if (c.frames[k].var == name) {
          JValue num;
          num.kind = JValue::Kind::Number;
          num.pos = v.pos;
          num.text = std::to_string(c.frames[k].iter);
          return scalarFrom(num, haveSigType ? sigType : ScalarType::I32);
        }
      uint32_t p = c.g().findParam(name);
      if (p == kNone) {
        std::vector<std::string> names;
        for (const auto &pp : c.g().params)
          names.push_back(pp.name);
        failAt(f, v, "unknown parameter '" + v.text + "'" + suggest(name, names));
      }
      return Arg::param(p);
    }
    return Arg::slot(resolveSlot(c, v), 0);
  }
  if (v.isNumber()) {
    ScalarType t = haveSigType ? sigType : (v.isIntegerText() ? ScalarType::I32 : ScalarType::F32);
    return scalarFrom(v, t);
  }
  if (v.isObject()) {
    if (v.find("slot")) {
      auto ref = readSlotRef(c, v);
      return Arg::slot(ref.first, ref.second);
    }
    if (const JValue *l = v.find("local")) {
      checkKeys(f, v, {"local"}, "local memory argument");
      if (host) failAt(f, v, "host tasks take no local memory arguments");
      return Arg::localMem(readUInt(c, *l, "'local'", true, " of arg " + std::to_string(index)));
    }
    if (const JValue *s = v.find("string")) {
      checkKeys(f, v, {"string"}, "string argument");
      if (!host) failAt(f, v, "string arguments are for host tasks only");
      return Arg::string(toStr(f, *s, "'string'"));
    }
    ScalarType t;
    if (v.keys.size() == 1 && parseScalarType(v.keys[0].first, &t)) {
      const JValue &x = v.items[0];
      bool floatWord = x.isString() && (x.text == "inf" || x.text == "-inf" || x.text == "nan");
      if (x.isString() && !floatWord) return exprScalar(x, t); // {"u32": "$k + 1"}
      return scalarFrom(x, t);
    }
    failAt(f, v,
           "unknown argument object (expected {\"slot\": ...}, {\"local\": bytes}, " +
               std::string(host ? "{\"string\": ...}, " : "") +
               "or a typed number such as {\"f32\": 1.5})");
  }
  failAt(f, v,
         std::string(
             "invalid argument: expected a slot name, \"$param\", a number or an object, found ") +
             v.kindName());
}

void DescriptionReader::readRange(GraphCtx &c, const JValue &v, Dim out[3], uint32_t *dims,
                                  bool allowZero, const char *field, const std::string &nodeName) {
  const std::string &f = c.file;
  std::vector<const JValue *> elems;
  if (v.isArray())
    for (const auto &e : v.items)
      elems.push_back(&e);
  else
    elems.push_back(&v);
  if (elems.empty() || elems.size() > 3)
    failAt(f, v, "a range has 1 to 3 dimensions, found " + std::to_string(elems.size()));
  *dims = uint32_t(elems.size());
  for (size_t d = 0; d < elems.size(); ++d) {
    const JValue &e = *elems[d];
    Dim dim;
    const bool plainRef = isPlainRef(c, e);
    if (!plainRef && e.isString() && isExpressionText(e.text, false)) {
      // Folded to a constant: global dimensions >= 1, local sizes and offsets >= 0.
      const std::string what =
          std::string(field) + "[" + std::to_string(d) + "] of node '" + nodeName + "'";
      std::vector<uint8_t> code;
      std::optional<int64_t> atDefaults;
      std::optional<int64_t> folded = foldOrStore(c, e, what, &code, &atDefaults);
      if (!folded) {
        // Stored (.cgf 2.0): evaluated per submission. The field keeps its value at the
        // parameters' defaults when that is valid, else the smallest valid value.
        const int64_t lo = allowZero && field[0] == 'o' ? 0 : 1;
        dim.value = uint64_t(atDefaults && *atDefaults >= lo ? *atDefaults : lo);
        FieldExpr fe;
        const uint16_t base = field[0] == 'g' ? 0 : field[0] == 'l' ? 3 : 6;
        fe.field = static_cast<ExprField>(base + d);
        fe.code = std::move(code);
        c.pendingExprs.push_back(std::move(fe));
        out[d] = dim;
        continue;
      }
      int64_t value = *folded;
      if (value < 1 && !allowZero)
        failAt(f, e,
               what + " is " + std::to_string(value) + " ('" + e.text + "'); it must be positive");
      if (value < 0)
        failAt(f, e,
               what + " is " + std::to_string(value) + " ('" + e.text +
                   "'); it must not be negative");
      dim.value = uint64_t(value);
    } else if (plainRef) {
      std::string name = e.text.substr(1);
      bool found = false;
      for (size_t k = c.frames.size(); k-- > 0 && !found;)
        if (c.frames[k].var == name) {
          dim.value = c.frames[k].iter;
          found = true;
        }
      if (!found) {
        uint32_t p = c.g().findParam(name);
        if (p == kNone) failAt(f, e, "unknown parameter '" + e.text + "'");
        ScalarType t = c.g().params[p].type;
        if (t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64)
          failAt(f, e,
                 "parameter '" + name + "' is " + scalarName(t) +
                     "; range dimensions need an integer parameter");
        dim.param = p;
      }
    } else {
      dim.value = toU64(f, e, "a range dimension");
      if (!allowZero && dim.value == 0) failAt(f, e, "a global range dimension must be at least 1");
    }
    out[d] = dim;
  }
}

// ---- node kinds ---------------------------------------------------------------------------

void DescriptionReader::readKernelNode(GraphCtx &c, const JValue &n, Node &node) {
  const std::string &f = c.file;
  node.kind = NodeKind::Kernel;
  const JValue &kv = n.find("kernel") ? *n.find("kernel") : n;
  std::string kname = toStr(f, kv, "'kernel'");
  node.kernel = c.g().findKernel(kname);
  if (node.kernel == kNone) {
    std::vector<std::string> names;
    for (const auto &k : c.g().kernels)
      names.push_back(k.name);
    failAt(f, kv,
           "unknown kernel '" + kname + "'" + suggest(kname, names) +
               (names.empty() ? " (the description lists no kernel files)" : ""));
  }
  // "alternatives": kernels an update may switch this node to (issue 10), each with the
  // node kernel's signature; the node's own kernel is first unless listed.
  if (const JValue *alts = n.find("alternatives")) {
    if (!alts->isArray() || alts->items.empty())
      failAt(f, *alts, "'alternatives' must be a non-empty array of kernel names");
    node.alternatives.push_back(node.kernel);
    for (const JValue &a : alts->items) {
      const std::string an = toStr(f, a, "an alternative");
      const uint32_t k = c.g().findKernel(an);
      if (k == kNone) {
        std::vector<std::string> names;
        for (const auto &kk : c.g().kernels)
          names.push_back(kk.name);
        failAt(f, a, "unknown kernel '" + an + "'" + suggest(an, names));
      }
      if (k == node.kernel) continue;
      for (uint32_t seen : node.alternatives)
        if (seen == k) failAt(f, a, "kernel '" + an + "' is listed twice");
      const std::string why = signatureDifference(c.g().kernels[node.kernel], c.g().kernels[k]);
      if (!why.empty()) failAt(f, a, "alternative '" + an + "' cannot replace '" + kname + "': " + why);
      node.alternatives.push_back(k);
    }
    if (node.alternatives.size() == 1) node.alternatives.clear();
  }
  NDRange r;
  for (int d = 0; d < 3; ++d)
    r.global[d].value = 1;
  const JValue &g = require(f, n, "global", "kernel node '" + node.name + "'");
  readRange(c, g, r.global, &r.dims, false, "global", node.name);
  uint32_t dims = 0;
  if (const JValue *l = n.find("local")) {
    readRange(c, *l, r.local, &dims, true, "local", node.name);
    if (dims != r.dims)
      failAt(f, *l,
             "'local' has " + std::to_string(dims) + " dimensions but 'global' has " +
                 std::to_string(r.dims));
  }
  if (const JValue *o = n.find("offset")) {
    readRange(c, *o, r.offset, &dims, true, "offset", node.name);
    if (dims != r.dims)
      failAt(f, *o,
             "'offset' has " + std::to_string(dims) + " dimensions but 'global' has " +
                 std::to_string(r.dims));
  }
  node.range = r;
  if (const JValue *args = n.find("args")) {
    expectKind(f, *args, JValue::Kind::Array, "'args'");
    const Kernel &k = c.g().kernels[node.kernel];
    for (size_t i = 0; i < args->items.size(); ++i)
      node.args.push_back(
          readArg(c, args->items[i], i < k.params.size() ? &k.params[i] : nullptr, false, i));
  }
}

void DescriptionReader::readCopyNode(GraphCtx &c, const JValue &spec, Node &node, bool rect) {
  const std::string &f = c.file;
  const std::string what =
      std::string(rect ? "copy_rect" : "copy") + " of node '" + node.name + "'";
  node.kind = rect ? NodeKind::CopyRect : NodeKind::Copy;
  expectKind(f, spec, JValue::Kind::Object, "'" + std::string(rect ? "copy_rect" : "copy") + "'");
  if (rect)
    checkKeys(f, spec, {"src", "dst", "region", "src_pitch", "dst_pitch"}, "copy_rect");
  else
    checkKeys(f, spec, {"src", "dst", "bytes"}, "copy");
  const std::string ofNode = " of node '" + node.name + "'";
  // Offsets and size of a plain copy may be expressions over parameters (.cgf 2.2).
  auto src =
      rect ? readSlotRef(c, require(f, spec, "src", what), ofNode)
           : readTransferRef(c, require(f, spec, "src", what), ofNode, ExprField::CopySrcOffset);
  auto dst =
      rect ? readSlotRef(c, require(f, spec, "dst", what), ofNode)
           : readTransferRef(c, require(f, spec, "dst", what), ofNode, ExprField::CopyDstOffset);
  CopyOp &op = node.copy;
  op.srcSlot = src.first;
  op.srcOffset = src.second;
  op.dstSlot = dst.first;
  op.dstOffset = dst.second;
  if (!rect) {
    if (const JValue *b = spec.find("bytes")) {
      op.bytes = readTransferUInt(c, *b, "'bytes'", ofNode, ExprField::CopyBytes);
    } else {
      uint64_t size = c.g().slots[op.srcSlot].size;
      if (c.slotSizeIsExpr(op.srcSlot) || !c.pendingExprs.empty())
        failAt(f, spec,
               what +
                   " needs 'bytes' (the source slot's size or the offset depends on parameters)");
      if (size == 0 || op.srcOffset > size)
        failAt(f, spec, what + " needs 'bytes' (the source slot's size is unknown)");
      op.bytes = size - op.srcOffset;
    }
    return;
  }
  const JValue &region = require(f, spec, "region", what);
  expectKind(f, region, JValue::Kind::Array, "'region'");
  if (region.items.empty() || region.items.size() > 3)
    failAt(f, region, "'region' is [width in bytes, rows, slices] with 1 to 3 entries");
  for (size_t d = 0; d < region.items.size(); ++d)
    op.region[d] = readUInt(c, region.items[d], "a region entry", true, ofNode);
  auto pitches = [&](const char *key, uint64_t *row, uint64_t *slice) {
    const JValue *p = spec.find(key);
    if (!p) return;
    expectKind(f, *p, JValue::Kind::Array, std::string("'") + key + "'");
    if (p->items.empty() || p->items.size() > 2)
      failAt(f, *p,
             std::string("'") + key + "' is [row pitch] or [row pitch, slice pitch] in bytes");
    *row = readUInt(c, p->items[0], "a pitch", false, ofNode);
    if (p->items.size() > 1) *slice = readUInt(c, p->items[1], "a pitch", false, ofNode);
  };
  pitches("src_pitch", &op.srcRowPitch, &op.srcSlicePitch);
  pitches("dst_pitch", &op.dstRowPitch, &op.dstSlicePitch);
}

void DescriptionReader::readFillNode(GraphCtx &c, const JValue &spec, Node &node) {
  const std::string &f = c.file;
  const std::string what = "fill of node '" + node.name + "'";
  node.kind = NodeKind::Fill;
  expectKind(f, spec, JValue::Kind::Object, "'fill'");
  checkKeys(f, spec, {"dst", "bytes", "value", "type"}, "fill");
  const std::string ofNode = " of node '" + node.name + "'";
  auto dst = readTransferRef(c, require(f, spec, "dst", what), ofNode, ExprField::FillOffset);
  FillOp &op = node.fill;
  op.slot = dst.first;
  op.offset = dst.second;
  const JValue &val = require(f, spec, "value", what);
  ScalarType t = toType(f, require(f, spec, "type", what));
  std::vector<const JValue *> vals;
  if (val.isArray())
    for (const auto &x : val.items)
      vals.push_back(&x);
  else
    vals.push_back(&val);
  if (vals.empty()) failAt(f, val, what + ": empty pattern");
  for (const JValue *x : vals) {
    uint64_t bits;
    std::string err = encodeScalar(t, *x, &bits);
    if (!err.empty()) failAt(f, *x, err);
    appendBytes(op.pattern, t, bits);
    if (op.pattern.size() > 128) failAt(f, *x, what + ": pattern longer than 128 bytes");
  }
  if (const JValue *b = spec.find("bytes")) {
    op.bytes = readTransferUInt(c, *b, "'bytes'", ofNode, ExprField::FillBytes);
  } else {
    uint64_t size = c.g().slots[op.slot].size;
    if (c.slotSizeIsExpr(op.slot) || !c.pendingExprs.empty())
      failAt(f, spec,
             what + " needs 'bytes' (the slot's size or the offset depends on parameters)");
    if (size == 0 || op.offset > size)
      failAt(f, spec, what + " needs 'bytes' (the slot's size is unknown)");
    op.bytes = size - op.offset;
  }
}

void DescriptionReader::readHostNode(GraphCtx &c, const JValue &n, Node &node) {
  const std::string &f = c.file;
  node.kind = NodeKind::Host;
  node.host.op = toStr(f, *n.find("host"), "'host'");
  if (node.host.op.empty()) failAt(f, *n.find("host"), "empty host operation name");
  if (const JValue *lib = n.find("library")) node.host.library = toStr(f, *lib, "'library'");
  if (const JValue *args = n.find("args")) {
    expectKind(f, *args, JValue::Kind::Array, "'args'");
    for (size_t i = 0; i < args->items.size(); ++i)
      node.args.push_back(readArg(c, args->items[i], nullptr, true, i));
  }
}

void DescriptionReader::readSubgraphNode(GraphCtx &c, const JValue &n, Node &node) {
  node.kind = NodeKind::Subgraph;
  bindSubgraph(c, n, *n.find("subgraph"), node);
}

void DescriptionReader::bindSubgraph(GraphCtx &c, const JValue &n, const JValue &sv, Node &node) {
  const std::string &f = c.file;
  Graph child;
  if (sv.isString()) {
    const std::string path = joinPath(c.dir, sv.text);
    allowed_.check(f, sv, "subgraph file", path);
    child = readFile(path, Location::at(f, sv.pos), c.depth + 1);
  } else {
    expectKind(f, sv, JValue::Kind::Object, "'subgraph'");
    if (c.depth + 1 > kMaxSubgraphDepth)
      failAt(f, sv,
             "subgraphs nested deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
    child = readGraph(sv, f, c.dir, c.depth + 1);
  }
  std::map<std::string, const JValue *> bind; // child slot -> parent slot name value
  if (const JValue *b = n.find("bind")) {
    expectKind(f, *b, JValue::Kind::Object, "'bind'");
    for (size_t k = 0; k < b->keys.size(); ++k) {
      const std::string &childName = b->keys[k].first;
      if (child.findSlot(childName) == kNone)
        failAt(f, b->keys[k].second,
               "the subgraph has no slot '" + childName + "'" +
                   suggest(childName, slotNames(child)));
      bind[childName] = &b->items[k];
    }
  }
  for (const Slot &s : child.slots) {
    auto it = bind.find(s.name);
    if (it != bind.end()) {
      node.subgraphSlots.push_back(resolveSlot(c, *it->second));
      continue;
    }
    JValue same;
    same.kind = JValue::Kind::String;
    same.pos = n.pos;
    same.text = s.name;
    if (c.slotByName.count(s.name) == 0)
      failAt(f, n,
             "subgraph slot '" + s.name +
                 "' is not bound: add it to 'bind' or declare a slot of that name");
    node.subgraphSlots.push_back(resolveSlot(c, same));
  }
  for (const Param &p : child.params)
    if (c.g().findParam(p.name) == kNone)
      failAt(f, n,
             "subgraph param '" + p.name +
                 "' has no parameter of the same name in the enclosing graph");
  node.subgraph = c.builder.addSubgraphGraph(std::move(child));
}

// Only what the body's nodes use of the kernels copied from the enclosing graph (the
// body is stored as a file of its own).
void keepUsedKernels(Graph &body) {
  std::vector<uint32_t> kernelMap(body.kernels.size(), kNone), moduleMap(body.modules.size(), kNone);
  std::vector<Kernel> kernels;
  std::vector<KernelModule> modules;
  auto useKernel = [&](uint32_t &k) {
    if (k >= kernelMap.size()) return;
    if (kernelMap[k] == kNone) {
      Kernel kk = body.kernels[k];
      if (kk.module < moduleMap.size()) {
        if (moduleMap[kk.module] == kNone) {
          moduleMap[kk.module] = uint32_t(modules.size());
          modules.push_back(body.modules[kk.module]);
        }
        kk.module = moduleMap[kk.module];
      }
      kernelMap[k] = uint32_t(kernels.size());
      kernels.push_back(std::move(kk));
    }
    k = kernelMap[k];
  };
  for (Node &n : body.nodes) {
    if (n.kind != NodeKind::Kernel) continue;
    useKernel(n.kernel);
    for (uint32_t &k : n.alternatives) useKernel(k);
  }
  body.kernels = std::move(kernels);
  body.modules = std::move(modules);
}

// "if" / "while": a condition (a slot name or {"slot", "offset"}: a u32, nonzero =
// true), "max_trips" (while: required), and "body": a list of nodes in the enclosing
// graph's scope (its slots, parameters, kernels and repeat variables), or a subgraph
// (file name or inline description) with "bind" as for subgraph nodes.
void DescriptionReader::readConditionalNode(GraphCtx &c, const JValue &n, Node &node, bool isWhile) {
  const std::string &f = c.file;
  node.kind = NodeKind::Conditional;
  node.cond.kind = isWhile ? CondKind::While : CondKind::If;
  const JValue &cv = *n.find(isWhile ? "while" : "if");
  auto [slot, offset] = readSlotRef(c, cv, " of node '" + node.name + "'");
  node.cond.slot = slot;
  node.cond.offset = offset;
  if (offset % 4 != 0)
    failAt(f, cv, "the condition is a u32: its offset " + std::to_string(offset) + " is not a multiple of 4");
  if (const JValue *m = n.find("max_trips")) {
    if (!isWhile) failAt(f, *m, "'max_trips' is for while nodes (an if node runs its body at most once)");
    uint64_t trips = toU64(f, *m, "'max_trips'");
    if (trips < 1 || trips > 0xFFFFFFFFull) failAt(f, *m, "'max_trips' must be 1 to 4294967295");
    node.cond.maxTrips = uint32_t(trips);
  } else if (isWhile) {
    failAt(f, n, "a while node needs 'max_trips' (the most times its body may run; reaching it is an error)");
  }
  const JValue &body = require(f, n, "body", std::string(isWhile ? "while" : "if") + " node");
  if (!body.isArray()) {
    bindSubgraph(c, n, body, node);
    return;
  }
  if (n.find("bind")) failAt(f, *n.find("bind"), "'bind' is for a body given as a subgraph, not a node list");
  if (body.items.empty()) failAt(f, body, "empty body");
  if (c.depth + 1 > kMaxSubgraphDepth)
    failAt(f, body, "bodies nested deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
  GraphCtx bc;
  bc.file = c.file;
  bc.dir = c.dir;
  bc.depth = c.depth + 1;
  bc.map.file = c.file;
  bc.map.graphPos = body.pos;
  bc.frames = c.frames;
  bc.edgesMode = c.edgesMode;
  bc.repeatFactor = c.repeatFactor;
  bc.slotByName = c.slotByName;
  bc.paramPos = c.paramPos;
  Graph &bg = bc.g();
  bg.name = node.name;
  bg.slots = c.g().slots;
  for (uint32_t k = 0; k < bg.slots.size(); ++k) {
    Slot &s = bg.slots[k];
    s.init = SlotInit::External; // every body slot is the enclosing graph's
    s.data.clear();
    s.path.clear();
    if (c.slotSizeIsExpr(k)) s.size = 0; // its size is known per submission: unsized here
  }
  bg.params = c.g().params;
  bg.modules = c.g().modules;
  bg.kernels = c.g().kernels;
  bc.map.slots = c.map.slots;
  readNodes(bc, body);
  resolveEdges(bc);
  Graph child = bc.builder.take();
  keepUsedKernels(child);
  if (opts_.validate) validate(bc, child, false);
  for (uint32_t s = 0; s < child.slots.size(); ++s) node.subgraphSlots.push_back(s);
  node.subgraph = c.builder.addSubgraphGraph(std::move(child));
}

// ---- node list, repeat blocks, edges ---------------------------------------------------------

void DescriptionReader::readNodes(GraphCtx &c, const JValue &list) {
  expectKind(c.file, list, JValue::Kind::Array, "'nodes'");
  for (const JValue &n : list.items) {
    if (n.isObject() && n.find("repeat"))
      readRepeat(c, n);
    else
      readNode(c, n);
  }
}

void DescriptionReader::readRepeat(GraphCtx &c, const JValue &block) {
  const std::string &f = c.file;
  checkKeys(f, block, {"repeat", "var", "swap", "nodes"}, "repeat block");
  uint64_t count = toU64(f, *block.find("repeat"), "'repeat'");
  if (count == 0) {
    const JValue *var = block.find("var");
    failAt(f, *block.find("repeat"),
           repeatLabel(var && var->isString() ? var->text : "") + ": 'repeat' is 0; a repeat block runs at least once");
  }
  const JValue &nodes = require(f, block, "nodes", "repeat block");
  expectKind(f, nodes, JValue::Kind::Array, "'nodes'");
  if (nodes.items.empty()) failAt(f, nodes, "empty repeat block");
  // Reject oversized expansions before doing any work: each template yields at least
  // one node per iteration of this block and of every enclosing block.
  if (count > 0) {
    uint64_t perIteration = c.repeatFactor * uint64_t(nodes.items.size());
    if (count > kMaxNodes || perIteration > kMaxNodes || count * perIteration > kMaxNodes)
      failAt(f, *block.find("repeat"),
             "repeat block expands to more than " + std::to_string(kMaxNodes) + " nodes");
  }
  Frame fr;
  if (const JValue *v = block.find("var")) {
    fr.var = toStr(f, *v, "'var'");
    if (fr.var.empty() || fr.var[0] == '$')
      failAt(f, *v, "invalid repeat variable name '" + fr.var + "'");
  }
  if (const JValue *s = block.find("swap")) {
    expectKind(f, *s, JValue::Kind::Array, "'swap'");
    for (const JValue &group : s->items) {
      expectKind(f, group, JValue::Kind::Array, "a 'swap' group");
      if (group.items.size() < 2) failAt(f, group, "a 'swap' group names at least two slots");
      std::vector<std::string> names;
      for (const JValue &name : group.items) {
        std::string sn = toStr(f, name, "a slot name");
        if (c.slotByName.count(sn) == 0)
          failAt(f, name, "unknown slot '" + sn + "'" + suggest(sn, slotNames(c.g())));
        if (std::find(names.begin(), names.end(), sn) != names.end())
          failAt(f, name, "slot '" + sn + "' appears twice in a 'swap' group");
        names.push_back(sn);
      }
      fr.rotations.push_back(std::move(names));
    }
  }
  for (const JValue &n : nodes.items)
    if (const JValue *name = n.find("name"))
      if (name->isString()) fr.templateNames.insert(name->text);
  c.frames.push_back(fr);
  uint64_t savedFactor = c.repeatFactor;
  c.repeatFactor *= count == 0 ? 1 : count;
  for (uint64_t i = 0; i < count; ++i) {
    c.frames.back().iter = i;
    // An empty expansion still costs time; bound the iterations as well as the nodes.
    if (c.g().nodes.size() >= kMaxNodes)
      failAt(f, block, "repeat expands to more than " + std::to_string(kMaxNodes) + " nodes");
    readNodes(c, nodes);
  }
  c.repeatFactor = savedFactor;
  c.frames.pop_back();
}

void DescriptionReader::readNode(GraphCtx &c, const JValue &n) {
  const std::string &f = c.file;
  expectKind(f, n, JValue::Kind::Object, "a node");
  if (c.g().nodes.size() >= kMaxNodes)
    failAt(f, n, "the graph has more than " + std::to_string(kMaxNodes) + " nodes");
  const char *kind = nullptr;
  for (const char *k : kKindKeys) {
    if (!n.find(k)) continue;
    if (kind)
      failAt(f, n,
             std::string("a node has exactly one kind, found both '") + kind + "' and '" + k + "'");
    kind = k;
  }
  if (!kind)
    failAt(f, n,
           "a node needs one of 'kernel', 'copy', 'copy_rect', 'fill', 'host', 'barrier', "
           "'subgraph', 'if', 'while', 'all_reduce', 'all_gather', 'reduce_scatter', 'broadcast', "
           "'send', 'recv' (or 'repeat' for a block)");
  std::string k = kind;
  if (k == "kernel")
    checkKeys(f, n, {"name", "after", "device", "kernel", "global", "local", "offset", "args", "alternatives"},
              "kernel node");
  else if (k == "host")
    checkKeys(f, n, {"name", "after", "device", "host", "library", "args"}, "host node");
  else if (k == "subgraph")
    checkKeys(f, n, {"name", "after", "device", "subgraph", "bind"}, "subgraph node");
  else if (k == "if" || k == "while")
    checkKeys(f, n, {"name", "after", "device", kind, "max_trips", "body", "bind"}, k + " node");
  else
    checkKeys(f, n, {"name", "after", "device", kind}, k + " node");

  Node node;
  const JValue *nameV = n.find("name");
  uint32_t index = uint32_t(c.g().nodes.size());
  if (nameV) {
    std::string t = toStr(f, *nameV, "node 'name'");
    if (t.empty()) failAt(f, *nameV, "empty node name");
    node.name = instanceName(c, t, c.frames.size());
  } else {
    std::string base = k == "kernel" && n.find("kernel")->isString() ? n.find("kernel")->text
                       : k == "host" && n.find("host")->isString()   ? n.find("host")->text
                                                                     : k;
    node.name = base + "#" + std::to_string(index);
  }
  auto dup = c.nodeByName.find(node.name);
  if (dup != c.nodeByName.end()) {
    diags_.note(Location::at(f, c.map.nodes[dup->second]),
                "node '" + node.name + "' first defined here");
    failAt(f, nameV ? *nameV : n, "duplicate node name '" + node.name + "'");
  }

  if (k == "kernel")
    readKernelNode(c, n, node);
  else if (k == "copy")
    readCopyNode(c, *n.find("copy"), node, false);
  else if (k == "copy_rect")
    readCopyNode(c, *n.find("copy_rect"), node, true);
  else if (k == "fill")
    readFillNode(c, *n.find("fill"), node);
  else if (k == "host")
    readHostNode(c, n, node);
  else if (k == "subgraph")
    readSubgraphNode(c, n, node);
  else if (k == "if" || k == "while")
    readConditionalNode(c, n, node, k == "while");
  else if (collectiveKey(n))
    readCollectiveNode(c, *n.find(kind), kind, node);
  else {
    const JValue &b = *n.find("barrier");
    if (!b.isBool() || !b.boolean) failAt(f, b, "'barrier' must be true");
    node.kind = NodeKind::Barrier;
  }

  // "device": the logical device (0..63) the node runs on; an expression may use the
  // enclosing repeat variables ("$i % 2").
  if (const JValue *dv = n.find("device")) {
    const uint64_t d = readUInt(c, *dv, "'device'", false, " of node '" + node.name + "'");
    if (d >= kMaxDevices)
      failAt(f, *dv, "'device' must be 0 to " + std::to_string(kMaxDevices - 1) + ", found " + std::to_string(d));
    node.device = uint32_t(d);
  }
  if (const JValue *after = n.find("after")) {
    if (c.edgesMode == "infer")
      failAt(f, *after, "'after' is not allowed when the description sets \"edges\": \"infer\"");
    std::vector<const JValue *> targets;
    if (after->isArray())
      for (const auto &t : after->items)
        targets.push_back(&t);
    else
      targets.push_back(after);
    for (const JValue *t : targets) {
      std::string name = toStr(f, *t, "an 'after' entry");
      // A name of the enclosing repeat block's template means this iteration's copy.
      size_t level = 0;
      for (size_t fl = c.frames.size(); fl-- > 0;)
        if (c.frames[fl].templateNames.count(name)) {
          level = fl + 1;
          break;
        }
      c.pending.push_back(PendingEdge{index, instanceName(c, name, level), t->pos});
    }
  }
  c.nodeByName[node.name] = index;
  for (FieldExpr &fe : c.pendingExprs) {
    fe.node = index;
    c.g().exprs.push_back(std::move(fe));
  }
  c.pendingExprs.clear();
  c.map.nodes.push_back(n.pos);
  NodeOrigin origin;
  if (!c.frames.empty()) {
    origin.templateName = nameV ? nameV->text : node.name;
    for (const Frame &fr : c.frames) origin.iters.push_back(fr.iter);
    origin.repeat = repeatLabel(c.frames.back().var);
  }
  c.map.origins.push_back(std::move(origin));
  c.builder.addNode(std::move(node));
}

void DescriptionReader::resolveEdges(GraphCtx &c) {
  Graph &g = c.g();
  // Barriers order their neighbours in every mode (docs/graph-json.md); hazard inference
  // includes them.
  for (const Edge &e : c.edgesMode != "explicit" ? inferHazardEdges(g) : barrierEdges(g))
    c.builder.addEdge(e.from, e.to);
  for (const PendingEdge &p : c.pending) {
    auto it = c.nodeByName.find(p.fromName);
    if (it == c.nodeByName.end()) {
      std::vector<std::string> names;
      for (const auto &kv : c.nodeByName)
        names.push_back(kv.first);
      failAt(c.file, p.pos,
             "node '" + g.nodes[p.to].name + "' comes after unknown node '" + p.fromName + "'" +
                 suggest(p.fromName, names));
    }
    if (it->second == p.to)
      failAt(c.file, p.pos, "node '" + g.nodes[p.to].name + "' cannot come after itself");
    c.builder.addEdge(it->second, p.to);
  }
}

} // namespace cgraph::desc
