// gpt_decode: greedy decoding with the decode-step graph through the C++ runtime API.
//
//   gpt_decode --cgf small.cgf --weights DIR [--backend cpu] [--batch 4] [--steps 64]
//              [--prompt-len 4]
//
// The executable is finalized once. Each step is one enqueue with parameters b and t;
// prompt tokens (seeded, the same as decode.py's for equal arguments is not promised)
// are written into the tokens buffer one position per step, after which the buffer the
// previous step wrote as `next` is bound as `tokens` (two buffers swap, nothing is
// copied). Prints each sequence's tokens and the tokens per second of the loop.
#include <cgraph/backends/cpu/cpu_backend.h>
#include <cgraph/format/reader.h>
#include <cgraph/runtime/npy.h>
#include <cgraph/runtime/runtime.h>
#ifdef GPT_DECODE_HAVE_OPENCL
#include <cgraph/backends/opencl/opencl_backend.h>
#endif
#ifdef GPT_DECODE_HAVE_CUDA
#include <cgraph/backends/cuda/cuda_backend.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace cgraph;

namespace {

struct Options {
  std::string cgf, weights, backend = "cpu";
  int batch = 4, steps = 64, promptLen = 4;
};

int fail(const Error &e) {
  std::fprintf(stderr, "gpt_decode: error: %s\n", e.message().c_str());
  return 1;
}

Expected<Options> parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return makeError("option '" + a + "' needs a value (or is unknown)");
    const char *v = argv[++i];
    if (a == "--cgf")
      o.cgf = v;
    else if (a == "--weights")
      o.weights = v;
    else if (a == "--backend")
      o.backend = v;
    else if (a == "--batch")
      o.batch = std::atoi(v);
    else if (a == "--steps")
      o.steps = std::atoi(v);
    else if (a == "--prompt-len")
      o.promptLen = std::atoi(v);
    else
      return makeError("unknown option '" + a + "'");
  }
  if (o.cgf.empty() || o.weights.empty())
    return makeError("usage: gpt_decode --cgf FILE --weights DIR [--backend SPEC] [--batch N] "
                     "[--steps N] [--prompt-len N]");
  return o;
}

// An integer of the graph's metadata (written by gen_graph.py).
Expected<long> metaInt(const Graph &g, const std::string &key) {
  for (const auto &kv : g.metadata)
    if (kv.first == key) return std::atol(kv.second.c_str());
  return makeError("graph '" + g.name + "' has no metadata '" + key +
                   "' (not made by gen_graph.py?)");
}

// The decode loop's state: the executable, a buffer per external slot, parameters.
struct Decoder {
  rt::Device *device = nullptr;
  const Graph *graph = nullptr;
  std::unique_ptr<rt::Executable> exe;
  std::vector<std::unique_ptr<rt::Buffer>> buffers; // by slot index
  rt::BindingTable table;
  uint32_t tokensSlot = 0, nextSlot = 0;

  Expected<uint32_t> slot(const std::string &name) const {
    for (uint32_t s = 0; s < graph->slots.size(); ++s)
      if (graph->slots[s].name == name) return s;
    return makeError("graph has no slot '" + name + "'");
  }

  // A buffer of the slot's declared size (its size at b = B_MAX, the default), zeroed,
  // or holding the .npy file of the same name when `dir` is given.
  Error allocate(uint32_t s, const std::string &dir) {
    const Slot &sl = graph->slots[s];
    std::vector<uint8_t> bytes(sl.size, 0);
    if (!dir.empty()) {
      Expected<std::vector<uint8_t>> data = rt::readDataFile(dir + "/" + sl.name + ".npy");
      if (!data) return data.error();
      if (data->size() != sl.size)
        return makeError(sl.name + ".npy has " + std::to_string(data->size()) + " bytes, slot '" +
                         sl.name + "' " + std::to_string(sl.size) + " (another config?)");
      bytes = std::move(*data);
    }
    Expected<std::unique_ptr<rt::Buffer>> b = device->allocate(sl.size, 64);
    if (!b) return b.error().withContext("slot '" + sl.name + "'");
    if (Error e = device->write(**b, 0, bytes.data(), bytes.size())) return e;
    buffers[s] = std::move(*b);
    table.slots[s].buffer = buffers[s].get();
    return Error::success();
  }

