// The cuda lowering's PTX does not depend on what else the process compiled: a cpu
// kernel compiled first (whose pipeline asks for unroll-and-jam and other tuning) must
// leave the PTX of a cuda kernel byte for byte as a cuda-only process makes it, since
// the cubin cache key (lowering version, PTX hash) cannot tell two such binaries apart.
// Its own executable, so that the first lowering really runs before any cpu compile.
#include "cgraph/codegen/ptx.h"
#include "cgraph/kernel/opencl_compiler.h"

#include "cgraph/codegen/cpu.h"

#include <catch2/catch.hpp>

#include <string>

using namespace cgraph;

namespace {

// Loop nests (the shapes unroll-and-jam takes: an outer loop around an inner one whose
// loads do not depend on the outer index), a reduction and a plain elementwise kernel.
const char *kSource = R"CL(
__kernel void nest(__global const float *a, __global const float *b, __global float *c, int n, int m) {
  size_t g = get_global_id(0);
  for (int i = 0; i < n; ++i) {
    float s = 0.0f;
    for (int j = 0; j < m; ++j) s += a[j] * b[(g * n + i) * m + j];
    c[g * n + i] = s;
  }
}
__kernel void matmul(__global const float *A, __global const float *B, __global float *C, int N) {
  int row = get_global_id(1), col = get_global_id(0);
  float acc = 0.0f;
  for (int k = 0; k < N; ++k) acc += A[row * N + k] * B[k * N + col];
  C[row * N + col] = acc;
}
__kernel void rows(__global const float *x, __global float *y, int rows, int cols) {
  int t = get_global_id(0);
  for (int r = 0; r < rows; ++r) {
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) s += x[r * cols + c] * (float)(t + c);
    y[t * rows + r] = s;
  }
}
__kernel void nest_restrict(__global const float *restrict a, __global const float *restrict b,
                            __global float *restrict c, int n, int m) {
  size_t g = get_global_id(0);
  for (int i = 0; i < n; ++i) {
    float s = 0.0f;
    for (int j = 0; j < m; ++j) s += a[j] * b[i * m + j];
    c[g * n + i] = s;
  }
}
__kernel void axpy(__global const float *x, __global float *y, float a) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
)CL";

// A cpu kernel whose x loop encloses a kernel loop: the cpu lowering unrolls and jams it.
const char *kCpuSource = R"CL(
__kernel void mm(__global const float *A, __global const float *B, __global float *C, int N) {
  int row = get_global_id(1), col = get_global_id(0);
  float acc = 0.0f;
  for (int k = 0; k < N; ++k) acc += A[row * N + k] * B[k * N + col];
  C[row * N + col] = acc;
}
)CL";

std::string ptxFor(const CompileResult &spv, unsigned sm) {
  auto m = codegen::lowerSpirvToPtx(spv.spirv.data(), spv.spirv.size(), "isolation.cl", sm);
  INFO((m ? std::string() : m.error().message()));
  REQUIRE(m);
  return m->ptx;
}

} // namespace

TEST_CASE("cuda PTX is the same before and after a cpu compile in the process", "[cuda][llvm][isolation]") {
  if (codegen::nvptxLibclcPath().empty()) FAIL("libclc's nvptx64--nvidiacl.bc not found (CGRAPH_LIBCLC_DIR)");
  auto spv = compileOpenCL(kSource, "isolation.cl", {});
  INFO((spv ? std::string() : spv.error().message()));
  REQUIRE(spv);
  const std::string before80 = ptxFor(*spv, 80), before90 = ptxFor(*spv, 90);

  auto cpuSpv = compileOpenCL(kCpuSource, "cpu.cl", {});
  REQUIRE(cpuSpv);
  auto object = codegen::cpu::lowerToObject(cpuSpv->spirv.data(), cpuSpv->spirv.size(), "cpu.cl");
  INFO((object ? std::string() : object.error().message()));
  REQUIRE(object);
  REQUIRE(!object->empty());

  CHECK(ptxFor(*spv, 80) == before80);
  CHECK(ptxFor(*spv, 90) == before90);
}
