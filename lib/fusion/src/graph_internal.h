// What the graph-side files of lib/fusion share: the indexes over the Graph, the
// legality and nd-range rules, the cost model, planning a group's request to the LLVM
// side, and the state of one fuseGraph call that the driver (fuse_graph.cpp), the
// explicit groups (groups.cpp), the automatic chains (chains.cpp) and the rewriting
// (rewrite.cpp) work on. Not installed; no LLVM. Nothing here is thread-safe: one
// fuseGraph call owns its state.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cgraph/error.h"
#include "cgraph/fusion/fusion.h"
#include "cgraph/model.h"
#include "internal.h"

namespace cgraph {
namespace fusion {
namespace detail {

// "a,b,c"; long groups as "a,b,...,z (1000 nodes)" so that remarks stay one line
// (legality.cpp).
std::string join(const Graph &g, const std::vector<uint32_t> &nodes);

// ---- stored parameter expressions (expr_index.cpp) ------------------------------
// The graph's stored parameter expressions (.cgf 2.0, Graph::exprs) by node: those of
// each nd-range field (ExprField order: global, local, offset per dimension) and of
// each scalar argument. Fusion carries them into the fused node; a node whose nd-range
// has one is not literal, so its group must share one nd-range (the same expressions).
// Holds a reference to the graph; indexes by the node indices it was built with.
struct ExprIndex {
  const Graph &g;
  std::vector<std::array<int32_t, 9>> range;                    // per node; -1: none
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> args; // per node: (arg, expr)
  explicit ExprIndex(const Graph &graph);
  // Expression index of node n's nd-range field f (ExprField value 0..8), or -1.
  int32_t field(uint32_t n, unsigned f) const { return range.empty() ? -1 : range[n][f]; }
  bool anyRange(uint32_t n) const {
    for (unsigned f = 0; f < 9; ++f)
      if (field(n, f) >= 0) return true;
    return false;
  }
  // Expression index of node n's argument a, or -1.
  int32_t arg(uint32_t n, uint32_t a) const {
    if (args.empty()) return -1;
    for (auto [i, e] : args[n])
      if (i == a) return int32_t(e);
    return -1;
  }
  bool sameField(uint32_t a, uint32_t b, unsigned f) const {
    int32_t x = field(a, f), y = field(b, f);
    if (x < 0 || y < 0) return x == y;
    return g.exprs[size_t(x)].code == g.exprs[size_t(y)].code;
  }
  // "$batch * 2048"
  std::string text(int32_t e) const;
};

// Node n's nd-range dimensions of one kind (0 global, 1 local, 2 offset): "64x$n", with
// an expression in parentheses.
std::string dimText(const Graph &g, const ExprIndex &ex, uint32_t n, unsigned kind);

// ---- nd-range rules (ranges.cpp) -------------------------------------------------
bool literalRange(const NDRange &r);
Range toRange(const NDRange &r);
// Whether `x` of `a` and `y` of `b` (global, local or offset sizes) are the same.
bool sameVec(const Range &a, const uint64_t *x, const Range &b, const uint64_t *y);

// `groupFree(node)`: the node's kernel does not depend on its work-groups, so its local
// size does not count.
using GroupFree = std::function<bool(uint32_t)>;

// The nd-range rules of work-item remapping (see Remap). Empty when the nodes of `grp`
// may run in one fused range, which goes to `fused` with each node's mode in `remap`
// (`literal`: every size is a number); else the rule that refuses them.
std::string planRanges(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp,
                       Range &fused, std::vector<Remap> &remap, bool &literal,
                       const GroupFree &groupFree);
// Empty when the nodes of `grp` may run in one fused range (planRanges); else why not.
std::string rangeWhyNot(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp,
                        const GroupFree &groupFree);

// ---- the cost model of --auto (cost.cpp) -------------------------------------------
// A fused kernel keeping more than this many bytes of private arrays per work-item is
// not used by --auto (registers spill; GPUs run fewer work-items).
constexpr uint64_t kPrivateLimit = 4096;
// Why a chain should not take the nodes of `grp` that the work-item counts rule out;
// empty when none is.
std::string costWhyNot(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp);
// Why --auto without --auto-linear leaves `grp` alone: a node would be remapped
// linearly. Empty when none would.
std::string linearCostWhyNot(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp,
                             const GroupFree &groupFree);

// ---- group shape and slot users (legality.cpp) -----------------------------------
struct Adjacency {
  std::vector<std::vector<uint32_t>> succ, pred;
  explicit Adjacency(const Graph &g) : succ(g.nodes.size()), pred(g.nodes.size()) {
    for (const Edge &e : g.edges) {
      succ[e.from].push_back(e.to);
      pred[e.to].push_back(e.from);
    }
  }
};

// Whether a group's shape in the graph allows fusing it: the rules that do not depend
// on nd-ranges. Each query costs time in proportion to the group, the edges of its
// nodes and the nodes between its first and last node (in execution order) that
// descend from it, never to the whole graph (--auto asks once per node it adds to a
// chain); the marks it sets are cleared before it returns. Holds references to the
// graph and the adjacency, which must outlive it.
class GroupChecker {
public:
  GroupChecker(const Graph &g, const Adjacency &adj, const std::vector<uint32_t> &order);
  // Empty when `grp` (node indices in the requested order) has the shape of a fusable
  // group; else the rule it breaks.
  std::string whyNot(const std::vector<uint32_t> &grp);

private:
  std::string between(const std::vector<uint32_t> &grp);
  std::string edgeRules(const std::vector<uint32_t> &grp);

