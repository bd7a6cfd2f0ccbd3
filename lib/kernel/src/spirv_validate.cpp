#include <cstring>
#include <string>
#include <vector>

#include <spirv-tools/libspirv.hpp>

#include "cgraph/kernel/spirv.h"

namespace cgraph {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203u;
constexpr size_t kHeaderWords = 5;

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// The OpenCL environments only admit the SPIR-V versions their OpenCL version
// consumes. SPIR-V 1.0 is checked against OpenCL 2.0 rather than 1.2 because the
// 1.2 profile refuses the GenericPointer capability that OpenCL C 2.0/3.0 kernels
// need; whether a device has a capability is the backend's question, not ours.
spv_target_env envForVersion(uint32_t version) {
  uint32_t major = (version >> 16) & 0xff, minor = (version >> 8) & 0xff;
  if (major != 1) return SPV_ENV_UNIVERSAL_1_6; // rejected by the validator with its reason
  switch (minor) {
  case 0: return SPV_ENV_OPENCL_2_0;
  case 1: return SPV_ENV_OPENCL_2_1;
  case 2: return SPV_ENV_OPENCL_2_2;
  case 3: return SPV_ENV_UNIVERSAL_1_3;
  case 4: return SPV_ENV_UNIVERSAL_1_4;
  case 5: return SPV_ENV_UNIVERSAL_1_5;
  default: return SPV_ENV_UNIVERSAL_1_6;
  }
}

// Int64Atomics comes from cl_khr_int64_base_atomics / _extended_atomics, but
// SPIRV-Tools' OpenCL environments (1.2, 2.0, 2.1, 2.2, full and embedded) accept only
// the capabilities the OpenCL environment spec lists for the core profile, so they
// reject it ("Capability Int64Atomics is not allowed by OpenCL 2.0/2.1 Full Profile").
// A module declaring it is checked against the universal environment of its SPIR-V
// version instead: every core rule still applies, only the OpenCL profile's capability
// allowlist does not (and whether a device has the extension is the backend's question).
constexpr uint32_t kOpCapability = 17;
constexpr uint32_t kCapabilityInt64Atomics = 12;

bool declaresInt64Atomics(const std::vector<uint32_t> &words) {
  // OpCapability instructions come first; stop at the first other (or malformed) one.
  for (size_t i = kHeaderWords; i < words.size();) {
    uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (opcode != kOpCapability || count < 2 || i + count > words.size()) return false;
    if (words[i + 1] == kCapabilityInt64Atomics) return true;
    i += count;
  }
  return false;
}

spv_target_env envForModule(const std::vector<uint32_t> &words) {
  spv_target_env env = envForVersion(words[1]);
  if (!declaresInt64Atomics(words)) return env;
  switch (env) {
  case SPV_ENV_OPENCL_2_0: return SPV_ENV_UNIVERSAL_1_0;
  case SPV_ENV_OPENCL_2_1: return SPV_ENV_UNIVERSAL_1_1;
  case SPV_ENV_OPENCL_2_2: return SPV_ENV_UNIVERSAL_1_2;
  default: return env;
  }
}

} // namespace

Error validateSpirv(const uint8_t *data, size_t size, const std::string &name) {
  if (data == nullptr || size == 0) return makeError(name + ": invalid SPIR-V: empty module");
  if (size % 4 != 0)
    return makeError(name + ": invalid SPIR-V: size " + std::to_string(size) +
                     " is not a multiple of 4");
  if (size < kHeaderWords * 4)
    return makeError(name + ": invalid SPIR-V: " + std::to_string(size) +
                     " bytes is shorter than the 20-byte header");
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), data, size);
  if (words[0] != kSpirvMagic) {
    if (__builtin_bswap32(words[0]) == kSpirvMagic)
      return makeError(name + ": invalid SPIR-V: big-endian modules are not supported");
    return makeError(name + ": invalid SPIR-V: bad magic " + hex32(words[0]) + " (expected " +
                     hex32(kSpirvMagic) + ")");
  }

  std::string messages;
  spvtools::SpirvTools tools(envForModule(words));
  tools.SetMessageConsumer([&messages](spv_message_level_t level, const char *, const spv_position_t &pos,
                                       const char *message) {
    if (level > SPV_MSG_WARNING) return;
    if (!messages.empty()) messages += "; ";
    std::string text = message ? message : "(no message)";
    // The validator appends the offending instruction on its own lines; keep one line.
    for (char &c : text)
      if (c == '\n') c = ' ';
    while (!text.empty() && text.back() == ' ') text.pop_back();
    messages += text;
    if (pos.index != 0) messages += " (word " + std::to_string(pos.index) + ")";
  });
  bool ok = false;
  try {
    ok = tools.Validate(words.data(), words.size());
  } catch (const std::exception &e) {
    return makeError(name + ": invalid SPIR-V: validator failed: " + e.what());
  }
  if (!ok) {
    if (messages.empty()) messages = "rejected by the validator";
    return makeError(name + ": invalid SPIR-V: " + messages);
  }
  return Error::success();
}

} // namespace cgraph
