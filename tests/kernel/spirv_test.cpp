// validateSpirv on broken input, spirvToLLVM and spirvToSpirBitcode on real modules.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>

#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"
#include "cgraph/kernel/spirv_to_llvm.h"
#include "kernel_sources.h"

using namespace cgraph;

namespace {

std::vector<uint8_t> compiled(const char *src, const char *file) {
  Expected<CompileResult> r = compileOpenCL(src, file, {});
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  return r->spirv;
}

std::vector<uint8_t> wordsToBytes(const std::vector<uint32_t> &w) {
  std::vector<uint8_t> b(w.size() * 4);
  std::memcpy(b.data(), w.data(), b.size());
  return b;
}

std::string validationMessage(const std::vector<uint8_t> &b) {
  Error e = validateSpirv(b.data(), b.size(), "test.spv");
  REQUIRE(e.failed());
  return e.message();
}

bool callsFunction(const llvm::Module &m, const std::string &callee) {
  for (const llvm::Function &f : m)
    for (const llvm::BasicBlock &bb : f)
      for (const llvm::Instruction &i : bb)
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(&i))
          if (call->getCalledFunction() && call->getCalledFunction()->getName() == callee) return true;
  return false;
}

} // namespace

TEST_CASE("validateSpirv rejects malformed modules with a clear message", "[kernel]") {
  std::vector<uint8_t> good = compiled(test::kSaxpy, "saxpy.cl");
  REQUIRE_FALSE(validateSpirv(good.data(), good.size(), "saxpy.spv").failed());

  SECTION("empty") {
    CHECK(validateSpirv(nullptr, 0, "test.spv").message() == "test.spv: invalid SPIR-V: empty module");
  }
  SECTION("size not a multiple of 4") {
    std::vector<uint8_t> b(good.begin(), good.begin() + 22);
    CHECK(validationMessage(b) == "test.spv: invalid SPIR-V: size 22 is not a multiple of 4");
  }
  SECTION("shorter than the header") {
    std::vector<uint8_t> b(good.begin(), good.begin() + 12);
    CHECK(validationMessage(b).find("shorter than the 20-byte header") != std::string::npos);
  }
  SECTION("wrong magic") {
    std::vector<uint8_t> b = good;
    b[0] ^= 0xff;
    CHECK(validationMessage(b).find("test.spv: invalid SPIR-V: bad magic 0x") == 0);
  }
  SECTION("big-endian magic") {
    std::vector<uint8_t> b = wordsToBytes({0x03022307u, 0x00000100u, 0, 1, 0});
    CHECK(validationMessage(b).find("big-endian") != std::string::npos);
  }
  SECTION("truncated in the middle of an instruction") {
    std::vector<uint8_t> b(good.begin(), good.begin() + (good.size() / 8) * 4);
    CHECK(validationMessage(b).find("test.spv: invalid SPIR-V: ") == 0);
  }
  SECTION("valid header, garbage body") {
    std::vector<uint32_t> w = {0x07230203u, 0x00010000u, 0, 100, 0, 0xdeadbeefu, 0x12345678u, 0xffffffffu};
    CHECK(validationMessage(wordsToBytes(w)).find("test.spv: invalid SPIR-V: ") == 0);
  }
  SECTION("random words after a valid header") {
    std::mt19937 rng(42);
    for (int round = 0; round < 200; ++round) {
      std::vector<uint32_t> w = {0x07230203u, 0x00010000u, 0, 64, 0};
      size_t n = rng() % 64;
      for (size_t i = 0; i < n; ++i) w.push_back(rng());
      std::vector<uint8_t> b = wordsToBytes(w);
      Error e = validateSpirv(b.data(), b.size(), "r.spv");
      // An empty body is a valid-looking header only; anything else must not pass.
      if (n > 0) CHECK(e.failed());
    }
  }
  SECTION("one flipped word in a real module never crashes reflection") {
    const int rounds = std::getenv("CGRAPH_MUTATION_ROUNDS") ? std::atoi(std::getenv("CGRAPH_MUTATION_ROUNDS")) : 300;
    std::mt19937 rng(std::getenv("CGRAPH_MUTATION_SEED") ? std::atoi(std::getenv("CGRAPH_MUTATION_SEED")) : 7);
    for (int round = 0; round < rounds; ++round) {
      std::vector<uint8_t> b = good;
      size_t word = 5 + rng() % (b.size() / 4 - 5);
      uint32_t v = rng();
      std::memcpy(b.data() + word * 4, &v, 4);
      Expected<std::vector<Kernel>> k = reflectKernels(b.data(), b.size());
      if (!k) CHECK(k.error().message().find("spirv: ") == 0);
    }
  }
}

