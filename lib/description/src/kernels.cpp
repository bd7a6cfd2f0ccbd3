// Kernel files of a description: OpenCL C compiled in-process, SPIR-V loaded; both
// validated and reflected by lib/kernel.
#include "reader.h"

#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/spirv.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace cgraph::desc {

bool readWholeFile(const std::string &path, uint64_t maxBytes, std::string *out, std::string *why) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    *why = ec ? ec.message() : "No such file or directory";
    return false;
  }
  if (!std::filesystem::is_regular_file(status)) {
    *why = "not a regular file";
    return false;
  }
  uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    *why = ec.message();
    return false;
  }
  if (size > maxBytes) {
    *why = "file is larger than the limit of " + std::to_string(maxBytes) + " bytes";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = std::strerror(errno);
    return false;
  }
  out->assign(size, '\0');
  if (size && !in.read(&(*out)[0], std::streamsize(size))) {
    *why = "read error";
    return false;
  }
  return true;
}

namespace {

std::vector<std::string> readStringList(const std::string &file, const JValue &v,
                                        const std::string &what) {
  expectKind(file, v, JValue::Kind::Array, what);
  std::vector<std::string> out;
  for (const auto &item : v.items) out.push_back(toStr(file, item, what + " entry"));
  return out;
}

// "defines": {"N": 4, "FAST": true, "NAME": "x"} or ["N=4", "FAST"]
std::vector<std::string> readDefines(const std::string &file, const JValue &v) {
  if (v.isArray()) return readStringList(file, v, "'defines'");
  expectKind(file, v, JValue::Kind::Object, "'defines'");
  std::vector<std::string> out;
  for (size_t k = 0; k < v.keys.size(); ++k) {
    const JValue &val = v.items[k];
    const std::string &name = v.keys[k].first;
    if (val.isBool()) {
      if (val.boolean) out.push_back(name);
    } else if (val.isNumber() || val.isString()) {
      out.push_back(name + "=" + val.text);
    } else {
      failAt(file, val, "define '" + name + "' must be a number, string or boolean");
    }
  }
  return out;
}

// A description's "options" reach clang -cc1 as given, so only flags that change code
// generation or diagnostics pass: -cl-*, -D/-U (attached or with the next argument),
// -W*, -w, -O*, and -f flags without a value (or -ffp-contract=). Options that name
// files (-include, -I, -o, -load, -fplugin=, ...) would read or write outside the
// allowed directories. Throws DescError at the refused entry.
std::vector<std::string> readOptions(const std::string &file, const JValue &v) {
  std::vector<std::string> out = readStringList(file, v, "'options'");
  auto starts = [](const std::string &a, const char *p) { return a.rfind(p, 0) == 0; };
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string &a = out[i];
    if ((a == "-D" || a == "-U") && i + 1 < out.size() && !starts(out[i + 1], "-")) {
      ++i;
      continue;
    }
    if (starts(a, "-cl-") || starts(a, "-D") || starts(a, "-U") || starts(a, "-W") || a == "-w" ||
        starts(a, "-O") || (starts(a, "-f") && (a.find('=') == std::string::npos || starts(a, "-ffp-contract="))))
      continue;
    failAt(file, v.items[i], "option '" + a +
                                 "' is not allowed in a description (-cl-*, -D, -U, -W*, -w, -O* and -f flags "
                                 "without a value are; options that name files are not)");
  }
  return out;
}

} // namespace

