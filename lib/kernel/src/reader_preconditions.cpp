// Each rule here was found by mutating real modules (tests/kernel/spirv_test.cpp)
// until the translator's reader aborted on something SPIRV-Tools had validated:
//  - a non-OpenCL memory model (Vulkan/GLSL modules): the reader assumes kernels;
//  - an Alignment decoration or Aligned memory access that is not a power of two
//    (llvm::Align asserts);
//  - a literal string whose padding bytes after the terminating NUL are not zero
//    (the reader's string decoder asserts).
#include <cstring>
#include <string>
#include <vector>

#include <spirv-tools/libspirv.h>

#include "internal.h"

namespace cgraph::kernel_detail {
namespace {

constexpr uint32_t kOpMemoryModel = 14;
constexpr uint32_t kOpDecorate = 71, kOpMemberDecorate = 72;
constexpr uint32_t kMemoryModelOpenCL = 2;
constexpr uint32_t kDecorationAlignment = 44;
constexpr uint32_t kMemoryAccessAligned = 0x2;

bool isPowerOfTwo(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

struct ScanState {
  std::string problem;
  size_t wordIndex = 5; // of the current instruction
  bool sawMemoryModel = false;
};

bool stringPaddingIsZero(const uint32_t *words, uint16_t count) {
  const auto *bytes = reinterpret_cast<const unsigned char *>(words);
  size_t n = size_t(count) * 4, i = 0;
  while (i < n && bytes[i] != 0) ++i;
  for (; i < n; ++i)
    if (bytes[i] != 0) return false;
  return true;
}

std::string checkInstruction(ScanState &st, const spv_parsed_instruction_t &inst) {
  const uint32_t *w = inst.words;
  if (inst.opcode == kOpMemoryModel && inst.num_words >= 3) {
    st.sawMemoryModel = true;
    if (w[2] != kMemoryModelOpenCL)
      return "not an OpenCL kernel module (memory model " + std::to_string(w[2]) + ", expected OpenCL)";
  }
  if (inst.opcode == kOpDecorate && inst.num_words >= 4 && w[2] == kDecorationAlignment &&
      !isPowerOfTwo(w[3]))
    return "alignment " + std::to_string(w[3]) + " is not a power of two";
  if (inst.opcode == kOpMemberDecorate && inst.num_words >= 5 && w[3] == kDecorationAlignment &&
      !isPowerOfTwo(w[4]))
    return "alignment " + std::to_string(w[4]) + " is not a power of two";
  for (uint16_t i = 0; i < inst.num_operands; ++i) {
    const spv_parsed_operand_t &op = inst.operands[i];
    if (op.type == SPV_OPERAND_TYPE_LITERAL_STRING && !stringPaddingIsZero(w + op.offset, op.num_words))
      return "string operand has non-zero padding";
    bool memoryAccess = op.type == SPV_OPERAND_TYPE_MEMORY_ACCESS ||
                        op.type == SPV_OPERAND_TYPE_OPTIONAL_MEMORY_ACCESS;
    // The Aligned literal is the operand right after the mask (Volatile has none).
    if (memoryAccess && (w[op.offset] & kMemoryAccessAligned) && i + 1 < inst.num_operands &&
        !isPowerOfTwo(w[inst.operands[i + 1].offset]))
      return "aligned memory access " + std::to_string(w[inst.operands[i + 1].offset]) +
             " is not a power of two";
  }
  return {};
}

spv_result_t onInstruction(void *user, const spv_parsed_instruction_t *inst) {
  auto &st = *static_cast<ScanState *>(user);
  std::string problem = checkInstruction(st, *inst);
  if (!problem.empty()) {
    st.problem = "word " + std::to_string(st.wordIndex) + ": " + problem;
    return SPV_ERROR_INVALID_BINARY;
  }
  st.wordIndex += inst->num_words;
  return SPV_SUCCESS;
}

} // namespace

Error checkReaderPreconditions(const uint8_t *data, size_t size, const std::string &name) {
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), data, size);
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  ScanState st;
  spv_diagnostic diag = nullptr;
  spv_result_t rc = spvBinaryParse(ctx, &st, words.data(), words.size(), nullptr, onInstruction, &diag);
  std::string parseError = (diag && diag->error) ? diag->error : "";
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  if (!st.problem.empty()) return makeError(name + ": " + st.problem);
  if (rc != SPV_SUCCESS) return makeError(name + ": cannot parse SPIR-V: " + parseError);
  if (!st.sawMemoryModel) return makeError(name + ": not an OpenCL kernel module (no OpMemoryModel)");
  return Error::success();
}

} // namespace cgraph::kernel_detail
