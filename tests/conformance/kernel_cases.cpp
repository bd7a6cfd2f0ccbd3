#include "kernel_cases.h"

#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace cgraph::conformance {

namespace fs = std::filesystem;

Expected<std::vector<ManifestFile>> loadManifestFiles(const std::vector<std::string> &dirs) {
  std::vector<ManifestFile> out;
  for (const std::string &dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".cl") files.push_back(it->path());
    if (ec) return makeError(dir + ": cannot list the kernel files: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path &p : files) {
      std::ifstream in(p);
      std::stringstream ss;
      ss << in.rdbuf();
      if (!in) return makeError(p.string() + ": cannot read");
      ManifestFile f{p.string(), ss.str(), {}};
      auto cases = parseManifest(f.source, f.path);
      if (!cases) return cases.error();
      f.cases = std::move(*cases);
      out.push_back(std::move(f));
    }
  }
  return out;
}

Expected<Graph> caseGraph(const ManifestFile &f, const ManifestCase &c) {
  const std::string file = fs::path(f.path).filename().string();
  Expected<CompileResult> r = compileOpenCL(f.source, file, CompileOptions{});
  if (!r) return r.error();
  GraphBuilder b(c.label());
  const uint32_t mod = b.addModule(makeKernelModule(file, *r, &f.source, false));
  Expected<std::vector<Kernel>> ks = reflectKernels(r->spirv.data(), r->spirv.size());
  if (!ks) return ks.error();
  uint32_t kernel = kNone;
  for (Kernel k : *ks) {
    k.module = mod;
    const std::string name = k.name;
    const uint32_t index = b.addKernel(std::move(k));
    if (name == c.kernel) kernel = index;
  }
  if (kernel == kNone) return makeError(file + " has no kernel '" + c.kernel + "'");
  std::vector<Arg> args;
  for (const ManifestArg &a : c.args) {
    switch (a.kind) {
    case ManifestArg::Buffer: {
      Slot s;
      s.name = a.name;
      s.size = a.count * scalarSize(a.type);
      s.init = SlotInit::External;
      args.push_back(Arg::slot(b.addSlot(std::move(s))));
      break;
    }
    case ManifestArg::Scalar:
      args.push_back(Arg::scalar(a.type, a.bits));
      break;
    case ManifestArg::Local:
      args.push_back(Arg::localMem(a.bytes));
      break;
    }
  }
  NDRange r3;
  r3.dims = c.dims;
  for (uint32_t d = 0; d < 3; ++d) {
    r3.global[d].value = c.global[d];
    r3.local[d].value = c.local[d];
    r3.offset[d].value = c.offset[d];
  }
  b.addKernelNode(c.kernel, kernel, r3, args);
  return b.take();
}

std::vector<const ManifestArg *> bufferArgs(const ManifestCase &c) {
  std::vector<const ManifestArg *> v;
  for (const ManifestArg &a : c.args)
    if (a.kind == ManifestArg::Buffer) v.push_back(&a);
  return v;
}

std::vector<std::vector<uint8_t>> caseInputs(const ManifestCase &c) {
  std::vector<std::vector<uint8_t>> in;
  const uint64_t seed = std::hash<std::string>()(c.label());
  for (size_t i = 0; i < c.args.size(); ++i)
    if (c.args[i].kind == ManifestArg::Buffer) in.push_back(makeInput(c.args[i], seed + i));
  return in;
}

} // namespace cgraph::conformance