TEST_CASE("spirvToLLVM gives back the kernel with OpenCL-mangled builtins", "[kernel]") {
  std::vector<uint8_t> spv = compiled(test::kLocalReduce, "reduce.cl");
  llvm::LLVMContext ctx;
  Expected<std::unique_ptr<llvm::Module>> m = spirvToLLVM(ctx, spv.data(), spv.size());
  INFO((m ? std::string() : m.error().message()));
  REQUIRE(m.ok());
  llvm::Function *f = (*m)->getFunction("reduce");
  REQUIRE(f != nullptr);
  CHECK(f->getCallingConv() == llvm::CallingConv::SPIR_KERNEL);
  CHECK((*m)->getTargetTriple() == "spir64-unknown-unknown");
  CHECK(callsFunction(**m, "_Z13get_global_idj"));
  CHECK(callsFunction(**m, "_Z12get_local_idj"));
  CHECK(callsFunction(**m, "_Z7barrierj"));
  // The __local array is a module-level addrspace(3) global.
  bool localGlobal = false;
  for (const llvm::GlobalVariable &g : (*m)->globals())
    if (g.getAddressSpace() == 3) localGlobal = true;
  CHECK(localGlobal);

  // And invalid input is refused before the translator sees it.
  std::vector<uint8_t> bad(spv.begin(), spv.begin() + 40);
  Expected<std::unique_ptr<llvm::Module>> m2 = spirvToLLVM(ctx, bad.data(), bad.size());
  REQUIRE_FALSE(m2.ok());
  CHECK(m2.error().message().find("invalid SPIR-V") != std::string::npos);
}

TEST_CASE("spirvToSpirBitcode gives parseable spir64 bitcode", "[kernel]") {
  std::vector<uint8_t> spv = compiled(test::kSaxpy, "saxpy.cl");
  Expected<std::vector<uint8_t>> bc = spirvToSpirBitcode(spv.data(), spv.size());
  INFO((bc ? std::string() : bc.error().message()));
  REQUIRE(bc.ok());
  llvm::LLVMContext ctx;
  auto buf = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(bc->data()), bc->size()), "saxpy.bc", false);
  llvm::Expected<std::unique_ptr<llvm::Module>> m = llvm::parseBitcodeFile(buf->getMemBufferRef(), ctx);
  REQUIRE(static_cast<bool>(m));
  CHECK((*m)->getTargetTriple() == "spir64-unknown-unknown");
  REQUIRE((*m)->getFunction("saxpy") != nullptr);
  CHECK(callsFunction(**m, "_Z13get_global_idj"));
}

TEST_CASE("compileOpenCL's own spir64 bitcode parses and carries no optnone", "[kernel]") {
  Expected<CompileResult> r = compileOpenCL(test::kSaxpy, "saxpy.cl", {});
  REQUIRE(r.ok());
  llvm::LLVMContext ctx;
  auto buf = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(r->spirBitcode.data()), r->spirBitcode.size()),
      "saxpy.bc", false);
  llvm::Expected<std::unique_ptr<llvm::Module>> m = llvm::parseBitcodeFile(buf->getMemBufferRef(), ctx);
  REQUIRE(static_cast<bool>(m));
  CHECK((*m)->getTargetTriple() == "spir64-unknown-unknown");
  llvm::Function *f = (*m)->getFunction("saxpy");
  REQUIRE(f != nullptr);
  CHECK_FALSE(f->hasFnAttribute(llvm::Attribute::OptimizeNone));
  CHECK_FALSE(f->hasFnAttribute(llvm::Attribute::NoInline));
}

// cl_khr_int64_base_atomics makes the translator declare Int64Atomics, which
// SPIRV-Tools accepts only in its universal environments; such a module must still
// validate, reflect and read back.
TEST_CASE("a module with 64-bit atomics validates and reflects", "[kernel]") {
  const std::string src = "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
                          "__kernel void add64(__global long *c, long v) { atom_add(c, v); }\n";
  Expected<CompileResult> r = compileOpenCL(src, "atom64.cl", {});
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  CHECK_FALSE(validateSpirv(r->spirv.data(), r->spirv.size(), "atom64.spv"));
  Expected<std::vector<Kernel>> ks = reflectKernels(r->spirv.data(), r->spirv.size());
  REQUIRE(ks.ok());
  REQUIRE(ks->size() == 1);
  CHECK((*ks)[0].name == "add64");
  REQUIRE((*ks)[0].params.size() == 2);
  CHECK((*ks)[0].params[0].kind == ParamKind::GlobalBuffer);
  CHECK((*ks)[0].params[1].size == 8);
  // The capability is really there: the words of OpCapability Int64Atomics (= 12).
  bool found = false;
  for (size_t w = 5; w + 1 < r->spirv.size() / 4; ++w) {
    uint32_t op, arg;
    std::memcpy(&op, r->spirv.data() + 4 * w, 4);
    std::memcpy(&arg, r->spirv.data() + 4 * w + 4, 4);
    if (op == ((2u << 16) | 17u) && arg == 12u) found = true;
  }
  CHECK(found);
}
