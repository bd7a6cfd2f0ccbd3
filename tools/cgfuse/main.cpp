// cgfuse: offline kernel fusion of a .cgf file (lib/fusion). Thin CLI: options ->
// cgraph::fusion::fuseGraph -> .cgf; remarks on stderr (--remarks) or in --json.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <csignal>
#include <fstream>
#include <iostream>
#include <new>

#include "cgraph/format/output_file.h"
#include "cgraph/format/version_text.h"
#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"
#include "cgraph/fusion/fusion.h"

#ifndef CGRAPH_VERSION
#define CGRAPH_VERSION "0.0.0"
#endif

namespace {

using namespace cgraph;

// Reads a --plan file: {"auto": bool, "groups": [{"nodes": [...], "internalize":
// [name or {"slot": name, "to": "private"|"local"|"any"}, ...], "constants": {"param":
// value}, "barriers": bool}]}. Unknown keys are errors.
Error readPlan(const std::string &path, fusion::FuseOptions &opts) {
  std::ifstream in(path);
  if (!in) return makeError(path + ": cannot open the plan file");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return makeError(path + ": not a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "auto" && it.key() != "groups")
      return makeError(path + ": unknown key '" + it.key() + "'");
  if (j.contains("auto")) {
    if (!j["auto"].is_boolean()) return makeError(path + ": 'auto' must be true or false");
    opts.autoFuse = opts.autoFuse || j["auto"].get<bool>();
  }
  if (!j.contains("groups")) return Error();
  if (!j["groups"].is_array()) return makeError(path + ": 'groups' must be an array");
  size_t gi = 0;
  for (const nlohmann::json &gj : j["groups"]) {
    std::string where = path + ": groups[" + std::to_string(gi++) + "]";
    if (!gj.is_object()) return makeError(where + ": not an object");
    fusion::GroupRequest gr;
    for (auto it = gj.begin(); it != gj.end(); ++it) {
      const std::string &k = it.key();
      const nlohmann::json &v = it.value();
      if (k == "internalize") {
        // names, or {"slot": name, "to": "private" | "local" | "any"}
        if (!v.is_array())
          return makeError(where + ": 'internalize' must be an array of slot names or "
                                   "{\"slot\": name, \"to\": \"private\"|\"local\"} objects");
        gr.internalizeListed = true;
        for (const nlohmann::json &n : v) {
          if (n.is_string()) {
            gr.internalize.push_back(n.get<std::string>());
            gr.internalizeTo.push_back(fusion::Memory::Any);
            continue;
          }
          if (!n.is_object() || !n.contains("slot") || !n["slot"].is_string())
            return makeError(where + ": an 'internalize' entry must be a slot name or an object "
                                     "with a 'slot' name");
          fusion::Memory to = fusion::Memory::Any;
          for (auto e = n.begin(); e != n.end(); ++e) {
            if (e.key() == "slot") continue;
            if (e.key() != "to")
              return makeError(where + ": internalize: unknown key '" + e.key() + "'");
            std::string t = e.value().is_string() ? e.value().get<std::string>() : "";
            if (t == "private")
              to = fusion::Memory::Private;
            else if (t == "local")
              to = fusion::Memory::Local;
            else if (t != "any")
              return makeError(where + ": internalize: 'to' must be \"private\", \"local\" or "
                                       "\"any\"");
          }
          gr.internalize.push_back(n["slot"].get<std::string>());
          gr.internalizeTo.push_back(to);
        }
      } else if (k == "nodes") {
        if (!v.is_array()) return makeError(where + ": '" + k + "' must be an array of names");
        std::vector<std::string> names;
        for (const nlohmann::json &n : v) {
          if (!n.is_string()) return makeError(where + ": '" + k + "' must be an array of names");
          names.push_back(n.get<std::string>());
        }
        gr.nodes = names;
      } else if (k == "constants") {
        if (!v.is_object())
          return makeError(where + ": 'constants' must map parameter names to values");
        for (auto c = v.begin(); c != v.end(); ++c) {
          if (!c.value().is_number() && !c.value().is_string())
            return makeError(where + ": constant '" + c.key() + "' must be a number");
          gr.constants.push_back(
              {c.key(), c.value().is_string() ? c.value().get<std::string>() : c.value().dump()});
        }
      } else if (k == "barriers") {
        if (!v.is_boolean()) return makeError(where + ": 'barriers' must be true or false");
        gr.noBarriers = !v.get<bool>();
      } else {
        return makeError(where + ": unknown key '" + k + "'");
      }
    }
    if (gr.nodes.empty()) return makeError(where + ": 'nodes' is missing or empty");
    opts.groups.push_back(std::move(gr));
  }
  return Error();
}

int run(int argc, char **argv) {
  CLI::App app{"cgfuse: fuse chains of kernel nodes of a .cgf file into single kernels", "cgfuse"};
  app.set_version_flag("--version",
                       std::string("cgfuse ") + CGRAPH_VERSION + " (cgraph, LLVM 14; " + cgfVersionText() + ")");
  std::string input, output, printIR, planFile;
  std::vector<std::string> groups, scratch, paramValues;
  uint32_t maxGroup = fusion::FuseOptions().maxGroupKernels;
  bool autoFuse = false, autoLinear = false, remarks = false, json = false, noConstants = false,
       noInternalize = false, noRestrict = false;
  app.add_option("input", input, ".cgf file")->required();
  app.add_option("-o", output,
                 "output .cgf file ('-' for stdout). A file is replaced atomically; a device or FIFO "
                 "is written to; a symbolic link is followed (the file it points to is replaced); "
                 "directories and sockets are refused")
      ->required();
  app.add_option("--fuse", groups, "fuse the named kernel nodes, in this order (repeatable)")
      ->type_name("A,B,...")
      ->allow_extra_args(false)
      ->take_all();
  app.add_option(
         "--plan", planFile,
         "JSON plan: groups with per-slot internalization requests, constant parameters, barriers")
      ->type_name("FILE");
  app.add_flag("--auto", autoFuse, "find and fuse chains of kernel nodes");
  app.add_flag("--auto-linear", autoLinear,
               "let --auto take kernels of another shape than the fused range (linear "
               "work-item remapping)");
  app.add_flag("--remarks", remarks, "print what was fused and why the rest was not (stderr)");
  app.add_flag("--json", json, "print a JSON report on stdout");
  app.add_flag("--no-constants", noConstants, "keep literal scalar arguments as parameters");
  app.add_option("--internalize", scratch,
                 "scratch slots: transient slots used only inside a fused group that may leave "
                 "the graph (private or local memory); no other slot leaves it (repeatable)")
      ->type_name("SLOT[,SLOT...]")
      ->allow_extra_args(false)
      ->take_all();
  app.add_flag("--no-internalize", noInternalize,
               "keep every slot in global memory, scratch slots too");
  app.add_option("--max-group", maxGroup,
                 "the most kernels one --auto chain takes; longer chains are cut (0: no limit)")
      ->type_name("N");
  app.add_option("--param", paramValues,
                 "specialize: give parameter NAME this value before fusion (stored expressions "
                 "over it are folded, its nd-range sizes and arguments become literals); "
                 "repeatable")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false)
      ->take_all();
  app.add_flag(
      "--no-restrict", noRestrict,
      "do not mark parameters of distinct slots noalias (the runtime refuses overlapping bindings, "
      "which is what makes it sound)");
  app.add_option("--print-ir", printIR,
                 "write the fused modules' LLVM IR (before SPIR-V) to FILE ('-': stdout)")
      ->type_name("FILE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "cgfuse: error: " << e.what() << "\n(run 'cgfuse --help' for usage)\n";
    return 2;
  }
  fusion::FuseOptions opts;
  for (const std::string &g : groups)
    opts.groups.push_back(fusion::GroupRequest(fusion::splitNames(g)));
  opts.autoFuse = autoFuse;
  opts.autoLinear = autoLinear;
  opts.maxGroupKernels = maxGroup;
  for (const std::string &s : scratch)
    for (const std::string &name : fusion::splitNames(s))
      opts.scratch.push_back(name);
  for (const std::string &pv : paramValues) {
    size_t eq = pv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "cgfuse: error: --param '" << pv << "': expected NAME=VALUE\n";
      return 2;
    }
    opts.paramValues.push_back({pv.substr(0, eq), pv.substr(eq + 1)});
  }
  if (!planFile.empty())
    if (Error e = readPlan(planFile, opts)) {
      std::cerr << "cgfuse: error: " << e.message() << "\n";
      return 1;
    }
  opts.constants = !noConstants;
  opts.internalize = !noInternalize;
  opts.noAlias = !noRestrict;
  opts.keepIR = !printIR.empty();
  if (opts.groups.empty() && !opts.autoFuse) {
    std::cerr << "cgfuse: error: nothing to fuse: give --fuse A,B,..., --plan FILE or --auto\n";
    return 2;
  }

