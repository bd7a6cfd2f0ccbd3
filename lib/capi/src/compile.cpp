// Compiling graph descriptions (lib/description), fusing graphs (lib/fusion) and saving
// graphs as .cgf files.
//
// A compiled or fused graph goes through the .cgf encoder and reader once before the
// caller sees it, so that it is exactly the graph a program gets by loading the file
// cgc or cgfuse would have written (and cgraph_graph_save writes that file back).
#include "internal.h"

#include "cgraph/description/description.h"
#include "cgraph/format/output_file.h"
#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"
#include "cgraph/fusion/fusion.h"

#include <cstring>

namespace cgraph::capi {

namespace {

cgraph_status adopt(Expected<Graph> g, cgraph_graph *out) {
  if (!g) return fail(g.error());
  auto h = std::make_unique<cgraph_graph_s>();
  h->graph = std::move(*g);
  h->slots = describeSlots(h->graph);
  *out = h.release();
  return CGRAPH_OK;
}

// `g` as a program loading its .cgf file sees it.
Expected<Graph> throughFile(const Graph &g) {
  Expected<std::vector<uint8_t>> bytes = writeCgf(g);
  if (!bytes) return bytes.error();
  return readCgf(bytes->data(), bytes->size());
}

// `count` C strings; a null array or element is an Error naming `what`.
Error strings(const char *const *list, size_t count, const char *what, std::vector<std::string> *out) {
  if (count && !list) return makeError(std::string(what) + " is null with a count of " + std::to_string(count));
  for (size_t i = 0; i < count; ++i) {
    if (!list[i]) return makeError(std::string(what) + "[" + std::to_string(i) + "] is null");
    out->push_back(list[i]);
  }
  return Error::success();
}

Error descriptionOptions(const cgraph_compile_options &o, desc::DescriptionOptions *out) {
  CGRAPH_RETURN_IF_ERROR(strings(o.include_dirs, o.include_dir_count, "include_dirs", &out->compile.includeDirs));
  CGRAPH_RETURN_IF_ERROR(strings(o.allow_dirs, o.allow_dir_count, "allow_dirs", &out->allowDirs));
  CGRAPH_RETURN_IF_ERROR(strings(o.defines, o.define_count, "defines", &out->compile.defines));
  if (o.cl_std) {
    const std::string v = o.cl_std;
    if (v != "CL1.2" && v != "CL2.0" && v != "CL3.0")
      return makeError("cl_std must be \"CL1.2\", \"CL2.0\" or \"CL3.0\", not \"" + v + "\"");
    out->compile.clStd = v;
  }
  out->keepSource = o.keep_source != 0;
  out->allowDirsHint = "add its directory to allow_dirs";
  return Error::success();
}

// Every diagnostic, kept for the last-error message and passed to the caller's function.
struct Collector {
  const cgraph_compile_options &options;
  std::string text;
  void operator()(const desc::Diag &d) {
    const std::string line = desc::formatDiag(d);
    if (line.empty()) return;
    if (options.diagnostic) options.diagnostic(options.user_data, line.c_str());
    text += (text.empty() ? "" : "\n") + line;
  }
};

// `compile` is compileDescription or compileDescriptionText bound to its input.
template <class F> cgraph_status compileWith(const cgraph_compile_options *options, cgraph_graph *out, F compile) {
  const cgraph_compile_options opts = options ? *options : cgraph_compile_options_default();
  desc::DescriptionOptions dopts;
  if (Error e = descriptionOptions(opts, &dopts)) return fail(e);
  Collector collector{opts, {}};
  desc::DiagSink sink([&collector](const desc::Diag &d) { collector(d); });
  Expected<Graph> g = compile(dopts, sink);
  if (!g) return fail(static_cast<cgraph_status>(static_cast<int>(g.error().code())),
                      collector.text.empty() ? g.error().message() : collector.text);
  return adopt(throughFile(*g), out);
}

Error fuseOptions(const cgraph_fuse_options &o, fusion::FuseOptions *out) {
  std::vector<std::string> groups;
  CGRAPH_RETURN_IF_ERROR(strings(o.groups, o.group_count, "groups", &groups));
  for (const std::string &g : groups) out->groups.push_back(fusion::GroupRequest(fusion::splitNames(g)));
  CGRAPH_RETURN_IF_ERROR(strings(o.internalize, o.internalize_count, "internalize", &out->scratch));
  out->autoFuse = o.auto_fuse != 0;
  out->maxGroupKernels = o.max_group;
  if (out->groups.empty() && !out->autoFuse)
    return makeError("nothing to fuse: auto_fuse is 0 and no groups are given");
  return Error::success();
}

} // namespace

} // namespace cgraph::capi

using namespace cgraph;
using capi::fail;
using capi::guard;
using capi::nullArgument;

extern "C" {

cgraph_compile_options cgraph_compile_options_default(void) {
  cgraph_compile_options o;
  std::memset(&o, 0, sizeof o);
  return o;
}

cgraph_status cgraph_graph_compile_file(const char *path, const cgraph_compile_options *options,
                                        cgraph_graph *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!path) return nullArgument("path");
    return capi::compileWith(options, out, [&](const desc::DescriptionOptions &o, desc::DiagSink &sink) {
      return desc::compileDescription(path, o, sink);
    });
  });
}

cgraph_status cgraph_graph_compile_string(const char *json, const char *base_dir,
                                          const cgraph_compile_options *options, cgraph_graph *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!json) return nullArgument("json");
    const std::string name = options && options->source_name ? options->source_name : "<string>";
    const std::string dir = base_dir ? base_dir : "";
    return capi::compileWith(options, out, [&](const desc::DescriptionOptions &o, desc::DiagSink &sink) {
      return desc::compileDescriptionText(json, name, dir, o, sink);
    });
  });
}

cgraph_fuse_options cgraph_fuse_options_default(void) {
  cgraph_fuse_options o;
  std::memset(&o, 0, sizeof o);
  o.auto_fuse = 1;
  o.max_group = fusion::FuseOptions().maxGroupKernels;
  return o;
}

cgraph_status cgraph_graph_fuse(cgraph_graph graph, const cgraph_fuse_options *options, cgraph_graph *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!graph) return nullArgument("graph");
    const cgraph_fuse_options opts = options ? *options : cgraph_fuse_options_default();
    fusion::FuseOptions fopts;
    if (Error e = capi::fuseOptions(opts, &fopts)) return fail(e);
    Graph g = graph->graph;
    Expected<fusion::FuseReport> report = fusion::fuseGraph(g, fopts);
    if (!report) return fail(report.error());
    if (opts.remark)
      for (const fusion::Remark &r : report->remarks) {
        const std::string line = "[" + r.group + "] " + fusion::remarkKindName(r.kind) + ": " + r.message;
        opts.remark(opts.user_data, line.c_str());
      }
    return capi::adopt(capi::throughFile(g), out);
  });
}

cgraph_status cgraph_graph_save(cgraph_graph graph, const char *path) {
  return guard([&] {
    if (!graph) return nullArgument("graph");
    if (!path) return nullArgument("path");
    return fail(writeCgfOutput(graph->graph, path));
  });
}

} // extern "C"
