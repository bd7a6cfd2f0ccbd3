// compileOpenCL + reflectKernels on real kernels (real clang, translator, SPIRV-Tools).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"
#include "kernel_sources.h"

using namespace cgraph;

namespace {

CompileResult compileOk(const std::string &src, const std::string &file, const CompileOptions &opts = {}) {
  Expected<CompileResult> r = compileOpenCL(src, file, opts);
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::vector<Kernel> reflectOk(const CompileResult &r) {
  Expected<std::vector<Kernel>> k = reflectKernels(r.spirv.data(), r.spirv.size());
  INFO((k ? std::string() : k.error().message()));
  REQUIRE(k.ok());
  return std::move(k).value();
}

void checkParam(const KernelParam &p, const char *name, const char *type, ParamKind kind, uint32_t size,
                uint32_t quals) {
  INFO("param " << p.name << " type " << p.typeName);
  CHECK(p.name == name);
  CHECK(p.typeName == type);
  CHECK(p.kind == kind);
  CHECK(p.size == size);
  CHECK(p.qualifiers == quals);
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("cgraph-kernel-test-" + std::to_string(::getpid()) + "-" +
            std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

} // namespace

TEST_CASE("saxpy compiles to valid SPIR-V and reflects exactly", "[kernel]") {
  CompileResult r = compileOk(test::kSaxpy, "saxpy.cl");
  REQUIRE(r.spirv.size() > 20);
  CHECK(r.spirv[0] == 0x03);
  CHECK(r.spirv[3] == 0x07);
  CHECK_FALSE(validateSpirv(r.spirv.data(), r.spirv.size(), "saxpy.spv").failed());
  CHECK(r.warnings.empty());
  CHECK(r.buildOptions == "-cl-std=CL1.2");
  REQUIRE(r.spirBitcode.size() > 4);
  CHECK(r.spirBitcode[0] == 'B');
  CHECK(r.spirBitcode[1] == 'C');

  std::vector<Kernel> ks = reflectOk(r);
  REQUIRE(ks.size() == 1);
  const Kernel &k = ks[0];
  CHECK(k.name == "saxpy");
  CHECK(k.module == kNone);
  CHECK(k.reqdLocal[0] == 0);
  REQUIRE(k.params.size() == 4);
  checkParam(k.params[0], "y", "float*", ParamKind::GlobalBuffer, 4, 0);
  checkParam(k.params[1], "x", "float*", ParamKind::GlobalBuffer, 4, kQualConst);
  checkParam(k.params[2], "a", "float", ParamKind::Scalar, 4, 0);
  checkParam(k.params[3], "n", "uint", ParamKind::Scalar, 4, 0);
}

TEST_CASE("local memory, barrier and a scalar list reflect exactly", "[kernel]") {
  CompileResult r = compileOk(test::kLocalReduce, "reduce.cl");
  std::vector<Kernel> ks = reflectOk(r);
  REQUIRE(ks.size() == 1);
  const Kernel &k = ks[0];
  CHECK(k.name == "reduce");
  CHECK(k.reqdLocal[0] == 64);
  CHECK(k.reqdLocal[1] == 1);
  CHECK(k.reqdLocal[2] == 1);
  REQUIRE(k.params.size() == 11);
  checkParam(k.params[0], "in", "int*", ParamKind::GlobalBuffer, 4, kQualConst | kQualRestrict);
  checkParam(k.params[1], "out", "int*", ParamKind::GlobalBuffer, 4, 0);
  checkParam(k.params[2], "scratch", "int*", ParamKind::LocalBuffer, 4, 0);
  checkParam(k.params[3], "coef", "float*", ParamKind::ConstantBuffer, 4, kQualConst);
  checkParam(k.params[4], "i32", "int", ParamKind::Scalar, 4, 0);
  checkParam(k.params[5], "f32", "float", ParamKind::Scalar, 4, 0);
  checkParam(k.params[6], "u32", "uint", ParamKind::Scalar, 4, 0);
  checkParam(k.params[7], "i64", "long", ParamKind::Scalar, 8, 0);
  checkParam(k.params[8], "f64", "double", ParamKind::Scalar, 8, 0);
  checkParam(k.params[9], "v4", "float4", ParamKind::Scalar, 16, 0);
  checkParam(k.params[10], "u8", "uchar", ParamKind::Scalar, 1, 0);
}

TEST_CASE("several kernels in one module come back in source order", "[kernel]") {
  const char *src = R"(
    void helper(__global int *p) { p[0] = 1; }
    __kernel void first(__global int *p) { helper(p); }
    __kernel void second(__global char *c, __global void *raw) { c[0] = 2; }
  )";
  std::vector<Kernel> ks = reflectOk(compileOk(src, "two.cl"));
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].name == "first");
  CHECK(ks[1].name == "second");
  REQUIRE(ks[1].params.size() == 2);
  checkParam(ks[1].params[0], "c", "char*", ParamKind::GlobalBuffer, 1, 0);
  checkParam(ks[1].params[1], "raw", "void*", ParamKind::GlobalBuffer, 0, 0);
}