  const Graph &g_;
  const Adjacency &adj_;
  std::vector<uint32_t> topo_; // node -> position in execution order
  std::vector<int> pos_;       // node -> position in the group asked about, -1 outside
  std::vector<uint8_t> mark_;  // 1: below the group, 2: above it (cleared after use)
};

// Which nodes use which slots (any kind of use), so that "is this slot used outside
// the group" costs time in proportion to the group.
struct SlotUsers {
  std::vector<std::vector<uint32_t>> slotsOf; // per node, each slot once
  std::vector<uint32_t> users;                // per slot, how many nodes use it
  explicit SlotUsers(const Graph &g);
  // The slots some node outside `grp` uses, among those the group uses.
  std::set<uint32_t> outside(const std::vector<uint32_t> &grp) const;
};

// ---- planning a group (plan.cpp) -------------------------------------------------
// Where a scratch slot was named (Remark text), per slot; empty: not scratch.
using ScratchSlots = std::vector<std::string>;

// The slots named scratch (FuseOptions::scratch, the graph's "scratch" metadata), each
// with where it was named. A name the options give that is no slot is an Error; one the
// metadata gives is a Note.
Expected<ScratchSlots> scratchSlots(const Graph &g, const FuseOptions &o, FuseReport &rep);

struct Planned {
  std::vector<uint32_t> grp;
  IrRequest req;
  std::vector<Arg> paramArgs;     // per FusedParam: the argument the fused node passes
  std::vector<int32_t> paramExpr; // per FusedParam: its stored expression (Graph::exprs), -1
  IrResult res;
  std::string nodeName;
  std::vector<std::string> notes;   // remarks for the group once it is fused
  std::vector<std::string> unnamed; // transient slots only it uses, not named scratch
};

// Builds the request for one group: instances, shared parameters, candidates.
Planned plan(const Graph &g, const std::vector<uint32_t> &grp, const FuseOptions &o,
             const std::set<std::string> &takenNames, const GroupRequest *gr,
             const std::map<uint32_t, uint64_t> &constants, const GroupFree &groupFree,
             const SlotUsers &users, const ScratchSlots &scratch, const ExprIndex &ex);

// ---- parameter values (specialize.cpp) -------------------------------------------
// The value bits of `text` typed as parameter `p`.
Expected<uint64_t> constantBits(const Param &p, const std::string &text);
// FuseOptions::paramValues: each named parameter takes its value in every stored
// expression (folded to a literal where it was the last variable), nd-range size and
// kernel argument that uses it.
Error specialize(Graph &g, const std::vector<std::pair<std::string, std::string>> &values,
                 FuseReport &rep);

// ---- one fuseGraph call (fuse_graph.cpp, groups.cpp, chains.cpp, rewrite.cpp) ----
struct FuseState {
  FuseState(Graph &graph, const FuseOptions &options, FuseReport &report, const ExprIndex &exprs,
            const std::vector<uint32_t> &executionOrder, const ScratchSlots &scratchNames);
  Graph &g;
  const FuseOptions &o;
  FuseReport &rep;
  const ExprIndex &ex;
  const std::vector<uint32_t> &order; // execution order
  const ScratchSlots &scratch;
  Adjacency adj;
  GroupChecker checker;
  SlotUsers users;
  std::map<uint32_t, std::map<std::string, bool>> groupUse; // per module, read on first use
  GroupFree groupFree;                                      // reads groupUse
  std::vector<bool> taken;                                  // per node: in a fused group
  std::vector<Planned> done;                                // the groups fused so far
  // names a fused node or kernel must not take: the graph's and the new ones
  std::set<std::string> newNames;
  std::map<std::string, uint32_t> nodeIndex;
};

// Plans and builds the fused kernel of `grp`; on success the group is done (taken, its
// name reserved). Remarks say what happened. Returns, for an automatic chain refused
// because of a hazard, how many of its first nodes may still be fused together (0
// otherwise).
uint32_t tryFuse(FuseState &st, const std::vector<uint32_t> &grp, bool automatic,
                 const GroupRequest *gr, const std::map<uint32_t, uint64_t> &constants);
// FuseOptions::groups: a group whose shape breaks a rule is an Error; one whose
// nd-ranges or kernels cannot be fused is left as it is, with a remark.
Error fuseExplicitGroups(FuseState &st);
// FuseOptions::autoFuse: chains in execution order, cut at hazards and fused.
void fuseChains(FuseState &st);
// Replaces each done group with its fused node, drops the slots that left the graph
// and the kernels and modules no node uses, and finalizes the graph for its file.
Error rewriteGraph(FuseState &st);

} // namespace detail
} // namespace fusion
} // namespace cgraph