  Expected<Graph> g = readCgfFile(input);
  if (!g) {
    std::cerr << "cgfuse: error: " << g.error().message() << "\n";
    return 1;
  }
  Expected<fusion::FuseReport> rep = fusion::fuseGraph(*g, opts);
  if (!rep) {
    std::cerr << "cgfuse: error: " << rep.error().message() << "\n";
    return 1;
  }
  if (Error e = writeCgfOutput(*g, output)) {
    std::cerr << "cgfuse: error: " << e.message() << "\n";
    return 1;
  }
  if (!printIR.empty()) {
    std::ofstream file;
    if (printIR != "-") {
      file.open(printIR);
      if (!file) {
        std::cerr << "cgfuse: error: cannot write '" << printIR << "'\n";
        return 1;
      }
    }
    std::ostream &os = printIR == "-" ? std::cout : file;
    for (const fusion::FusedGroup &f : rep->fused)
      os << "; fused kernel " << f.kernel << "\n" << f.ir;
  }
  if (remarks)
    for (const fusion::Remark &r : rep->remarks)
      std::cerr << "cgfuse: remark: [" << r.group << "] " << fusion::remarkKindName(r.kind) << ": " << r.message
                << "\n";
  if (json) {
    nlohmann::json j;
    j["output"] = output;
    j["fused"] = nlohmann::json::array();
    for (const fusion::FusedGroup &f : rep->fused)
      j["fused"].push_back({{"node", f.node},
                            {"kernel", f.kernel},
                            {"from", f.from},
                            {"internalized", f.internalized},
                            {"local", f.localized},
                            {"constants", f.constants},
                            {"elided", f.elided},
                            {"barriers", f.barriers}});
    j["remarks"] = nlohmann::json::array();
    for (const fusion::Remark &r : rep->remarks)
      j["remarks"].push_back(
          {{"group", r.group}, {"kind", fusion::remarkKindName(r.kind)}, {"message", r.message}});
    // names are bytes from the file: invalid UTF-8 is replaced, as `cgc dump --json` does
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::signal(SIGXFSZ, SIG_IGN); // a write over `ulimit -f` is an error (EFBIG), not a kill
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::cerr << "cgfuse: error: out of memory\n";
  } catch (const std::exception &e) {
    std::cerr << "cgfuse: error: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "cgfuse: error: internal error\n";
  }
  return 1;
}
