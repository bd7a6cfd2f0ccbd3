// Top level of a graph description: file loading, kernels, slots, params, metadata,
// edges and validation. Nodes and repeat blocks: description_nodes.cpp.
#include "reader.h"

#include "cgraph/graph/expr.h"
#include "values.h"

#include "cgraph/graph/hazards.h"
#include "cgraph/graph/order.h"
#include "cgraph/graph/validate.h"

#include <algorithm>
#include <filesystem>
#include <new>

namespace cgraph::desc {

// ---- helpers ------------------------------------------------------------------------

void failAt(const std::string &file, Pos p, const std::string &message) {
  throw DescError{Location::at(file, p), message, false};
}
void failAt(const std::string &file, const JValue &v, const std::string &message) {
  failAt(file, v.pos, message);
}

void checkKeys(const std::string &file, const JValue &obj, std::initializer_list<const char *> allowed,
               const std::string &what) {
  for (const auto &k : obj.keys) {
    if (!k.first.empty() && k.first[0] == '_') continue;
    bool ok = false;
    for (const char *a : allowed) ok = ok || k.first == a;
    if (ok) continue;
    std::vector<std::string> names(allowed.begin(), allowed.end());
    failAt(file, k.second, "unknown key '" + k.first + "' in " + what + suggest(k.first, names));
  }
}

const JValue &expectKind(const std::string &file, const JValue &v, JValue::Kind kind,
                         const std::string &what) {
  if (v.kind == kind) return v;
  JValue probe;
  probe.kind = kind;
  failAt(file, v, what + " must be " + (kind == JValue::Kind::Array || kind == JValue::Kind::Object ? "an " : "a ") +
                      probe.kindName() + ", found " + v.kindName());
}

const JValue &require(const std::string &file, const JValue &obj, const char *key, const std::string &what) {
  if (const JValue *v = obj.find(key)) return *v;
  failAt(file, obj, what + " is missing '" + key + "'");
}

uint64_t toU64(const std::string &file, const JValue &v, const std::string &what) {
  uint64_t out;
  if (v.isNumber() && v.toU64(&out)) return out;
  if (v.isNumber())
    failAt(file, v, what + " must be a non-negative integer below 2^64, found " + v.text);
  failAt(file, v, what + " must be a non-negative integer, found " + v.kindName());
}

std::string toStr(const std::string &file, const JValue &v, const std::string &what) {
  expectKind(file, v, JValue::Kind::String, what);
  return v.text;
}

ScalarType toType(const std::string &file, const JValue &v) {
  std::string s = toStr(file, v, "'type'");
  ScalarType t;
  if (!parseScalarType(s, &t))
    failAt(file, v, "unknown scalar type '" + s + "' (expected i8, i16, i32, i64, u8, u16, u32, u64, f16, f32 or f64)");
  return t;
}

namespace {
size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
} // namespace

std::string suggest(const std::string &name, const std::vector<std::string> &names) {
  if (name.size() > 64 || names.size() > 100000) return ""; // error path, but keep it fast
  size_t best = 3;
  const std::string *pick = nullptr;
  for (const auto &n : names) {
    if (n.size() > 64) continue;
    size_t d = editDistance(name, n);
    if (d < best && d < std::max<size_t>(2, n.size() / 2 + 1)) {
      best = d;
      pick = &n;
    }
  }
  return pick ? " (did you mean '" + *pick + "'?)" : "";
}

std::string repeatLabel(const std::string &var) {
  return var.empty() ? std::string("repeat block") : "repeat '" + var + "'";
}

std::string joinPath(const std::string &dir, const std::string &rel) {
  std::filesystem::path p(rel);
  if (p.is_absolute() || dir.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(dir) / p).lexically_normal().string();
}

namespace {

// `p` made absolute against the current directory, with symbolic links and ".."
// resolved (a missing tail kept lexically), without a trailing separator.
std::string resolvedPath(const std::string &p, std::error_code &ec) {
  std::filesystem::path abs = std::filesystem::absolute(std::filesystem::path(p.empty() ? "." : p), ec);
  if (ec) return "";
  std::filesystem::path r = std::filesystem::weakly_canonical(abs, ec);
  if (r.has_relative_path() && r.filename().empty()) r = r.parent_path();
  return r.string();
}

bool isInside(const std::filesystem::path &p, const std::filesystem::path &dir) {
  auto d = dir.begin(), de = dir.end();
  auto q = p.begin(), qe = p.end();
  for (; d != de; ++d, ++q)
    if (q == qe || *q != *d) return false;
  return true;
}

} // namespace

void AllowedDirs::add(const std::string &dir) {
  std::error_code ec;
  std::string r = resolvedPath(dir, ec);
  if (!ec && std::find(dirs_.begin(), dirs_.end(), r) == dirs_.end()) dirs_.push_back(r);
}

void AllowedDirs::check(const std::string &file, const JValue &at, const std::string &what,
                        const std::string &path) const {
  std::error_code ec;
  std::string r = resolvedPath(path, ec);
  if (ec) failAt(file, at, what + " '" + path + "': " + ec.message());
  std::string list;
  for (const std::string &d : dirs_) {
    if (isInside(r, d)) return;
    list += (list.empty() ? "" : ", ") + d;
  }
  failAt(file, at, what + " '" + path + "' resolves to '" + r + "', outside the allowed directories (" + list +
                       "); " + hint_);
}

// ---- files and graphs -----------------------------------------------------------------

Graph DescriptionReader::readFile(const std::string &path, const Location &from, uint32_t depth) {
  auto fail = [&](const std::string &msg) -> DescError {
    if (from.file.empty()) return DescError{Location{}, msg, false};
    return DescError{from, msg, false};
  };
  if (depth > kMaxSubgraphDepth)
    throw fail("subgraphs nested deeper than " + std::to_string(kMaxSubgraphDepth) + " levels");
  std::error_code ec;
  std::string canon = std::filesystem::weakly_canonical(path, ec).string();
  if (ec) canon = path;
  if (std::find(fileStack_.begin(), fileStack_.end(), canon) != fileStack_.end())
    throw fail("subgraph file '" + path + "' includes itself");
  std::string text, why;
  if (!readWholeFile(path, kMaxDescriptionBytes, &text, &why)) {
    DescError e = fail("cannot read '" + path + "': " + why);
    if (depth == 0) e.code = ErrorCode::Io;
    throw e;
  }
  fileStack_.push_back(canon);
  Graph g = readText(text, path, std::filesystem::path(path).parent_path().string(), depth);
  fileStack_.pop_back();
  return g;
}

Graph DescriptionReader::readText(const std::string &text, const std::string &name, const std::string &dir,
                                  uint32_t depth) {
  JValue root;
  JsonError jerr;
  if (!parseJson(text, &root, &jerr)) throw DescError{Location::at(name, jerr.pos), jerr.message, false};
  return readGraph(root, name, dir, depth);
}

Graph DescriptionReader::readGraph(const JValue &root, const std::string &file, const std::string &dir,
                                   uint32_t depth) {
  expectKind(file, root, JValue::Kind::Object, "a graph description");
  checkKeys(file, root,
            {"$schema", "version", "name", "metadata", "edges", "kernels", "slots", "params", "nodes"},
            "graph description");
  GraphCtx c;
  c.file = file;
  c.dir = dir;
  c.depth = depth;
  c.map.file = file;
  c.map.graphPos = root.pos;
  if (const JValue *v = root.find("version")) {
    uint64_t ver = toU64(file, *v, "'version'");
    if (ver != 1) failAt(file, *v, "unsupported description version " + v->text + " (this cgraph reads version 1)");
  }
  if (const JValue *v = root.find("name")) c.g().name = toStr(file, *v, "'name'");
  if (const JValue *v = root.find("edges")) {
    c.edgesMode = toStr(file, *v, "'edges'");
    if (c.edgesMode != "infer" && c.edgesMode != "explicit" && c.edgesMode != "both")
      failAt(file, *v, "'edges' must be \"infer\", \"explicit\" or \"both\", found \"" + c.edgesMode + "\"");
  }
  if (const JValue *v = root.find("metadata")) readMetadata(c, *v);
  if (const JValue *v = root.find("kernels")) readKernels(c, *v);
  // Parameters first: slot sizes may be expressions, whose names are checked against them.
  if (const JValue *v = root.find("params")) readParams(c, *v);
  if (const JValue *v = root.find("slots")) readSlots(c, *v);
  if (const JValue *v = root.find("nodes")) readNodes(c, *v);
  resolveEdges(c);
  for (FieldExpr &fe : c.slotExprs)
    c.g().exprs.push_back(std::move(fe));
  Graph g = c.builder.take();
  if (opts_.validate) validate(c, g);
  return g;
}

void DescriptionReader::readMetadata(GraphCtx &c, const JValue &obj) {
  expectKind(c.file, obj, JValue::Kind::Object, "'metadata'");
  for (size_t k = 0; k < obj.keys.size(); ++k) {
    const JValue &v = obj.items[k];
    if (!v.isString() && !v.isNumber() && !v.isBool())
      failAt(c.file, v, "metadata '" + obj.keys[k].first + "' must be a string, number or boolean");
    std::string text = v.isBool() ? (v.boolean ? "true" : "false") : v.text;
    c.g().metadata.emplace_back(obj.keys[k].first, text);
  }
}

void DescriptionReader::readKernels(GraphCtx &c, const JValue &list) {
  expectKind(c.file, list, JValue::Kind::Array, "'kernels'");
  std::map<std::string, std::string> owner; // kernel name -> file
  const uint64_t total = list.items.size();
  for (uint64_t i = 0; i < total; ++i) {
    const JValue &entry = list.items[i];
    // A file entry is named by its "file", a source entry by its "name".
    const JValue *named = entry.isObject() ? (entry.find("file") ? entry.find("file") : entry.find("name")) : nullptr;
    const JValue &at = named ? *named : entry;
    if (opts_.progress) opts_.progress(Progress{"compiling kernel files", i, total, at.isString() ? at.text : ""});
    const KernelCache::Entry &e = kernels_.load(entry, c.file, c.dir, opts_, allowed_, diags_);
    for (const auto &m : c.g().modules)
      if (m.name == e.module.name) failAt(c.file, at, "kernel file '" + m.name + "' is listed twice");
    uint32_t mod = c.builder.addModule(e.module);
    for (Kernel k : e.kernels) {
      auto it = owner.find(k.name);
      if (it != owner.end())
        failAt(c.file, at, "kernel '" + k.name + "' is defined in both '" + it->second + "' and '" +
                               e.module.name + "'");
      owner[k.name] = e.module.name;
      k.module = mod;
      c.builder.addKernel(std::move(k));
    }
  }
  if (opts_.progress && total) opts_.progress(Progress{"compiling kernel files", total, total, ""});
}

namespace {

// An 'init' object's 'fill': the pattern `fv` (one value or an array) of the 'type'
// given beside it, at most 128 bytes.
void readFillInit(const std::string &f, const JValue *init, const JValue *fv, const std::string &what,
                  Slot &slot) {
  slot.init = SlotInit::Fill;
  const JValue *t = init->find("type");
  if (!t) failAt(f, *init, what + ": a fill needs a 'type' (e.g. \"f32\")");
  ScalarType st = toType(f, *t);
  std::vector<const JValue *> vals;
  if (fv->isArray()) for (const auto &x : fv->items) vals.push_back(&x);
  else vals.push_back(fv);
  if (vals.empty()) failAt(f, *fv, what + ": empty fill pattern");
  for (const JValue *x : vals) {
    uint64_t bits;
    std::string err = encodeScalar(st, *x, &bits);
    if (!err.empty()) failAt(f, *x, what + ": " + err);
    appendBytes(slot.data, st, bits);
    if (slot.data.size() > 128) failAt(f, *x, what + ": fill pattern longer than 128 bytes");
  }
}

// An 'init' object's 'data': the values in `dv` as 'type' (u8 when none is given).
void readDataInit(const std::string &f, const JValue *init, const JValue *dv, const std::string &what,
                  Slot &slot) {
  slot.init = SlotInit::Data;
  const JValue *t = init->find("type");
  ScalarType st = t ? toType(f, *t) : ScalarType::U8;
  expectKind(f, *dv, JValue::Kind::Array, "'data'");
  for (const auto &x : dv->items) {
    uint64_t bits;
    std::string err = encodeScalar(st, x, &bits);
    if (!err.empty()) failAt(f, x, what + ": " + err);
    appendBytes(slot.data, st, bits);
  }
}

// An 'init' object's 'data_file': the file at `pv`, relative to `dir` and inside the
// allowed directories, embedded whole.
void readDataFileInit(const std::string &f, const std::string &dir, const AllowedDirs &allowed,
                      const JValue *init, const JValue *pv, const std::string &what, Slot &slot) {
  slot.init = SlotInit::Data;
  if (init->find("type")) failAt(f, *init->find("type"), what + ": 'type' does not apply to 'data_file'");
  std::string path = joinPath(dir, toStr(f, *pv, "'data_file'"));
  allowed.check(f, *pv, what + ": 'data_file'", path);
  std::string bytes, why;
  if (!readWholeFile(path, kMaxEmbeddedBytes, &bytes, &why))
    failAt(f, *pv, what + ": cannot read data file '" + path + "': " + why);
  slot.data.assign(bytes.begin(), bytes.end());
}

// Embedded data gives the slot its size, or must fit in the size given (the rest is
// zero); the slot is sized after this.
void sizeDataInit(const std::string &f, const JValue *init, const std::string &what, Slot &slot,
                  bool &sized) {
  if (!sized) {
    slot.size = slot.data.size();
  } else if (slot.data.size() > slot.size) {
    failAt(f, *init, what + ": " + std::to_string(slot.data.size()) + " bytes of data do not fit in " +
                     std::to_string(slot.size) + " bytes");
  } else if (slot.size > kMaxEmbeddedBytes) {
    failAt(f, *init, what + ": embedded data larger than " + std::to_string(kMaxEmbeddedBytes) + " bytes");
  } else {
    slot.data.resize(slot.size, 0); // the rest is zero, documented
  }
  sized = true;
}

// A slot's 'init' (`init` non-null): "external" or "transient", or an object with
// exactly one of 'fill', 'data', 'data_file' and 'file'. Sets slot.init with the
// slot's contents or path, and `sized` where embedded data sizes the slot.
void readSlotInit(const std::string &f, const std::string &dir, const AllowedDirs &allowed,
                  const JValue *init, Slot &slot, bool &sized) {
  const std::string what = "slot '" + slot.name + "'";
  if (init->isString()) {
    if (init->text == "external") slot.init = SlotInit::External;
    else if (init->text == "transient") slot.init = SlotInit::Transient;
    else failAt(f, *init, what + ": unknown init '" + init->text + "' (expected \"external\", \"transient\" or an object)");
    return;
  }
  expectKind(f, *init, JValue::Kind::Object, "'init'");
  checkKeys(f, *init, {"fill", "data", "data_file", "file", "type"}, "slot init");
  int forms = !!init->find("fill") + !!init->find("data") + !!init->find("data_file") + !!init->find("file");
  if (forms != 1)
    failAt(f, *init, what + ": 'init' needs exactly one of 'fill', 'data', 'data_file', 'file'");
  if (const JValue *fv = init->find("fill")) {
    readFillInit(f, init, fv, what, slot);
  } else if (const JValue *dv = init->find("data")) {
    readDataInit(f, init, dv, what, slot);
  } else if (const JValue *pv = init->find("data_file")) {
    readDataFileInit(f, dir, allowed, init, pv, what, slot);
  } else {
    const JValue *fileV = init->find("file");
    slot.init = SlotInit::File;
    if (init->find("type")) failAt(f, *init->find("type"), what + ": 'type' does not apply to 'file'");
    slot.path = toStr(f, *fileV, "'file'");
    if (slot.path.empty()) failAt(f, *fileV, what + ": empty file path");
  }
  if (slot.init == SlotInit::Data) sizeDataInit(f, init, what, slot, sized);
}

} // namespace

void DescriptionReader::readSlots(GraphCtx &c, const JValue &list) {
  const std::string &f = c.file;
  expectKind(f, list, JValue::Kind::Array, "'slots'");
  for (const JValue &s : list.items) {
    expectKind(f, s, JValue::Kind::Object, "a slot");
    checkKeys(f, s, {"name", "bytes", "count", "type", "align", "external", "init"}, "slot");
    Slot slot;
    const JValue &nameV = require(f, s, "name", "slot");
    slot.name = toStr(f, nameV, "slot 'name'");
    if (slot.name.empty() || slot.name[0] == '$')
      failAt(f, nameV, "invalid slot name '" + slot.name + "' (empty or starting with '$')");
    if (c.slotByName.count(slot.name)) {
      diags_.note(Location::at(f, c.map.slots[c.slotByName[slot.name]]), "slot '" + slot.name + "' first declared here");
      failAt(f, nameV, "duplicate slot name '" + slot.name + "'");
    }
    bool sized = false;
    const uint32_t slotIndex = uint32_t(c.g().slots.size());
    const JValue *sizeExpr = nullptr; // 'bytes' or 'count' as an expression over parameters
    // A size that is an expression over parameters is stored (.cgf 2.2, `bytes` =
    // program * `scale`); the slot keeps its size at the parameters' defaults (>= 1).
    auto readSize = [&](const JValue &v, const char *key, uint64_t scale) -> uint64_t {
      const std::string what = std::string("slot '") + key + "' of '" + slot.name + "'";
      if (!v.isString() || !isExpressionText(v.text, false))
        return toU64(f, v, std::string("slot '") + key + "'");
      std::vector<uint8_t> code;
      std::optional<int64_t> atDefaults;
      std::optional<int64_t> value = foldOrStore(c, v, what, &code, &atDefaults);
      if (value) {
        if (*value < 1)
          failAt(f, v,
                 what + " is " + std::to_string(*value) + " ('" + v.text +
                     "'); it must be positive");
        return uint64_t(*value);
      }
      if (scale != 1) {
        Expected<expr::Program> prog =
            expr::decode(code.data(), code.size(), uint32_t(c.g().params.size()));
        if (!prog) failAt(f, v, what + ": " + prog.error().message());
        prog->code.push_back(expr::Instr{expr::Op::Lit, int64_t(scale)});
        prog->code.push_back(expr::Instr{expr::Op::Mul, 0});
        code = expr::encode(*prog);
      }
      FieldExpr fe;
      fe.node = kNone;
      fe.field = ExprField::SlotSize;
      fe.arg = slotIndex;
      fe.code = std::move(code);
      c.slotExprs.push_back(std::move(fe));
      sizeExpr = &v;
      return uint64_t(atDefaults && *atDefaults >= 1 ? *atDefaults : 1);
    };
    if (const JValue *b = s.find("bytes")) {
      if (s.find("count")) failAt(f, *s.find("count"), "slot '" + slot.name + "': give 'bytes' or 'count', not both");
      slot.size = readSize(*b, "bytes", 1);
      sized = true;
    } else if (const JValue *n = s.find("count")) {
      const JValue *t = s.find("type");
      if (!t) failAt(f, *n, "slot '" + slot.name + "': 'count' needs an element 'type'");
      uint64_t es = scalarSize(toType(f, *t));
      uint64_t count = readSize(*n, "count", es);
      if (count > ~uint64_t(0) / es) failAt(f, *n, "slot '" + slot.name + "': count * element size overflows 64 bits");
      slot.size = count * es;
      sized = true;
    } else if (const JValue *t = s.find("type")) {
      failAt(f, *t, "slot '" + slot.name + "': 'type' is only used with 'count'");
    }
    if (const JValue *a = s.find("align")) {
      uint64_t al = toU64(f, *a, "slot 'align'");
      if (al == 0 || (al & (al - 1)) || al > (1u << 30))
        failAt(f, *a, "slot '" + slot.name + "': alignment " + a->text + " is not a power of two up to 2^30");
      slot.alignment = uint32_t(al);
    }
    const JValue *ext = s.find("external");
    const JValue *init = s.find("init");
    if (ext) {
      expectKind(f, *ext, JValue::Kind::Bool, "'external'");
      if (init && ext->boolean) failAt(f, *init, "slot '" + slot.name + "': an external slot has no 'init'");
      if (!init && !ext->boolean) failAt(f, *ext, "slot '" + slot.name + "': not external but no 'init' given");
    }
    slot.init = SlotInit::External;
    if (init) readSlotInit(f, c.dir, allowed_, init, slot, sized);
    if (!sized) failAt(f, s, "slot '" + slot.name + "' needs a size: 'bytes', or 'count' and 'type'");
    if (sizeExpr && slot.init == SlotInit::Data)
      failAt(
          f, *sizeExpr,
          "slot '" + slot.name +
              "': embedded 'data' has a fixed size, so the slot's size cannot depend on parameters "
              "(use 'fill', 'file' or 'transient', or an external slot)");
    c.slotByName[slot.name] = uint32_t(c.g().slots.size());
    c.map.slots.push_back(s.pos);
    c.builder.addSlot(std::move(slot));
  }
}

void DescriptionReader::readParams(GraphCtx &c, const JValue &list) {
  const std::string &f = c.file;
  expectKind(f, list, JValue::Kind::Array, "'params'");
  for (const JValue &p : list.items) {
    expectKind(f, p, JValue::Kind::Object, "a param");
    checkKeys(f, p, {"name", "type", "default"}, "param");
    Param param;
    const JValue &nameV = require(f, p, "name", "param");
    param.name = toStr(f, nameV, "param 'name'");
    if (param.name.empty() || param.name[0] == '$')
      failAt(f, nameV, "invalid param name '" + param.name + "' (empty or starting with '$')");
    if (c.g().findParam(param.name) != kNone) failAt(f, nameV, "duplicate param name '" + param.name + "'");
    param.type = toType(f, require(f, p, "type", "param '" + param.name + "'"));
    if (const JValue *d = p.find("default")) {
      std::string err = encodeScalar(param.type, *d, &param.defaultBits);
      if (!err.empty()) failAt(f, *d, "param '" + param.name + "': " + err);
    }
    c.paramPos.push_back(p.pos);
    c.builder.addParam(std::move(param));
  }
}

namespace {

// "0-999", "0-3, 5, 7-9"; nested blocks: "1.0-1.4, 2.0-2.4" (runs of the innermost
// iteration). At most 8 runs are written.
std::string iterationRanges(std::vector<std::vector<uint64_t>> iters) {
  std::sort(iters.begin(), iters.end());
  auto text = [](const std::vector<uint64_t> &it) {
    std::string t;
    for (uint64_t v : it) t += (t.empty() ? "" : ".") + std::to_string(v);
    return t;
  };
  std::string out;
  size_t runs = 0;
  for (size_t i = 0; i < iters.size();) {
    size_t j = i;
    while (j + 1 < iters.size() && iters[j + 1].size() == iters[j].size() &&
           std::equal(iters[j].begin(), iters[j].end() - 1, iters[j + 1].begin()) &&
           iters[j + 1].back() == iters[j].back() + 1)
      ++j;
    if (++runs > 8) return out + ", ... (" + std::to_string(iters.size()) + " in all)";
    out += (out.empty() ? "" : ", ") + text(iters[i]) + (j > i ? "-" + text(iters[j]) : "");
    i = j + 1;
  }
  return out;
}

void replaceAll(std::string &s, const std::string &from, const std::string &to) {
  for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
}

// One diagnostic as reported: the copies of a repeat block's template that fail the
// same way are one group, reported once.
struct DiagGroup {
  Diagnostic::Severity severity;
  Location loc;
  std::string message;      // the first copy's, or the template's with kMark for its name
  const NodeOrigin *origin = nullptr;
  std::vector<std::vector<uint64_t>> iters;
};

const char *const kMark = "\x01";

// `nodes 'w' (repeat 'i', iterations 0-999): <the rest>` for a group of several copies.
std::string groupMessage(const DiagGroup &gr) {
  if (gr.iters.size() < 2) return gr.message;
  const std::string lead = std::string("node '") + kMark + "': ";
  std::string rest = gr.message.rfind(lead, 0) == 0 ? gr.message.substr(lead.size()) : gr.message;
  replaceAll(rest, kMark, gr.origin->templateName);
  return "nodes '" + gr.origin->templateName + "' (" + gr.origin->repeat + ", iterations " +
         iterationRanges(gr.iters) + "): " + rest;
}

} // namespace

void DescriptionReader::validate(GraphCtx &c, Graph &g, bool warnings) {
  ValidateOptions vo;
  vo.warnings = warnings;
  vo.recurseSubgraphs = false; // each subgraph was validated against its own description
  std::vector<Diagnostic> diags = validateGraph(g, vo);
  std::vector<DiagGroup> groups;
  std::map<std::string, size_t> byKey; // severity, position, message with the name marked
  for (const Diagnostic &d : diags) {
    Location loc = Location::at(c.file, c.map.graphPos);
    if (d.node != kNone && d.node < c.map.nodes.size()) loc.pos = c.map.nodes[d.node];
    else if (d.slot != kNone && d.slot < c.map.slots.size()) loc.pos = c.map.slots[d.slot];
    const NodeOrigin *origin =
        d.node != kNone && d.node < c.map.origins.size() && !c.map.origins[d.node].iters.empty()
            ? &c.map.origins[d.node]
            : nullptr;
    if (!origin) {
      groups.push_back(DiagGroup{d.severity, loc, d.message, nullptr, {}});
      continue;
    }
    std::string marked = d.message;
    replaceAll(marked, "'" + g.nodes[d.node].name + "'", std::string("'") + kMark + "'");
    const std::string key = std::to_string(int(d.severity)) + ":" + std::to_string(loc.pos.line) + ":" +
                            std::to_string(loc.pos.col) + ":" + marked;
    auto it = byKey.find(key);
    if (it == byKey.end()) {
      it = byKey.emplace(key, groups.size()).first;
      groups.push_back(DiagGroup{d.severity, loc, d.message, origin, {}});
    } else if (groups[it->second].iters.size() == 1) {
      groups[it->second].message = marked;
    }
    groups[it->second].iters.push_back(origin->iters);
  }
  bool failed = false;
  for (const DiagGroup &gr : groups) {
    if (gr.severity == Diagnostic::Error) {
      diags_.error(gr.loc, groupMessage(gr));
      failed = true;
    } else {
      diags_.warning(gr.loc, groupMessage(gr));
    }
  }
  // Reported above; unwinds without printing again.
  if (failed) throw DescError{Location{}, "", false};
}

// ---- boundary -------------------------------------------------------------------------

namespace {

// Runs `read` with the reader's allowed directories (`dir`, the include directories,
// opts.allowDirs), turning DescError and exceptions into diagnostics. `name` labels
// messages without a better place; `*code` says why it failed.
template <class F>
bool runReader(const std::string &name, const std::string &dir, const DescriptionOptions &opts, DiagSink &diags,
               Graph *out, ErrorCode *code, F read) {
  *code = ErrorCode::Invalid;
  try {
    AllowedDirs allowed;
    allowed.setHint(opts.allowDirsHint);
    allowed.add(dir);
    for (const std::string &d : opts.compile.includeDirs) allowed.add(d);
    for (const std::string &d : opts.allowDirs) allowed.add(d);
    DescriptionReader reader(opts, allowed, diags);
    *out = read(reader);
    return diags.errorCount() == 0;
  } catch (const DescError &e) {
    *code = e.code;
    if (e.verbatim) {
      diags.verbatim(e.message, true);
    } else if (!e.message.empty()) {
      diags.error(e.loc, e.message);
    } else if (diags.errorCount() == 0) {
      diags.error(Location{}, "invalid description '" + name + "'");
    }
    return false;
  } catch (const std::bad_alloc &) {
    *code = ErrorCode::OutOfMemory;
    diags.error(Location::inFile(name), "out of memory while reading the description");
    return false;
  } catch (const std::exception &e) {
    *code = ErrorCode::Internal;
    diags.error(Location::inFile(name), std::string("internal error: ") + e.what());
    return false;
  }
}

bool loadFile(const std::string &path, const DescriptionOptions &opts, DiagSink &diags, Graph *out,
              ErrorCode *code) {
  return runReader(path, std::filesystem::path(path).parent_path().string(), opts, diags, out, code,
                   [&](DescriptionReader &r) { return r.readFile(path, Location{}, 0); });
}

bool loadText(const std::string &text, const std::string &name, const std::string &baseDir,
              const DescriptionOptions &opts, DiagSink &diags, Graph *out, ErrorCode *code) {
  if (text.size() > kMaxDescriptionBytes) {
    *code = ErrorCode::Invalid;
    diags.error(Location::inFile(name), "description of " + std::to_string(text.size()) +
                                            " bytes is larger than the limit of " +
                                            std::to_string(kMaxDescriptionBytes) + " bytes");
    return false;
  }
  return runReader(name, baseDir, opts, diags, out, code,
                   [&](DescriptionReader &r) { return r.readText(text, name, baseDir, 0); });
}

// The Error compileDescription* return after diagnostics were reported.
Error failure(const DiagSink &diags, ErrorCode code, const std::string &name) {
  std::string message = diags.firstError();
  if (message.empty()) message = "invalid description '" + name + "'";
  return makeError(code, message);
}

Expected<Graph> finish(Graph g, const std::string &name, DiagSink &diags, OrderKind order) {
  if (Error e = finalizeForFile(g, order)) {
    diags.error(Location::inFile(name), e.message());
    return failure(diags, e.code(), name);
  }
  return g;
}

} // namespace

bool loadDescription(const std::string &path, const DescriptionOptions &opts, DiagSink &diags, Graph *out) {
  ErrorCode code;
  return loadFile(path, opts, diags, out, &code);
}

bool loadDescriptionText(const std::string &text, const std::string &name, const std::string &baseDir,
                         const DescriptionOptions &opts, DiagSink &diags, Graph *out) {
  ErrorCode code;
  return loadText(text, name, baseDir, opts, diags, out, &code);
}

Expected<Graph> compileDescription(const std::string &path, const DescriptionOptions &opts, DiagSink &diags,
                                   OrderKind order) {
  Graph g;
  ErrorCode code;
  if (!loadFile(path, opts, diags, &g, &code)) return failure(diags, code, path);
  return finish(std::move(g), path, diags, order);
}

Expected<Graph> compileDescriptionText(const std::string &text, const std::string &name,
                                       const std::string &baseDir, const DescriptionOptions &opts,
                                       DiagSink &diags, OrderKind order) {
  Graph g;
  ErrorCode code;
  if (!loadText(text, name, baseDir, opts, diags, &g, &code)) return failure(diags, code, name);
  return finish(std::move(g), name, diags, order);
}

} // namespace cgraph::desc