  Error setup(const std::string &weightsDir) {
    buffers.resize(graph->slots.size());
    table.slots.resize(graph->slots.size());
    Expected<uint32_t> tok = slot("tokens"), nxt = slot("next");
    if (!tok) return tok.error();
    if (!nxt) return nxt.error();
    tokensSlot = *tok;
    nextSlot = *nxt;
    for (uint32_t s = 0; s < graph->slots.size(); ++s) {
      if (graph->slots[s].init != SlotInit::External) continue;
      const std::string &n = graph->slots[s].name;
      const bool state =
          n == "tokens" || n == "next" || n == "logits" || n == "k_cache" || n == "v_cache";
      if (Error e = allocate(s, state ? std::string() : weightsDir)) return e;
    }
    return Error::success();
  }

  // One step: b sequences at position t; afterwards `next` is the tokens of the next step.
  Error step(int b, int t, rt::ParamValues &params) {
    if (Error e = params.set(*graph, "b", std::to_string(b))) return e;
    if (Error e = params.set(*graph, "t", std::to_string(t))) return e;
    Expected<rt::EventPtr> ev = exe->enqueue(table, params);
    if (!ev) return ev.error();
    if (Error e = (*ev)->wait()) return e;
    std::swap(table.slots[tokensSlot], table.slots[nextSlot]);
    return Error::success();
  }
};

int run(const Options &o) {
  Expected<Graph> graph = readCgfFile(o.cgf);
  if (!graph) return fail(graph.error());
  Expected<long> bmax = metaInt(*graph, "batch_max"), tmax = metaInt(*graph, "context_max"),
                 vocab = metaInt(*graph, "vocab");
  if (!bmax || !tmax || !vocab)
    return fail(!bmax ? bmax.error() : !tmax ? tmax.error() : vocab.error());
  if (o.batch < 1 || o.batch > *bmax || o.steps < 1 || o.steps > *tmax)
    return fail(makeError("--batch must be 1.." + std::to_string(*bmax) + " and --steps 1.." +
                          std::to_string(*tmax)));

  rt::Registry registry;
  registry.add(cpu::makeCpuBackend());
#ifdef GPT_DECODE_HAVE_OPENCL
  registry.add(opencl::makeOpenCLBackend());
#endif
#ifdef GPT_DECODE_HAVE_CUDA
  registry.add(cuda::makeCudaBackend());
#endif
  Expected<rt::Device *> device = registry.open(o.backend);
  if (!device) return fail(device.error());
  Decoder d;
  d.device = *device;
  d.graph = &*graph;
  Expected<std::unique_ptr<rt::Executable>> exe = d.device->finalize(*graph, rt::FinalizeOptions{});
  if (!exe) return fail(exe.error());
  d.exe = std::move(*exe);
  if (Error e = d.setup(o.weights)) return fail(e);

  const int promptLen = std::max(1, std::min(o.promptLen, o.steps));
  std::vector<int32_t> prompts(size_t(o.batch) * promptLen);
  for (int i = 0; i < o.batch; ++i)
    for (int t = 0; t < promptLen; ++t)
      prompts[size_t(i) * promptLen + t] = int32_t((1 + 131 * i + 17 * t) % *vocab);
  std::vector<int32_t> out(size_t(o.batch) * o.steps), column(o.batch), next(o.batch);
  rt::ParamValues params;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < o.steps; ++t) {
    if (t < promptLen) {
      for (int i = 0; i < o.batch; ++i)
        column[i] = prompts[size_t(i) * promptLen + t];
      if (Error e = d.device->write(*d.table.slots[d.tokensSlot].buffer, 0, column.data(),
                                    column.size() * 4))
        return fail(e);
    }
    if (Error e = d.step(o.batch, t, params)) return fail(e);
    // After the swap the tokens binding holds this step's `next`.
    if (Error e =
            d.device->read(*d.table.slots[d.tokensSlot].buffer, 0, next.data(), next.size() * 4))
      return fail(e);
    for (int i = 0; i < o.batch; ++i)
      out[size_t(i) * o.steps + t] = next[i];
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int i = 0; i < o.batch; ++i) {
    std::printf("seq %d: prompt", i);
    for (int t = 0; t < promptLen; ++t)
      std::printf(" %d", prompts[size_t(i) * promptLen + t]);
    std::printf(" | next");
    for (int t = 0; t < o.steps; ++t)
      std::printf(" %d", out[size_t(i) * o.steps + t]);
    std::printf("\n");
  }
  std::printf("%s: %d steps x %d sequences in %.3f s: %.1f tokens/s (%.1f steps/s)\n",
              o.backend.c_str(), o.steps, o.batch, seconds, o.steps * o.batch / seconds,
              o.steps / seconds);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Expected<Options> o = parseArgs(argc, argv);
  if (!o) return fail(o.error());
  return run(*o);
}