namespace {

// The OpenCL C options of a kernels[] entry on top of the command line's: `co` is what
// clang gets; `shown` is what the file records as the build options: include
// directories as written in the description, so that the output does not depend on
// where the checkout or the current directory is.
void readClOptions(const std::string &file, const JValue &entry, const std::string &dir,
                   const AllowedDirs &allowed, CompileOptions &co, CompileOptions &shown) {
  if (const JValue *d = entry.find("defines")) {
    auto defs = readDefines(file, *d);
    co.defines.insert(co.defines.end(), defs.begin(), defs.end());
  }
  if (const JValue *inc = entry.find("include")) {
    expectKind(file, *inc, JValue::Kind::Array, "'include'");
    for (size_t i = 0; i < inc->items.size(); ++i) {
      const std::string s = toStr(file, inc->items[i], "'include' entry");
      allowed.check(file, inc->items[i], "'include' directory", joinPath(dir, s));
      co.includeDirs.push_back(joinPath(dir, s));
      shown.includeDirs.push_back(s);
    }
  }
  if (const JValue *s = entry.find("cl_std")) {
    co.clStd = toStr(file, *s, "'cl_std'");
    if (co.clStd != "CL1.2" && co.clStd != "CL2.0" && co.clStd != "CL3.0")
      failAt(file, *s, "unsupported cl_std '" + co.clStd + "' (expected CL1.2, CL2.0 or CL3.0)");
  }
  if (const JValue *o = entry.find("options")) co.extraArgs = readOptions(file, *o);
  shown.defines = co.defines;
  shown.clStd = co.clStd;
  shown.extraArgs = co.extraArgs;
}

// The kind of a kernel file entry: its "type", else its extension.
std::string kernelFileType(const std::string &file, const JValue &entry, const JValue &fileV,
                           const std::string &rel) {
  if (const JValue *t = entry.find("type")) {
    std::string type = toStr(file, *t, "'type'");
    if (type != "opencl-c" && type != "spirv")
      failAt(file, *t, "unknown kernel file type '" + type + "' (expected \"opencl-c\" or \"spirv\")");
    return type;
  }
  std::string ext = std::filesystem::path(rel).extension().string();
  if (ext == ".cl") return "opencl-c";
  if (ext == ".spv") return "spirv";
  failAt(file, fileV, "cannot tell the kind of kernel file '" + rel +
                          "' (expected a .cl or .spv extension, or a \"type\")");
}

} // namespace

const KernelCache::Entry &KernelCache::load(const JValue &entry, const std::string &file,
                                            const std::string &dir, const DescriptionOptions &opts,
                                            const AllowedDirs &allowed, DiagSink &diags) {
  if (entry.isString()) {
    // Shorthand: "kernels/saxpy.cl"
    JValue obj;
    obj.kind = JValue::Kind::Object;
    obj.pos = entry.pos;
    obj.keys.emplace_back("file", entry.pos);
    obj.items.push_back(entry);
    return load(obj, file, dir, opts, allowed, diags);
  }
  expectKind(file, entry, JValue::Kind::Object, "kernel file entry");
  if (entry.find("source")) return loadSource(entry, file, dir, opts, allowed, diags);
  checkKeys(file, entry, {"file", "type", "defines", "include", "cl_std", "options"}, "kernel file entry");
  const JValue &fileV = require(file, entry, "file", "kernel file entry");
  std::string rel = toStr(file, fileV, "'file'");
  if (rel.empty()) failAt(file, fileV, "empty kernel file name");
  std::string path = joinPath(dir, rel);
  const std::string type = kernelFileType(file, entry, fileV, rel);

  CompileOptions co = opts.compile;
  CompileOptions shown = opts.compile;
  if (type == "opencl-c") {
    readClOptions(file, entry, dir, allowed, co, shown);
  } else {
    for (const char *k : {"defines", "include", "cl_std", "options"})
      if (const JValue *v = entry.find(k))
        failAt(file, *v, std::string("'") + k + "' applies to OpenCL C files only");
  }

  allowed.check(file, fileV, "kernel file", path);
  std::string key = type + "\n" + path + "\n" + canonicalBuildOptions(co);
  auto it = entries_.find(key);
  if (it != entries_.end()) return *it->second;

  std::string bytes, why;
  if (!readWholeFile(path, kMaxKernelFileBytes, &bytes, &why))
    failAt(file, fileV, "cannot read kernel file '" + path + "': " + why);

  auto e = std::make_unique<Entry>();
  if (type == "opencl-c") {
    compileInto(*e, bytes, rel, path, co, shown, opts, file, fileV, diags);
  } else {
    const auto *data = reinterpret_cast<const uint8_t *>(bytes.data());
    Error err = validateSpirv(data, bytes.size(), path);
    if (err) failAt(file, fileV, err.message());
    e->module.name = rel;
    KernelForm form;
    form.kind = FormKind::SpirV;
    form.target = "spirv64";
    form.bytes.assign(data, data + bytes.size());
    e->module.forms.push_back(std::move(form));
  }
  reflectInto(*e, path, file, fileV, diags);
  return *entries_.emplace(key, std::move(e)).first->second;
}

