// libFuzzer target for cgc's description reader: each input is a graph description
// (JSON), loaded as cgc loads it (positions, kernels, repeat blocks, subgraphs,
// expressions, hazard edges, validation), then finalized and written as cgc would.
// Besides "never crash, hang or leak", it checks that a failed load reported an error,
// that the writer takes every graph the reader accepts, and that an accepted graph has
// no copy, fill or nd-range whose arithmetic wraps 64 bits (validation refuses those).
//
// Kernels: one SPIR-V file, "k.spv", compiled once at start-up from kKernels and placed
// beside the input, so no input runs clang (inputs that name a .cl file still do). The
// seed corpus (tests/fuzz/corpus/json) uses the kernels below.
#include "cgraph/description/description.h"

#include "cgraph/format/writer.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/graph/order.h"
#include "cgraph/kernel/opencl_compiler.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const char *kKernels = R"(
__kernel void scale(__global float *out, __global const float *in, float alpha, uint n) {
  uint i = get_global_id(0);
  if (i < n) out[i] = alpha * in[i];
}
__kernel void block_sum(__global float *out, __global const float *in, __local float *scratch) {
  uint lid = get_local_id(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}
__kernel void add_index(__global float *buf, int i) { buf[0] += (float)i; }
__kernel void count(__global uint *c, __constant uint *limit, ulong n)
    __attribute__((reqd_work_group_size(8, 1, 1))) {
  if (get_global_id(0) < n) atomic_inc(c);
}
)";

std::string gDir; // scratch directory: k.spv and the current input

void removeDir() {
  std::error_code ec;
  std::filesystem::remove_all(gDir, ec);
}

// What validation promises of an accepted graph (and its subgraphs): literal copy and
// fill ranges and rect extents fit 64 bits, literal nd-ranges count at most 2^63 - 1
// work-items and their ids do not wrap. Returns what is wrong, or "".
std::string wrapped(const cgraph::Graph &g) {
  using namespace cgraph;
  for (const Graph &child : g.subgraphs)
    if (std::string w = wrapped(child); !w.empty()) return w;
  AccessInfo info;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    const Node &node = g.nodes[n];
    bool hasExpr = false;
    for (const FieldExpr &e : g.exprs) hasExpr = hasExpr || e.node == n;
    if (hasExpr) continue; // checked per submission
    uint64_t end;
    if (node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect || node.kind == NodeKind::Fill) {
      nodeAccesses(g, n, info);
      for (const SlotAccess &a : info.accesses)
        if (a.size == kUnknownSize || __builtin_add_overflow(a.offset, a.size, &end))
          return "node '" + node.name + "': a transfer range wraps 64 bits";
    }
    if (node.kind != NodeKind::Kernel) continue;
    uint64_t items = 1;
    for (uint32_t d = 0; d < node.range.dims && d < 3; ++d) {
      const Dim &gl = node.range.global[d], &off = node.range.offset[d];
      if (gl.param != kNone) continue;
      if (__builtin_mul_overflow(items, gl.value, &items) || items > uint64_t(INT64_MAX))
        return "node '" + node.name + "': the work-item count wraps";
      if (off.param == kNone && __builtin_add_overflow(off.value, gl.value, &end))
        return "node '" + node.name + "': global ids wrap";
    }
  }
  return "";
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "cgc-fuzz.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  gDir = tmpl;
  std::atexit(removeDir);
  cgraph::Expected<cgraph::CompileResult> r =
      cgraph::compileOpenCL(kKernels, "k.cl", cgraph::CompileOptions{});
  if (!r) {
    std::fprintf(stderr, "fuzz_cgc_description: kernels: %s\n", r.error().message().c_str());
    std::abort();
  }
  std::ofstream(gDir + "/k.spv", std::ios::binary)
      .write(reinterpret_cast<const char *>(r->spirv.data()), std::streamsize(r->spirv.size()));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace cgraph;
  const std::string path = gDir + "/graph.json";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data), std::streamsize(size));
  }
  std::ostringstream text;
  desc::DiagSink diags(desc::streamDiagHandler(text));
  desc::DescriptionOptions opts;
  Graph g;
  if (!desc::loadDescription(path, opts, diags, &g)) {
    if (diags.errorCount() == 0) {
      std::fprintf(stderr, "load failed without an error:\n%s\n", text.str().c_str());
      std::abort();
    }
    return 0;
  }
  if (std::string w = wrapped(g); !w.empty()) {
    std::fprintf(stderr, "cgc accepted a description whose arithmetic wraps: %s\n", w.c_str());
    std::abort();
  }
  if (Error e = finalizeForFile(g)) {
    std::fprintf(stderr, "cgc accepted a description that finalizeForFile refuses: %s\n",
                 e.message().c_str());
    std::abort();
  }
  Expected<std::vector<uint8_t>> bytes = writeCgf(g);
  if (!bytes) {
    std::fprintf(stderr, "cgc accepted a description the writer refuses: %s\n",
                 bytes.error().message().c_str());
    std::abort();
  }
  return 0;
}