TEST_CASE("compile errors carry clang's file:line:col diagnostics", "[kernel]") {
  const char *src = "__kernel void k(__global float *p) {\n"
                    "  p[0] = 1.0f;\n"
                    "  undeclared_thing = 3;\n"
                    "}\n";
  Expected<CompileResult> r = compileOpenCL(src, "bad.cl", {});
  REQUIRE_FALSE(r.ok());
  const std::string &msg = r.error().message();
  INFO(msg);
  CHECK(msg.find("bad.cl:3:3: error: use of undeclared identifier 'undeclared_thing'") != std::string::npos);
  // One diagnostic per line, no source excerpt or caret line.
  CHECK(msg.find('^') == std::string::npos);
}

TEST_CASE("warnings are returned with a successful compile", "[kernel]") {
  const char *src = "__kernel void k(__global int *p) {\n#warning check this\n  p[0] = 1;\n}\n";
  CompileResult r = compileOk(src, "warn.cl");
  INFO(r.warnings);
  CHECK(r.warnings.find("warn.cl:2:2: warning: check this") != std::string::npos);
}

TEST_CASE("defines and include directories reach the preprocessor", "[kernel]") {
  TempDir dir;
  {
    std::ofstream h(dir.path / "scale.h");
    h << "#define SCALE_BY(x) ((x) * FACTOR)\n";
  }
  const char *src = "#include \"scale.h\"\n"
                    "#ifndef ENABLE\n#error ENABLE not defined\n#endif\n"
                    "__kernel void k(__global float *p) { p[0] = SCALE_BY(p[0]); }\n";
  CompileOptions opts;
  opts.includeDirs.push_back(dir.path.string());
  opts.defines = {"FACTOR=3.0f", "ENABLE"};
  CompileResult r = compileOk(src, "inc.cl", opts);
  CHECK(r.buildOptions == "-cl-std=CL1.2 -DFACTOR=3.0f -DENABLE -I" + dir.path.string());
  CHECK(reflectOk(r).size() == 1);

  // Without them the same source fails, naming the header or the #error.
  Expected<CompileResult> bad = compileOpenCL(src, "inc.cl", {});
  REQUIRE_FALSE(bad.ok());
  INFO(bad.error().message());
  CHECK(bad.error().message().find("inc.cl:1:10: fatal error: 'scale.h' file not found") !=
        std::string::npos);
}

TEST_CASE("unknown options are refused", "[kernel]") {
  CompileOptions opts;
  opts.clStd = "CL9.9";
  Expected<CompileResult> r = compileOpenCL(test::kSaxpy, "saxpy.cl", opts);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message().find("CL9.9") != std::string::npos);

  CompileOptions extra;
  extra.extraArgs = {"-no-such-flag"};
  Expected<CompileResult> r2 = compileOpenCL(test::kSaxpy, "saxpy.cl", extra);
  REQUIRE_FALSE(r2.ok());
  INFO(r2.error().message());
  CHECK(r2.error().message().find("-no-such-flag") != std::string::npos);
}

TEST_CASE("OpenCL C 2.0 with the generic address space", "[kernel]") {
  const char *src = R"(
    int load(int *p) { return *p; }   // generic pointer
    __kernel void k(__global int *g, __local int *l) {
      l[get_local_id(0)] = g[0];
      barrier(CLK_LOCAL_MEM_FENCE);
      g[1] = load(g) + load(l);
    }
  )";
  CompileOptions opts;
  opts.clStd = "CL2.0";
  CompileResult r = compileOk(src, "generic.cl", opts);
  std::vector<Kernel> ks = reflectOk(r);
  REQUIRE(ks.size() == 1);
  REQUIRE(ks[0].params.size() == 2);
  CHECK(ks[0].params[0].kind == ParamKind::GlobalBuffer);
  CHECK(ks[0].params[1].kind == ParamKind::LocalBuffer);
}