// { "name": "axpy.cl", "source": "__kernel void ..." }: OpenCL C given in the
// description itself (what a program that builds a description writes); the name is
// the module's and what diagnostics call the file. Include directories are relative to
// the description's directory, as for files.
const KernelCache::Entry &KernelCache::loadSource(const JValue &entry, const std::string &file,
                                                  const std::string &dir, const DescriptionOptions &opts,
                                                  const AllowedDirs &allowed, DiagSink &diags) {
  checkKeys(file, entry, {"source", "name", "type", "defines", "include", "cl_std", "options"},
            "kernel source entry");
  const JValue &srcV = *entry.find("source");
  const std::string source = toStr(file, srcV, "'source'");
  if (source.size() > kMaxKernelFileBytes)
    failAt(file, srcV, "kernel source is larger than the limit of " + std::to_string(kMaxKernelFileBytes) +
                           " bytes");
  const JValue &nameV = require(file, entry, "name", "kernel source entry");
  const std::string name = toStr(file, nameV, "'name'");
  if (name.empty()) failAt(file, nameV, "empty kernel source name");
  if (const JValue *t = entry.find("type"))
    if (toStr(file, *t, "'type'") != "opencl-c")
      failAt(file, *t, "a kernel given as \"source\" is OpenCL C (\"type\": \"opencl-c\")");

  CompileOptions co = opts.compile;
  CompileOptions shown = opts.compile;
  readClOptions(file, entry, dir, allowed, co, shown);
  std::string key = "source\n" + name + "\n" + source + "\n" + canonicalBuildOptions(co);
  auto it = entries_.find(key);
  if (it != entries_.end()) return *it->second;

  auto e = std::make_unique<Entry>();
  compileInto(*e, source, name, joinPath(dir, name), co, shown, opts, file, srcV, diags);
  reflectInto(*e, name, file, srcV, diags);
  return *entries_.emplace(key, std::move(e)).first->second;
}

void KernelCache::compileInto(Entry &e, const std::string &text, const std::string &name,
                              const std::string &path, const CompileOptions &co,
                              const CompileOptions &shown, const DescriptionOptions &opts,
                              const std::string &file, const JValue &at, DiagSink &diags) {
  Expected<CompileResult> r = compileOpenCL(text, path, co);
  if (!r) throw DescError{Location::at(file, at.pos), r.error().message(), true};
  if (!r->warnings.empty()) diags.verbatim(r->warnings, false);
  r->buildOptions = canonicalBuildOptions(shown);
  e.module = makeKernelModule(name, *r, opts.keepSource ? &text : nullptr, opts.keepBitcode);
}

void KernelCache::reflectInto(Entry &e, const std::string &what, const std::string &file,
                              const JValue &at, DiagSink &diags) {
  const std::vector<uint8_t> &spv = e.module.forms.at(0).bytes;
  Expected<std::vector<Kernel>> ks = reflectKernels(spv.data(), spv.size());
  if (!ks) failAt(file, at, what + ": " + ks.error().message());
  if (ks->empty()) diags.warning(Location::at(file, at.pos), "kernel file '" + what + "' defines no kernels");
  e.kernels = std::move(*ks);
}

} // namespace cgraph::desc
