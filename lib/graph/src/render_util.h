// Text fragments shared by the DOT, JSON and listing renderers (not installed).
#pragma once

#include <cgraph/model.h>

#include <string>

namespace cgraph {
namespace detail {

std::string slotRef(const Graph &g, uint32_t s);     // slot name, or "#7"
std::string paramRef(const Graph &g, uint32_t p);    // "$name", or "$#7"
std::string dimText(const Graph &g, const Dim &d);   // "64" or "$n"
std::string rangeText(const Graph &g, const NDRange &r); // "global (64,8) local (8,8)"
std::string scalarText(ScalarType t, uint64_t bits);  // "2.5", "-3", ...
std::string argText(const Graph &g, const Arg &a);   // "a+16", "i32 3", "$n", "local 256"
std::string usageText(uint32_t usage);               // "read|write|transfer" or "-"
const char *initName(SlotInit i);
std::string hexBytes(const uint8_t *p, size_t n);

} // namespace detail
} // namespace cgraph
