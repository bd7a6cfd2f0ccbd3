// The cases of the graph conformance suite (graph_suite.h): each a graph, the initial
// contents of its external slots, and a sequence of submissions with what each must
// leave in those slots. Built with Catch2 assertions (REQUIREs that the kernels
// compile): call from a test only.
#pragma once

#include "cgraph/model.h"
#include "cgraph/runtime/runtime.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cgraph::conformance {

using Bytes = std::vector<uint8_t>;

// A change before a submission: NodeUpdate with its node named (found with
// Executable::findNode, since flattening renumbers nodes).
struct NamedUpdate {
  std::string node;
  rt::NodeUpdate update;
};

struct Submission {
  std::vector<uint64_t> params;     // parameter bits by index; empty: the defaults
  std::vector<NamedUpdate> updates; // applied (Executable::update) before it
  bool fails = false;               // Event::wait returns an error; `want` is not checked
  std::string failure;              // text the error's message contains (with `fails`)
  std::vector<std::pair<uint32_t, Bytes>> want; // external slot -> its contents after the run
  std::string hostLine;             // a line the host tasks must emit (empty: none)
};

struct GraphCase {
  std::string name;
  Graph graph;
  std::vector<Bytes> inputs; // per slot: an external slot's contents before the first run
  std::vector<Submission> runs;
};

std::vector<GraphCase> graphCases();
std::vector<GraphCase> conditionalCases(); // graph_conditionals.cpp

// y[i] += v, one work-item per element (both files' cases use it).
inline constexpr const char *kAddValueKernel = R"CL(
__kernel void add_value(__global float *y, float v) {
  y[get_global_id(0)] += v;
}
)CL";

// Floats as bytes and back (the cases' slots hold f32 or u32 words).
Bytes floatBytes(const std::vector<float> &v);
Bytes wordBytes(const std::vector<uint32_t> &v);

} // namespace cgraph::conformance
