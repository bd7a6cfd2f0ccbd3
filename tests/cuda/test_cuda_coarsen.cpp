// The cuda lowering's coarse entries (ptx.h, gpu_common coarsen.h), without a GPU: which
// kernels get one, that it is PTX ptxas accepts (test_cuda_ptxas assembles every suite
// kernel's), and that its accesses of consecutive floats became 16-byte ones. The GPU
// suite (test_cuda_backend "[coarsen]") checks the values they compute.
#include "cgraph/codegen/ptx.h"
#include "cgraph/kernel/opencl_compiler.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <string>

using namespace cgraph;

namespace {

const char *kSource = R"CL(
float twice(float v) { return 2.0f * v; }
// Elementwise with a helper function and a 32-bit index: coarse.
__kernel void axpy(__global const float *x, __global float *y, float a) {
  int i = get_global_id(0);
  y[i] = a * x[i] + twice(y[i]);
}
// The 4-kernel chain's fused shape: coarse.
__kernel void chain(__global const float *x, __global float *y) {
  size_t i = get_global_id(0);
  float t = 2.0f * x[i] + 0.5f;
  y[i] = t * t + x[i];
}
// Coarse-able, but the copies' accesses do not merge (each copy's store to t may alias
// its own later load of x): strided scalar accesses would be slower, so no coarse entry.
__kernel void through(__global const float *x, __global float *t, __global float *y) {
  size_t i = get_global_id(0);
  t[i] = 2.0f * x[i];
  y[i] = t[i] + x[i];
}
// cgfuse's fused chain without internalization (intermediates in global memory): each
// copy reloads x after its own stores to t1 and t2, so those stores cannot merge
// across copies and the kernel gets no coarse entry (on an H200 such a coarse entry
// took 3.6 ms where the plain one takes 1.4).
__kernel void fused_global(__global const float *restrict x, __global float *restrict t1,
                           __global float *restrict t2, __global float *restrict y) {
  size_t i = get_global_id(0);
  t1[i] = x[i] * 2.0f;
  t2[i] = t1[i] + 0.5f;
  y[i] = t2[i] * t2[i] + x[i];
}
// Each observes its thread or shares memory: no coarse entry.
__kernel void uses_lid(__global float *y) { y[get_global_id(0)] = (float)get_local_id(0); }
__kernel void uses_size(__global float *y) { y[get_global_id(0)] = (float)get_global_size(0); }
__kernel void uses_groups(__global float *y) { y[get_global_id(0)] = (float)get_num_groups(0); }
__kernel void uses_barrier(__global float *y) {
  y[get_global_id(0)] = 1.0f;
  barrier(CLK_GLOBAL_MEM_FENCE);
}
__kernel void uses_atomic(__global int *c) { atomic_inc(c); }
__kernel void uses_local(__global float *y, __local float *s) {
  s[0] = y[0];
  y[get_global_id(0)] = s[0];
}
)CL";

codegen::PtxModule lower(unsigned sm) {
  auto spv = compileOpenCL(kSource, "coarsen.cl", {});
  INFO((spv ? std::string() : spv.error().message()));
  REQUIRE(spv);
  auto ptx = codegen::lowerSpirvToPtx(spv->spirv.data(), spv->spirv.size(), "coarsen.cl", sm);
  INFO((ptx ? std::string() : ptx.error().message()));
  REQUIRE(ptx);
  return *ptx;
}

// The text of entry `name` in `ptx` (up to the next entry).
std::string entryText(const std::string &ptx, const std::string &name) {
  const size_t at = ptx.find(".entry " + name + "(");
  if (at == std::string::npos) return {};
  const size_t next = ptx.find(".entry ", at + 1);
  return ptx.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

} // namespace

TEST_CASE("cuda lowering: kernels that cannot observe their thread get a coarse entry with 16-byte accesses",
          "[cuda][coarsen]") {
  for (unsigned sm : {80u, 90u}) {
    INFO("sm_" << sm);
    codegen::PtxModule m = lower(sm);
    std::vector<std::string> coarse = m.coarse;
    std::sort(coarse.begin(), coarse.end());
    CHECK(coarse == std::vector<std::string>{"axpy", "chain"});
    CHECK(m.kernels.size() == 10);
    for (const char *k : {"through", "fused_global", "uses_lid", "uses_size", "uses_groups", "uses_barrier", "uses_atomic", "uses_local"}) {
      INFO(k);
      CHECK_FALSE(entryText(m.ptx, k).empty());
      CHECK(entryText(m.ptx, std::string(codegen::kCoarseEntryPrefix) + k).empty());
    }
    for (const char *k : {"axpy", "chain"}) {
      INFO(k);
      const std::string plain = entryText(m.ptx, k);
      const std::string x4 = entryText(m.ptx, std::string(codegen::kCoarseEntryPrefix) + k);
      REQUIRE_FALSE(plain.empty());
      REQUIRE_FALSE(x4.empty());
      // One more parameter than the plain entry: the global size of dimension 0.
      CHECK(count(x4, ".param .") == count(plain, ".param .") + 1);
      // The aligned path: x and y as one ld.global.v4.f32 / st.global.v4.f32 each
      // (axpy reads y too); the plain entry has no vector access.
      CHECK(count(x4, "ld.global.v4.f32") == (std::string(k) == "axpy" ? 2u : 1u));
      CHECK(count(x4, "st.global.v4.f32") == 1);
      CHECK(count(plain, ".v4.") == 0);
      if (sm >= 90) CHECK(count(x4, "griddepcontrol.wait;") == 1);
    }
  }
}

TEST_CASE("cuda lowering: loads through a restrict buffer the kernel only reads take the read-only path",
          "[cuda][restrict]") {
  const char *src = R"CL(
__kernel void nc(__global float *restrict out, __global const float *restrict in) {
  size_t i = get_global_id(0);
  out[i] = in[i] + in[i + 1];
}
// Not restrict: another argument may write the same memory.
__kernel void plain(__global float *out, __global const float *in) {
  size_t i = get_global_id(0);
  out[i] = in[i] + in[i + 1];
}
// restrict, but written too: its loads must see the stores.
__kernel void written(__global float *restrict io) {
  size_t i = get_global_id(0);
  io[i] = io[i + 1] * 2.0f;
}
)CL";
  auto spv = compileOpenCL(src, "restrict.cl", {});
  REQUIRE(spv);
  for (unsigned sm : {80u, 90u}) {
    INFO("sm_" << sm);
    auto m = codegen::lowerSpirvToPtx(spv->spirv.data(), spv->spirv.size(), "restrict.cl", sm);
    INFO((m ? std::string() : m.error().message()));
    REQUIRE(m);
    CHECK(count(entryText(m->ptx, "nc"), "ld.global.nc.f32") == 2);
    CHECK(count(entryText(m->ptx, "plain"), "ld.global.nc.f32") == 0);
    CHECK(count(entryText(m->ptx, "written"), "ld.global.nc.f32") == 0);
    // The table entries (the buffers' base addresses) are invariant in every kernel.
    for (const char *k : {"nc", "plain"}) CHECK(count(entryText(m->ptx, k), "ld.global.nc.u64") == 2);
    CHECK(count(entryText(m->ptx, "written"), "ld.global.nc.u64") == 1);
  }
}
