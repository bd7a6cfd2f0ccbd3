// cpp-runner: load a .cgf, finalize it for a device, submit it with buffers this
// program owns, read the results back. The shortest complete use of the C++ runtime API.
//
//   cpp-runner saxpy.cgf [device] [--set a=3]
//
// Every external slot gets a buffer of its size, filled with 1.0f per float (or zero
// bytes); the program prints each external slot's first values and a sum afterwards.
#include <cgraph/backends/cpu/cpu_backend.h>
#include <cgraph/backends/opencl/opencl_backend.h>
#include <cgraph/format/reader.h>
#include <cgraph/runtime/runtime.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace cgraph;

// Errors are values: print one line and leave.
static int fail(const Error &e) {
  std::fprintf(stderr, "cpp-runner: error: %s\n", e.message().c_str());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cpp-runner FILE.cgf [DEVICE] [--set NAME=VALUE]...\n");
    return 2;
  }
  // 1. The graph: a checked, immutable description (nothing runs yet).
  Expected<Graph> graph = readCgfFile(argv[1]);
  if (!graph) return fail(graph.error());

  // 2. A registry of the backends this program links, and a device from it.
  rt::Registry registry;
  registry.add(cpu::makeCpuBackend());
  registry.add(opencl::makeOpenCLBackend());
  const std::string spec = argc > 2 && argv[2][0] != '-' ? argv[2] : "cpu";
  Expected<rt::Device *> device = registry.open(spec);
  if (!device) return fail(device.error());

  // 3. Parameters by name, as text (`--set a=3`); unnamed ones keep their defaults.
  rt::ParamValues params;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--set") == 0) {
      std::string kv = argv[++i];
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) return fail(makeError("--set takes NAME=VALUE"));
      if (Error e = params.set(*graph, kv.substr(0, eq), kv.substr(eq + 1))) return fail(e);
    }

  // 4. finalize: the expensive step, once (kernels compiled or taken from the cache).
  Expected<std::unique_ptr<rt::Executable>> exe = (*device)->finalize(*graph, rt::FinalizeOptions{});
  if (!exe) return fail(exe.error());

  // 5. Our own buffers, one per external slot, bound by slot index in a table.
  rt::BindingTable table;
  table.slots.resize(graph->slots.size());
  std::vector<std::unique_ptr<rt::Buffer>> buffers(graph->slots.size());
  for (size_t s = 0; s < graph->slots.size(); ++s) {
    const Slot &slot = graph->slots[s];
    if (slot.init != SlotInit::External) continue; // runtime-owned: the executable has it
    Expected<std::unique_ptr<rt::Buffer>> b = (*device)->allocate(slot.size, 64);
    if (!b) return fail(b.error().withContext("slot '" + slot.name + "'"));
    std::vector<float> ones(slot.size / 4, 1.0f);
    if (Error e = (*device)->write(**b, 0, ones.data(), ones.size() * 4)) return fail(e);
    buffers[s] = std::move(*b);
    table.slots[s].buffer = buffers[s].get();
  }

  // 6. enqueue: the cheap step, as often as needed; wait for its event.
  Expected<rt::EventPtr> event = (*exe)->enqueue(table, params);
  if (!event) return fail(event.error());
  if (Error e = (*event)->wait()) return fail(e);

  // 7. The results are in our buffers.
  for (size_t s = 0; s < buffers.size(); ++s) {
    if (!buffers[s]) continue;
    std::vector<float> v(graph->slots[s].size / 4);
    if (Error e = (*device)->read(*buffers[s], 0, v.data(), v.size() * 4)) return fail(e);
    double sum = 0;
    for (float f : v) sum += f;
    std::printf("%s: %s[0..2] = %g %g %g, sum %.6g\n", spec.c_str(), graph->slots[s].name.c_str(),
                v.size() > 0 ? v[0] : 0.f, v.size() > 1 ? v[1] : 0.f, v.size() > 2 ? v[2] : 0.f, sum);
  }
  return 0;
}
