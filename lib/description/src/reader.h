// Internal to lib/description: the description reader's shared declarations (description.cpp,
// description_nodes.cpp, kernels.cpp).
//
// Why exceptions here: every accessor of a deeply nested description can fail, and a
// DescError carries the JSON position to the one boundary (loadDescription) that turns
// it into a diagnostic. DescError never leaves the reader; third-party exceptions are
// caught at that same boundary.
#pragma once

#include "cgraph/description/description.h"
#include "json_pos.h"

#include "cgraph/graph/builder.h"

#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace cgraph::desc {

struct DescError {
  Location loc;
  std::string message;
  bool verbatim = false; // `message` is another tool's diagnostics text (clang)
  ErrorCode code = ErrorCode::Invalid; // Io: the top-level description cannot be read
};

// Reads a file of at most `maxBytes`; false with a reason (strerror style) otherwise.
bool readWholeFile(const std::string &path, uint64_t maxBytes, std::string *out, std::string *why);

// The directories a description may read files from (kernel files, their include
// directories, data_file, subgraph files): the top-level description's folder, the -I
// folders and each --allow-dir. Paths are compared after resolving symbolic links and
// "..", so neither leads out.
class AllowedDirs {
public:
  // `dir` relative to the current directory; "" is the current directory.
  void add(const std::string &dir);
  // Throws DescError at `at` in `file` when `path` resolves outside every allowed
  // directory; `what` names the field ("'data_file'", "kernel file").
  void check(const std::string &file, const JValue &at, const std::string &what, const std::string &path) const;
  // How the refusal tells the user to allow a directory (DescriptionOptions::allowDirsHint).
  void setHint(std::string hint) { hint_ = std::move(hint); }

private:
  std::vector<std::string> dirs_; // resolved, absolute
  std::string hint_;
};

// Compiled or loaded kernel files, shared by a graph and its subgraphs so that one file
// with the same options is compiled once per run.
class KernelCache {
public:
  struct Entry {
    KernelModule module;
    std::vector<Kernel> kernels; // Kernel::module unset
  };
  // `entry` is the kernels[] element of the description; `dir` the description's
  // directory. Throws DescError.
  // Files outside `allowed` are refused before they are read.
  const Entry &load(const JValue &entry, const std::string &file, const std::string &dir,
                    const DescriptionOptions &opts, const AllowedDirs &allowed, DiagSink &diags);

private:
  const Entry &loadSource(const JValue &entry, const std::string &file, const std::string &dir,
                          const DescriptionOptions &opts, const AllowedDirs &allowed, DiagSink &diags);
  // OpenCL C `text` compiled into e.module (named `name`; `path` is what clang reports).
  static void compileInto(Entry &e, const std::string &text, const std::string &name,
                          const std::string &path, const CompileOptions &co, const CompileOptions &shown,
                          const DescriptionOptions &opts, const std::string &file, const JValue &at,
                          DiagSink &diags);
  // e.kernels from e.module's SPIR-V.
  static void reflectInto(Entry &e, const std::string &what, const std::string &file, const JValue &at,
                          DiagSink &diags);
  std::map<std::string, std::unique_ptr<Entry>> entries_;
};

// Where a node came from when a repeat block made it: its template's name, the
// iteration of every enclosing block (outermost first) and the innermost block's label
// ("repeat 'i'", or "repeat block" without a variable). Empty `iters` outside repeats.
struct NodeOrigin {
  std::string templateName;
  std::vector<uint64_t> iters;
  std::string repeat;
};

// Positions of one graph's elements, for mapping validateGraph diagnostics back.
struct SourceMap {
  std::string file;
  Pos graphPos;
  std::vector<Pos> nodes;
  std::vector<NodeOrigin> origins; // per node, as `nodes`
  std::vector<Pos> slots;
};

class DescriptionReader {
public:
  DescriptionReader(const DescriptionOptions &opts, const AllowedDirs &allowed, DiagSink &diags)
      : opts_(opts), allowed_(allowed), diags_(diags) {}

