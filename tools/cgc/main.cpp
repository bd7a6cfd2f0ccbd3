// cgc: compiles graph descriptions (docs/graph-json.md) to .cgf files; `cgc dump`
// lists a .cgf file, `cgc lint` checks a description or .cgf file without writing.
#include "driver.h"

#include "cgraph/format/version_text.h"

#include <CLI/CLI.hpp>

#include <csignal>
#include <functional>
#include <iostream>
#include <new>

#include <unistd.h>

#ifndef CGRAPH_VERSION
#define CGRAPH_VERSION "0.0.0"
#endif

namespace {

using namespace cgraph;
using namespace cgraph::cgc;

// Progress on stderr: one line rewritten in place on a terminal (cleared when done),
// else a line per step.
std::function<void(const desc::Progress &)> progressPrinter(bool terminal) {
  return [terminal](const desc::Progress &p) {
    if (p.done == p.total) {
      if (terminal) std::cerr << "\r\033[K" << std::flush;
      return;
    }
    std::cerr << (terminal ? "\r\033[K" : "") << "cgc: " << p.what << " " << p.done + 1 << "/" << p.total
              << (p.item.empty() ? "" : ": " + p.item) << (terminal ? "" : "\n") << std::flush;
  };
}


int run(int argc, char **argv) {
  CLI::App app{"cgc: compile a JSON command-graph description and its OpenCL C / SPIR-V "
               "kernels into a .cgf file",
               "cgc"};
  app.set_version_flag("--version", std::string("cgc ") + CGRAPH_VERSION + " (cgraph, LLVM 14; " + cgfVersionText() + ")");
  app.fallthrough();
  app.require_subcommand(0, 1);

  CompileRequest req;
  req.description.allowDirsHint = "add its directory with --allow-dir";
  std::string order = "dfs";
  bool quiet = false;
  app.add_option("input", req.input, "graph description (.json)");
  app.add_option("-o", req.output,
                 "output file ('-' for stdout; default: <input name>.cgf in the current directory, "
                 "stdout for --emit=json|dot). A file is replaced atomically; a device or FIFO is "
                 "written to; a symbolic link is followed (the file it points to is replaced); "
                 "directories and sockets are refused");
  app.add_option("-I", req.description.compile.includeDirs, "add DIR to the OpenCL C include path")
      ->type_name("DIR")->take_all();
  app.add_option("--allow-dir", req.description.allowDirs,
                 "directory the description may read files from (kernels, data_file, subgraphs; "
                 "repeatable; always allowed: the description's directory and the -I directories)")
      ->type_name("DIR")->allow_extra_args(false);
  app.add_option("-D", req.description.compile.defines, "define macro NAME[=VAL] for every OpenCL C file")
      ->type_name("NAME[=VAL]")->take_all();
  app.add_option("--emit", req.emit, "what to write")->check(CLI::IsMember({"cgf", "json", "dot"}))
      ->default_str("cgf");
  app.add_option("--order", order, "execution order stored in the file: reverse depth-first or breadth-first")
      ->check(CLI::IsMember({"dfs", "bfs"}))->default_str("dfs");
  app.add_option("--cl-std", req.description.compile.clStd, "OpenCL C version")
      ->check(CLI::IsMember({"CL1.2", "CL2.0", "CL3.0"}))->default_str("CL1.2");
  app.add_flag("--keep-source", req.description.keepSource, "also store the OpenCL C source of each kernel file");
  app.add_flag("--keep-bitcode", req.description.keepBitcode, "also store spir64 LLVM bitcode of each OpenCL C file");
  app.add_option("--target", req.targets,
                 "also embed device code for TARGET (repeatable): cuda:sm_XY adds PTX, and a cubin where ptxas is found")
      ->type_name("TARGET");
  app.add_flag("-q,--quiet", quiet, "do not print warnings");
  bool progress = false, noProgress = false;
  app.add_flag("--progress", progress, "show progress (the kernel file being compiled) on stderr; default: when "
                                       "stderr is a terminal and -q is not given");
  app.add_flag("--no-progress", noProgress, "never show progress");
  app.add_option("--place", req.place,
                 "place nodes on N logical devices: round-robin:N (partition p on device p % N), cost:N "
                 "(the execution order cut into N runs of about equal work) or min-bytes:N (the same runs, each "
                 "cut moved within a quarter of a device's share of the work to where the fewest bytes cross); "
                 "overrides \"device\" keys; 'cgc dump' shows the bytes that cross")
      ->type_name("RULE:N")
      ->check([](const std::string &v) -> std::string {
        const size_t colon = v.find(':');
        const std::string rule = v.substr(0, colon);
        if (colon == std::string::npos || (rule != "round-robin" && rule != "cost" && rule != "min-bytes"))
          return "expected round-robin:N, cost:N or min-bytes:N, found '" + v + "'";
        const std::string n = v.substr(colon + 1);
        if (n.empty() || n.size() > 2 || n.find_first_not_of("0123456789") != std::string::npos ||
            std::stoul(n) < 1 || std::stoul(n) > kMaxDevices)
          return "N must be 1 to " + std::to_string(kMaxDevices) + ", found '" + n + "'";
        return "";
      });

  CLI::App *dump = app.add_subcommand("dump", "print a readable listing of a .cgf file");
  std::string dumpInput;
  bool dumpJson = false;
  dump->add_option("file", dumpInput, ".cgf file")->required();
  dump->add_flag("--json", dumpJson, "print JSON for machines");

  CLI::App *lint = app.add_subcommand("lint", "check a description or a .cgf file without writing anything");
  std::string lintInput;
  lint->add_option("file", lintInput, "description (.json) or .cgf file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    if (e.get_exit_code() == 0) return app.exit(e); // --help, --version
    std::cerr << "cgc: error: " << e.what() << "\n(run 'cgc --help' for usage)\n";
    return 2; // a usage error, as in every tool
  }

  DiagSink diags(desc::streamDiagHandler(std::cerr, "cgc"));
  diags.setQuiet(quiet);
  const bool terminal = ::isatty(2) == 1;
  if (progress || (!noProgress && !quiet && terminal)) req.description.progress = progressPrinter(terminal);
  req.order = order == "bfs" ? OrderKind::BreadthFirst : OrderKind::DepthFirst;
  if (dump->parsed()) return runDump(dumpInput, dumpJson, diags, std::cout);
  if (lint->parsed()) return runLint(lintInput, req.description, req.order, diags);
  if (req.input.empty()) {
    diags.error(Location{}, "no input file (run 'cgc --help' for usage)");
    return 2;
  }
  return runCompile(req, diags, std::cout);
}

} // namespace

int main(int argc, char **argv) {
  // Past the file size limit (ulimit -f) a write fails with EFBIG, reported as an
  // error with the temporary file removed, instead of the signal killing cgc.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::cerr << "cgc: error: out of memory\n";
  } catch (const std::exception &e) {
    std::cerr << "cgc: error: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "cgc: error: internal error\n";
  }
  return 1;
}
