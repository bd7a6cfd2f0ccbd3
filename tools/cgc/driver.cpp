#include "driver.h"

#include "cuda_target.h"

#include "cgraph/format/output_file.h"
#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"
#include "cgraph/graph/dot.h"
#include "cgraph/graph/json.h"
#include "cgraph/graph/placement.h"
#include "cgraph/graph/validate.h"

#include <cstring>
#include <filesystem>
#include <fstream>

namespace cgraph::cgc {

namespace {

// The .cgf reader prefixes its messages with the path; print them clang-style.
void reportFileError(DiagSink &diags, const std::string &path, const std::string &message) {
  std::string prefix = path + ": ";
  if (message.compare(0, prefix.size(), prefix) == 0) diags.error(Location::inFile(path), message.substr(prefix.size()));
  else diags.error(Location::inFile(path), message);
}

bool isCgfFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, "CGF\0", 4) == 0;
}

bool sameFile(const std::string &a, const std::string &b) {
  std::error_code ec;
  return std::filesystem::exists(b, ec) && std::filesystem::equivalent(a, b, ec);
}

Error writeText(const std::string &path, const std::string &text, std::ostream &out) {
  if (path.empty() || path == "-") {
    out << text;
    out.flush();
    return out ? Error::success() : makeError("cannot write to standard output");
  }
  return writeOutputFile(path, text.data(), text.size());
}

} // namespace

// A compiled file given where a description was expected: --emit=json|dot convert it,
// else say what it is and what to run instead.
int runCompiledInput(const CompileRequest &req, DiagSink &diags, std::ostream &out) {
  if (req.emit != "json" && req.emit != "dot") {
    diags.error(Location::inFile(req.input),
                "this is a compiled graph (.cgf), not a description: 'cgc dump " + req.input +
                    "' lists it, 'cgc " + req.input + " --emit=dot' or '--emit=json' converts it");
    return 1;
  }
  Expected<Graph> g = readCgfFile(req.input);
  if (!g) {
    reportFileError(diags, req.input, g.error().message());
    return 1;
  }
  const std::string text = req.emit == "dot" ? toDot(*g)
                                             : toJson(*g).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  if (Error e = writeText(req.output, text, out)) {
    diags.error(Location{}, e.message());
    return 1;
  }
  return 0;
}

int runCompile(const CompileRequest &req, DiagSink &diags, std::ostream &out) {
  if (isCgfFile(req.input)) return runCompiledInput(req, diags, out);
  Expected<Graph> compiled = desc::compileDescription(req.input, req.description, diags, req.order);
  if (!compiled) return 1; // reported to `diags`
  Graph &g = *compiled;
  Error err;
  if (!req.place.empty()) {
    // "round-robin:N", "cost:N" or "min-bytes:N" (main.cpp checked the shape).
    const size_t colon = req.place.find(':');
    const uint32_t devices = uint32_t(std::stoul(req.place.substr(colon + 1)));
    const std::string rule = req.place.substr(0, colon);
    err = placeNodes(g, devices,
                     rule == "cost"        ? PlaceRule::Cost
                     : rule == "min-bytes" ? PlaceRule::MinBytes
                                           : PlaceRule::RoundRobin);
  }
  if (err) {
    diags.error(Location::inFile(req.input), err.message());
    return 1;
  }
  std::vector<std::string> targetWarnings;
  err = addTargetForms(g, req.targets, &targetWarnings);
  for (const std::string &w : targetWarnings) diags.warning(Location{}, w);
  if (err) {
    diags.error(Location::inFile(req.input), err.message());
    return 1;
  }
  std::string output = req.output;
  if (output.empty() && req.emit == "cgf")
    output = std::filesystem::path(req.input).stem().string() + ".cgf";
  if (!output.empty() && output != "-" && sameFile(req.input, output)) {
    diags.error(Location{}, "output file '" + output + "' is the input file");
    return 1;
  }
  if (req.emit == "json") {
    std::string text = toJson(g).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    err = writeText(output, text, out);
  } else if (req.emit == "dot") {
    err = writeText(output, toDot(g), out);
  } else if (output == "-") {
    Expected<std::vector<uint8_t>> bytes = writeCgf(g);
    if (!bytes) {
      err = bytes.error();
    } else {
      out.write(reinterpret_cast<const char *>(bytes->data()), std::streamsize(bytes->size()));
      out.flush();
      if (!out) err = makeError("cannot write to standard output");
    }
  } else {
    err = writeCgfOutput(g, output);
  }
  if (err) {
    diags.error(Location{}, err.message());
    return 1;
  }
  return 0;
}

int runLint(const std::string &input, const DescriptionOptions &opts, OrderKind order, DiagSink &diags) {
  if (!isCgfFile(input)) {
    // The checks compile would do before writing, without writing.
    Expected<Graph> g = desc::compileDescription(input, opts, diags, order);
    if (!g) return 1; // reported to `diags`
    Expected<std::vector<uint8_t>> bytes = writeCgf(*g);
    if (!bytes) {
      diags.error(Location::inFile(input), bytes.error().message());
      return 1;
    }
    return 0;
  }
  Expected<Graph> g = readCgfFile(input);
  if (!g) {
    reportFileError(diags, input, g.error().message());
    return 1;
  }
  for (const Diagnostic &d : validateGraph(*g)) {
    if (d.severity == Diagnostic::Error) diags.error(Location::inFile(input), d.message);
    else diags.warning(Location::inFile(input), d.message);
  }
  return diags.errorCount() ? 1 : 0;
}

int runDump(const std::string &input, bool json, DiagSink &diags, std::ostream &out) {
  Expected<Graph> g = readCgfFile(input);
  if (!g) {
    reportFileError(diags, input, g.error().message());
    return 1;
  }
  if (json) out << toJson(*g).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  else out << listing(*g);
  out.flush();
  return 0;
}

} // namespace cgraph::cgc