TEST_CASE("OpenCL C 3.0 with the generic address space feature", "[kernel]") {
  const char *src = R"(
    #ifndef __opencl_c_generic_address_space
    #error no generic address space
    #endif
    int load(int *p) { return *p; }
    __kernel void k(__global int *g) { g[1] = load(g); }
  )";
  CompileOptions opts;
  opts.clStd = "CL3.0";
  CompileResult r = compileOk(src, "cl3.cl", opts);
  std::vector<Kernel> ks = reflectOk(r);
  REQUIRE(ks.size() == 1);
  CHECK(ks[0].name == "k");
}

TEST_CASE("concurrent compiles are independent", "[kernel]") {
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &ok] {
      Expected<CompileResult> r =
          compileOpenCL(t % 2 ? test::kSaxpy : test::kLocalReduce, "t" + std::to_string(t) + ".cl", {});
      ok[t] = r.ok() && !r->spirv.empty();
    });
  for (std::thread &th : threads) th.join();
  for (int t = 0; t < 4; ++t) CHECK(ok[t] == 1);
}

TEST_CASE("makeKernelModule puts SPIR-V first, then source and bitcode", "[kernel]") {
  CompileResult r = compileOk(test::kSaxpy, "saxpy.cl");
  std::string src = test::kSaxpy;
  KernelModule m = makeKernelModule("saxpy.cl", r, &src, true);
  CHECK(m.name == "saxpy.cl");
  REQUIRE(m.forms.size() == 3);
  CHECK(m.forms[0].kind == FormKind::SpirV);
  CHECK(m.forms[0].target == "spirv64");
  CHECK(m.forms[0].options == r.buildOptions);
  CHECK(m.forms[0].bytes == r.spirv);
  CHECK(m.forms[1].kind == FormKind::OpenCLC);
  CHECK(std::string(m.forms[1].bytes.begin(), m.forms[1].bytes.end()) == src);
  CHECK(m.forms[2].kind == FormKind::LLVMBitcode);
  CHECK(m.forms[2].target == "spir64");
  KernelModule bare = makeKernelModule("saxpy.cl", r, nullptr, false);
  REQUIRE(bare.forms.size() == 1);
  CHECK(bare.forms[0].kind == FormKind::SpirV);
}

TEST_CASE("table-driven builtins declare what opencl-c.h declares", "[kernel]") {
  const char *src = R"(
    __kernel void many(__global float *f, __global int *i, __global uint *u, __local float *l,
                       __global float4 *v) {
      size_t g = get_global_id(0);
      float4 a = vload4(0, f);
      vstore4(a * 2.0f, 1, f);
      f[g] = sqrt(f[g]) + native_exp(f[g]) + mad(f[g], 2.0f, 1.0f) + fma(a.x, a.y, a.z) +
             clamp(f[g], 0.0f, 1.0f) + dot(a, a) + length(a) + half_sqrt(f[g]);
      i[g] = atomic_add(&i[0], 1) + abs(i[g]) + clz(i[g]) + mul24(i[g], 3) + convert_int_sat(f[g]);
      u[g] = atomic_cmpxchg(&u[0], 1u, 2u) + as_uint(f[g]) + popcount(u[g]);
      l[get_local_id(0)] = f[g];
      barrier(CLK_LOCAL_MEM_FENCE);
      mem_fence(CLK_GLOBAL_MEM_FENCE);
      event_t e = async_work_group_copy(l, f, 16, 0);
      wait_group_events(1, &e);
      v[g] = select(a, (float4)(1.0f), isgreater(a, (float4)(0.5f))) + shuffle(a, (uint4)(3, 2, 1, 0));
      printf("%d\n", (int)g);
    }
  )";
  for (const char *std : {"CL1.2", "CL2.0", "CL3.0"}) {
    INFO(std);
    CompileOptions table;
    table.clStd = std;
    CompileOptions full = table;
    full.fullHeader = true;
    CompileResult a = compileOk(src, "many.cl", table);
    CompileResult b = compileOk(src, "many.cl", full);
    CHECK(a.buildOptions == b.buildOptions);
    CHECK(reflectOk(a).size() == 1);
    // Same declarations, same mangling, same address spaces: byte-identical SPIR-V.
    // (Without the 1.2 prelude, wait_group_events took a generic pointer here.)
    CHECK(a.spirv == b.spirv);
  }
}