  // Parses and builds the description file at `path` (`from`: where it was referenced).
  Graph readFile(const std::string &path, const Location &from, uint32_t depth);
  // The description `text`, shown as `name` in diagnostics, relative paths against `dir`.
  Graph readText(const std::string &text, const std::string &name, const std::string &dir, uint32_t depth);

private:
  // One repeat block level while expanding nodes.
  struct Frame {
    uint64_t iter = 0;
    std::string var;
    std::vector<std::vector<std::string>> rotations; // "swap" groups
    std::set<std::string> templateNames;
  };
  struct PendingEdge {
    uint32_t to;
    std::string fromName;
    Pos pos;
  };
  struct GraphCtx {
    std::string file; // as shown in diagnostics
    std::string dir;  // relative paths resolve against it
    GraphBuilder builder;
    SourceMap map;
    std::vector<Frame> frames;
    std::vector<PendingEdge> pending;
    // Stored expressions of the node being read (node index set when it is added).
    std::vector<FieldExpr> pendingExprs;
    // Slot sizes that are expressions over parameters (.cgf 2.2), appended to the
    // graph's expressions after its nodes (node kNone sorts last).
    std::vector<FieldExpr> slotExprs;
    bool slotSizeIsExpr(uint32_t slot) const {
      for (const FieldExpr &fe : slotExprs)
        if (fe.arg == slot) return true;
      return false;
    }
    std::map<std::string, uint32_t> nodeByName;
    std::map<std::string, uint32_t> slotByName;
    std::vector<Pos> paramPos;
    std::string edgesMode = "both";
    uint32_t depth = 0;
    uint64_t repeatFactor = 1; // product of the enclosing repeat counts
    Graph &g() { return builder.graph(); }
  };

  Graph readGraph(const JValue &root, const std::string &file, const std::string &dir, uint32_t depth);
  void readKernels(GraphCtx &c, const JValue &list);
  void readSlots(GraphCtx &c, const JValue &list);
  void readParams(GraphCtx &c, const JValue &list);
  void readMetadata(GraphCtx &c, const JValue &obj);
  // `warnings`: false for an inline body (it carries every slot of its enclosing graph).
  void validate(GraphCtx &c, Graph &g, bool warnings = true);

  // description_nodes.cpp
  void readNodes(GraphCtx &c, const JValue &list);
  void readRepeat(GraphCtx &c, const JValue &block);
  void readNode(GraphCtx &c, const JValue &node);
  void readKernelNode(GraphCtx &c, const JValue &n, Node &node);
  void readCopyNode(GraphCtx &c, const JValue &spec, Node &node, bool rect);
  void readFillNode(GraphCtx &c, const JValue &spec, Node &node);
  void readHostNode(GraphCtx &c, const JValue &n, Node &node);
  void readSubgraphNode(GraphCtx &c, const JValue &n, Node &node);
  // The subgraph `sv` (a file name or an inline description) with n's "bind" into `node`.
  void bindSubgraph(GraphCtx &c, const JValue &n, const JValue &sv, Node &node);
  void readConditionalNode(GraphCtx &c, const JValue &n, Node &node, bool isWhile);

  // description_collective.cpp
  // The collective key of node `n` ("all_reduce", ... "recv"), or null.
  static const char *collectiveKey(const JValue &n);
  // `spec` is the object under `key`; fills node.kind and node.coll (pending exprs).
  // Sides are slot references as readTransferRef reads them ("slot": in place).
  void readCollectiveNode(GraphCtx &c, const JValue &spec, const char *key, Node &node);
  // `field`: "global", "local" or "offset"; `nodeName` for messages.
  void readRange(GraphCtx &c, const JValue &v, Dim out[3], uint32_t *dims, bool allowZero,
                 const char *field, const std::string &nodeName);
  // `index`: the argument's position (for messages).
  Arg readArg(GraphCtx &c, const JValue &v, const KernelParam *param, bool host, size_t index);
  uint32_t resolveSlot(GraphCtx &c, const JValue &nameValue);
  std::pair<uint32_t, uint64_t> readSlotRef(GraphCtx &c, const JValue &v,
                                            const std::string &context = "");
  std::string instanceName(GraphCtx &c, const std::string &templateName, size_t frameLevel);

