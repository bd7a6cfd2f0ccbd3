// The cgc commands: compile, lint, dump. Each returns the process exit code (0 or 1)
// and reports through a DiagSink; none throws.
#pragma once

#include "cgraph/description/description.h"
#include "cgraph/description/diagnostics.h"

#include "cgraph/graph/order.h"

#include <ostream>
#include <string>
#include <vector>

namespace cgraph::cgc {

using desc::DescriptionOptions;
using desc::DiagSink;
using desc::Location;

struct CompileRequest {
  std::string input;
  std::string output; // empty: <input stem>.cgf in the current directory, stdout for json/dot
  std::string emit = "cgf"; // cgf | json | dot
  OrderKind order = OrderKind::DepthFirst;
  DescriptionOptions description;
  std::vector<std::string> targets; // --target cuda:sm_XY (cuda_target.h)
  std::string place;                // --place round-robin:N | cost:N | min-bytes:N (empty: as described)
};

int runCompile(const CompileRequest &req, DiagSink &diags, std::ostream &out);

// A description (.json) or a .cgf file (told apart by the .cgf magic); writes nothing.
int runLint(const std::string &input, const DescriptionOptions &opts, OrderKind order, DiagSink &diags);

// The listing (lib/graph listing()) or, with `json`, toJson() of a .cgf file.
int runDump(const std::string &input, bool json, DiagSink &diags, std::ostream &out);

} // namespace cgraph::cgc
