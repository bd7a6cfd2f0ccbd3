// See cuda_target.h.
#include "cuda_target.h"

#include "cgraph/codegen/ptx.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace cgraph::cgc {

namespace {

#ifndef CGC_PTXAS
#define CGC_PTXAS "" // no ptxas found at configure time
#endif

std::string findPtxas() {
  if (const char *e = std::getenv("CGRAPH_PTXAS"))
    if (access(e, X_OK) == 0) return e;
  if (const char *path = std::getenv("PATH")) {
    std::string p = path;
    size_t start = 0;
    while (start <= p.size()) {
      size_t end = p.find(':', start);
      if (end == std::string::npos) end = p.size();
      std::filesystem::path c = std::filesystem::path(p.substr(start, end - start)) / "ptxas";
      if (access(c.c_str(), X_OK) == 0) return c.string();
      start = end + 1;
    }
  }
  for (const char *c : {"/usr/local/cuda/bin/ptxas", CGC_PTXAS})
    if (*c && access(c, X_OK) == 0) return c;
  return {};
}

Expected<std::vector<uint8_t>> assemble(const std::string &ptxas, const std::string &ptx, unsigned sm,
                                        const std::string &what) {
  char dir[] = "/tmp/cgc-ptxas-XXXXXX";
  if (!mkdtemp(dir)) return makeError("cannot create a temporary directory for ptxas");
  const std::filesystem::path d = dir, in = d / "m.ptx", out = d / "m.cubin", log = d / "log";
  std::ofstream(in) << ptx;
  const std::string cmd = "'" + ptxas + "' -arch=sm_" + std::to_string(sm) + " -o '" + out.string() + "' '" +
                          in.string() + "' > '" + log.string() + "' 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream lf(log);
  std::string text((std::istreambuf_iterator<char>(lf)), std::istreambuf_iterator<char>());
  std::ifstream cf(out, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(cf)), std::istreambuf_iterator<char>());
  std::error_code ec;
  std::filesystem::remove_all(d, ec);
  if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0 || bytes.empty())
    return makeError(what + ": ptxas -arch=sm_" + std::to_string(sm) + " failed: " + text);
  return bytes;
}

} // namespace

Error addTargetForms(Graph &g, const std::vector<std::string> &targets, std::vector<std::string> *warnings) {
  std::vector<unsigned> sms;
  for (const std::string &t : targets) {
    unsigned sm = 0;
    if (t.rfind("cuda:sm_", 0) == 0 && t.size() > 8 && t.find_first_not_of("0123456789", 8) == std::string::npos)
      sm = unsigned(std::strtoul(t.c_str() + 8, nullptr, 10));
    if (sm < 35) return makeError("unknown target '" + t + "' (expected cuda:sm_XY, e.g. cuda:sm_90)");
    sms.push_back(sm);
  }
  if (sms.empty()) return Error::success();
  const std::string ptxas = findPtxas();
  if (ptxas.empty()) warnings->push_back("ptxas not found (PATH, CGRAPH_PTXAS): PTX only, no cubin");
  for (KernelModule &m : g.modules) {
    // A copy: forms grows below, which would invalidate a reference into it.
    const std::vector<uint8_t> spv = m.forms.at(0).bytes;
    for (unsigned sm : sms) {
      const unsigned ptxSm = codegen::ptxTargetFor(sm / 10, sm % 10);
      const std::string ptxTarget = "nvptx64-sm_" + std::to_string(ptxSm);
      std::string ptx;
      for (const KernelForm &f : m.forms)
        if (f.kind == FormKind::PTX && f.target == ptxTarget) ptx.assign(f.bytes.begin(), f.bytes.end());
      if (ptx.empty()) {
        auto p = codegen::lowerSpirvToPtx(spv.data(), spv.size(), m.name, ptxSm);
        if (!p) return p.error();
        ptx = p->ptx;
        KernelForm f;
        f.kind = FormKind::PTX;
        f.target = ptxTarget;
        f.options = codegen::ptxLoweringVersion();
        f.bytes.assign(ptx.begin(), ptx.end());
        m.forms.push_back(std::move(f));
      }
      if (ptxas.empty()) continue;
      auto cubin = assemble(ptxas, ptx, sm, "module '" + m.name + "'");
      if (!cubin) return cubin.error();
      KernelForm f;
      f.kind = FormKind::Cubin;
      f.target = "nvptx64-sm_" + std::to_string(sm);
      f.options = codegen::ptxLoweringVersion();
      f.bytes = std::move(*cubin);
      m.forms.push_back(std::move(f));
    }
  }
  for (Graph &sub : g.subgraphs) CGRAPH_RETURN_IF_ERROR(addTargetForms(sub, targets, warnings));
  return Error::success();
}

} // namespace cgraph::cgc