  // description_expr.cpp: integer expressions in descriptions (cgraph/graph/expr.h).
  // Folds the expression string `v` with the enclosing repeat variables' values and
  // returns the constant; errors (syntax, unknown name, float parameter, division by a
  // constant zero, overflow, a parameter left after folding) point into the string.
  // `what` names the field for messages ("'global'", "argument 2").
  int64_t foldExpr(GraphCtx &c, const JValue &v, const std::string &what);
  // As foldExpr, but an expression that still names parameters after folding is not
  // an error: returns nullopt and sets *stored to its program over the graph's
  // parameter indices (expr.h encode; .cgf 2.0 stores it per field), and *atDefaults
  // to its value at the parameters' defaults (nullopt when that fails to evaluate).
  std::optional<int64_t> foldOrStore(GraphCtx &c, const JValue &v, const std::string &what,
                                     std::vector<uint8_t> *stored,
                                     std::optional<int64_t> *atDefaults);
  // An unsigned integer field that may be written as an expression string: a number
  // is read as before (toU64); an expression must fold to >= 1 when `positive`, else
  // to >= 0. Other strings are a wrong-type error, as before.
  // `context` (" of node 'c.3'") is appended to `what` in the expression messages.
  uint64_t readUInt(GraphCtx &c, const JValue &v, const std::string &what, bool positive,
                    const std::string &context = "");
  // A copy or fill offset (>= 0) or size (a constant >= 1; a stored expression may be 0
  // in a submission: the node then does nothing): a number or an expression as readUInt, but an
  // expression over parameters is stored (c.pendingExprs, field `field`) and the field
  // keeps its value at the parameters' defaults (0 when that is negative or fails).
  uint64_t readTransferUInt(GraphCtx &c, const JValue &v, const std::string &what,
                            const std::string &context, ExprField field);
  // readSlotRef for copy and fill nodes: the offset may be a stored expression (`field`).
  std::pair<uint32_t, uint64_t> readTransferRef(GraphCtx &c, const JValue &v,
                                                const std::string &context, ExprField field);
  // A string that is exactly "$name" with a repeat variable, a parameter or an
  // identifier as name: it keeps its meaning from before expressions (a reference, or
  // an "unknown parameter" error).
  bool isPlainRef(GraphCtx &c, const JValue &v) const;
  // A repeat variable in scope (innermost first); false when `name` is none.
  bool repeatVar(const GraphCtx &c, const std::string &name, uint64_t *value) const;
  void resolveEdges(GraphCtx &c);

  const DescriptionOptions &opts_;
  const AllowedDirs &allowed_;
  DiagSink &diags_;
  KernelCache kernels_;
  std::vector<std::string> fileStack_; // description files being read (cycle check)
};

// ---- small helpers shared by the reader's files (throw DescError) ---------------
[[noreturn]] void failAt(const std::string &file, const JValue &v, const std::string &message);
[[noreturn]] void failAt(const std::string &file, Pos p, const std::string &message);
// Refuses keys outside `allowed`; keys starting with '_' are comments and skipped.
void checkKeys(const std::string &file, const JValue &obj, std::initializer_list<const char *> allowed,
               const std::string &what);
const JValue &expectKind(const std::string &file, const JValue &v, JValue::Kind kind,
                         const std::string &what);
const JValue &require(const std::string &file, const JValue &obj, const char *key,
                      const std::string &what);
uint64_t toU64(const std::string &file, const JValue &v, const std::string &what);
std::string toStr(const std::string &file, const JValue &v, const std::string &what);
ScalarType toType(const std::string &file, const JValue &v);
// " (did you mean 'x'?)" when one of `names` is close to `name`, else "".
std::string suggest(const std::string &name, const std::vector<std::string> &names);
std::string joinPath(const std::string &dir, const std::string &rel);
// "repeat 'i'" for a block with variable `var`, "repeat block" without one.
std::string repeatLabel(const std::string &var);
// Whether a string value is written as an integer expression. `strict` (arguments,
// where a string is also a slot name): it starts with '$', a digit, '-', '(' or a call
// of min/max/ceil_div/align_up. Otherwise (numeric fields): it contains a character of
// an expression ('$', a digit, an operator or a parenthesis).
bool isExpressionText(const std::string &s, bool strict);
// The source position of byte `offset` of string value `v` (its quote when the
// string had escape sequences).
Pos stringPos(const JValue &v, uint32_t offset);

} // namespace cgraph::desc
