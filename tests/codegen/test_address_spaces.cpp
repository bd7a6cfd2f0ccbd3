// The address-space remap of the table-ABI lowering (lib/codegen src/address_spaces.h)
// through both targets: SPIR constant (2) becomes global (1) on nvptx and 4 on amdgcn,
// generic (4) becomes flat (0) on both; builtin declarations follow libclc's names.
// test_cuda_ptxas and test_hip_amdgcn_elf check the suite's kernels' output as a whole.
#include "cgraph/codegen/amdgcn.h"
#include "cgraph/codegen/ptx.h"
#include "cgraph/kernel/opencl_compiler.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace cgraph;

namespace {

// __constant buffers and program-scope constants (a struct copied with memcpy); vload4
// from constant and from global, which are one builtin once constant is global (nvptx);
// native_/half_ builtins beside the precise ones they become (nvptx).
const char *kConstant = R"CL(
__constant float ctab[4] = {1.0f, 2.0f, 3.0f, 4.0f};
typedef struct { float a[6]; int n; } Params;
__constant Params cparams = {{1, 2, 3, 4, 5, 6}, 3};

__kernel void cparam(__global float *out, __constant float *c, __constant float4 *c4,
                     __global const float *g) {
  size_t i = get_global_id(0);
  float4 a = vload4(i, c);
  float4 b = vload4(i, g);
  out[i] = a.x + b.y + c4[i].z + ctab[i & 3];
  out[i] += native_exp(a.w) + exp(b.z) + half_cos(a.y) + cos(b.x);
}

__kernel void cstruct(__global float *out, __constant Params *p) {
  size_t i = get_global_id(0);
  Params mine = *p;
  Params other = cparams;
  out[i] = mine.a[i % 6] + other.a[(i + 1) % 6] + mine.n;
}
)CL";

// CL2.0 generic pointers: in structs (one that points to itself), from private, local
// and global memory, passed to builtins whose space the amdgcn lowering can infer.
const char *kGeneric = R"CL(
typedef struct { float *p; int n; } View;
typedef struct Node { struct Node *next; float v; } Node;

float sum(View v) {
  float s = 0;
  for (int k = 0; k < v.n; ++k) s += v.p[k];
  return s;
}

__kernel void views(__global float *out, __local float *tmp, __global float *in) {
  size_t i = get_global_id(0), l = get_local_id(0);
  float priv[4];
  for (int k = 0; k < 4; ++k) priv[k] = in[i * 4 + k];
  tmp[l] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  View a = {priv, 4}, b = {(float *)tmp + l, 1}, c = {(float *)in + i, 2};
  out[i] = sum(a) + sum(b) + sum(c);
}

__kernel void nodes(__global float *out, __global const float *in) {
  size_t i = get_global_id(0);
  Node n2 = {0, in[i]};
  Node n1 = {&n2, in[i + 1]};
  float s = 0;
  for (Node *n = &n1; n; n = n->next) s += n->v;
  out[i] = s;
}

__kernel void builtins(__global float *out, __global float *in) {
  size_t i = get_global_id(0);
  float ip, co;
  int e;
  float f = fract(in[i], &ip);
  float m = frexp(in[i], &e);
  float s = sincos(in[i], &co);
  float4 v = vload4(0, (float *)&in[i * 4]);
  out[i] = f + ip + m + (float)e + s + co + v.x;
}
)CL";

// A generic pointer that is private or global depending on data: libclc's amdgcn build
// has no generic fract, so the amdgcn lowering refuses it; nvptx takes it (flat).
const char *kUnknownSpace = R"CL(
__kernel void unknown(__global float *out, __global float *in, int which) {
  size_t i = get_global_id(0);
  float priv = 0;
  float *p = which ? &priv : (float *)&out[i + 1];
  out[i] = fract(in[i], p) + priv;
}
)CL";

std::vector<uint8_t> spirv(const char *source, const char *name, const char *clStd) {
  CompileOptions o;
  o.clStd = clStd;
  auto r = compileOpenCL(source, name, o);
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r);
  return r->spirv;
}

} // namespace

TEST_CASE("constant buffers and constants are global memory in PTX", "[codegen]") {
  const std::vector<uint8_t> spv = spirv(kConstant, "constant.cl", "CL1.2");
  for (unsigned sm : {70u, 90u}) {
    auto p = codegen::lowerSpirvToPtx(spv.data(), spv.size(), "constant.cl", sm);
    INFO((p ? std::string() : p.error().message()));
    REQUIRE(p);
    CHECK(p->kernels == std::vector<std::string>{"cparam", "cstruct"});
    CHECK(p->ptx.find(".global .align 4 .b8 ctab[16]") != std::string::npos);
    CHECK(p->ptx.find(".global .align 4 .b8 cparams[28]") != std::string::npos);
    CHECK(p->ptx.find("ld.const") == std::string::npos);
    CHECK(p->ptx.find(".const ") == std::string::npos);
  }
}

TEST_CASE("constant buffers lower to amdgcn", "[codegen]") {
  const std::vector<uint8_t> spv = spirv(kConstant, "constant.cl", "CL1.2");
  std::vector<std::string> kernels;
  auto o =
      codegen::lowerSpirvToAmdgcnObject(spv.data(), spv.size(), "constant.cl", "gfx90a", &kernels);
  INFO((o ? std::string() : o.error().message()));
  REQUIRE(o);
  CHECK(kernels == std::vector<std::string>{"cparam", "cstruct"});
}

TEST_CASE("generic pointers become flat ones", "[codegen]") {
  const std::vector<uint8_t> spv = spirv(kGeneric, "generic.cl", "CL2.0");
  const std::vector<std::string> want{"views", "nodes", "builtins"};
  for (unsigned sm : {70u, 90u}) {
    auto p = codegen::lowerSpirvToPtx(spv.data(), spv.size(), "generic.cl", sm);
    INFO((p ? std::string() : p.error().message()));
    REQUIRE(p);
    CHECK(p->kernels == want);
  }
  std::vector<std::string> kernels;
  auto o =
      codegen::lowerSpirvToAmdgcnObject(spv.data(), spv.size(), "generic.cl", "gfx90a", &kernels);
  INFO((o ? std::string() : o.error().message()));
  REQUIRE(o);
  CHECK(kernels == want);
}

TEST_CASE("a generic builtin argument of unknown space", "[codegen]") {
  const std::vector<uint8_t> spv = spirv(kUnknownSpace, "unknown.cl", "CL2.0");
  auto p = codegen::lowerSpirvToPtx(spv.data(), spv.size(), "unknown.cl", 70);
  INFO((p ? std::string() : p.error().message()));
  CHECK(p);
  auto o =
      codegen::lowerSpirvToAmdgcnObject(spv.data(), spv.size(), "unknown.cl", "gfx90a", nullptr);
  REQUIRE(!o);
  CHECK(o.error().message() ==
        "module 'unknown.cl': builtin '_Z5fractfPU3ASGf' is called with a generic pointer whose "
        "address space cannot be inferred (libclc's amdgcn build has no generic variant)");
}
