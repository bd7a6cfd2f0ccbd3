// What the LLVM-side files of lib/fusion share: the analyses (work-item builtins,
// own-index and work-group tile indices, pointer accesses, slot use), the transforms
// (work-item remapping, internalization) and the steps of buildFusedKernel. Not
// installed; the graph side sees only internal.h. Every function works on IR of one
// LLVMContext that the caller owns (buildFusedKernel, chainCuts and workGroupUse each
// make their own), so calls on different contexts may run on different threads.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/IRBuilder.h>

#include "cgraph/kernel/work_item.h"
#include "internal.h"

namespace llvm {
class Argument;
class Constant;
class DataLayout;
class Function;
class GetElementPtrInst;
class LLVMContext;
class Module;
class Type;
class Value;
} // namespace llvm

namespace cgraph {
namespace fusion {
namespace detail {

// ---- work-item builtins (builtins.cpp) -------------------------------------------
// The OpenCL C builtins the SPIR-V reader emits for the work-item built-in variables
// (the translator builds get_global_id's <3 x i64> from calls with constant dimensions).
// The work-item queries (one table for every pass and lowering: cgraph/kernel/work_item.h).
using Wi = kernel::WorkItemFn;

// The work-item query a function of this (mangled) name is; Wi::None for any other
// function, barriers included.
inline Wi builtinKind(llvm::StringRef name) { return kernel::workItemQuery(name); }
// The builtin call `v` is (through the translator's insertelement/extractelement
// vectors), with its constant dimension; Wi::None otherwise.
Wi builtinOf(llvm::Value *v, unsigned *dim);
// A declaration of the builtin `name` (size_t or, with `i32`, uint result; a uint
// dimension parameter where `withDim`), added to `m` where missing.
llvm::FunctionCallee builtinDecl(llvm::Module &m, const char *name, bool withDim, bool i32);
// A call of get_global_id(d) at `b`.
llvm::Value *callGlobalId(llvm::IRBuilder<> &b, llvm::Module &m, unsigned d);

// ---- own-index analysis (own_index.cpp) --------------------------------------------
// The shape an own-index access is proven against: `index` = the work-item's global
// linear id in this range, gid(0) + G0 * gid(1) + G0 * G1 * gid(2) (offsets 0 for
// dims > 1). dims 0: nothing is own. One dimension needs no sizes (gid(0) itself).
struct OwnShape {
  uint32_t dims = 0;
  uint64_t global[3] = {1, 1, 1};
};

// True when `idx` is the work-item's global linear id in `s`.
bool isOwnIndex(llvm::Value *idx, const OwnShape &s);

// ---- work-group tile analysis (tile_index.cpp) --------------------------------------
// The work-groups an index is analysed against: `dims` dimensions of work-groups of
// local[d] work-items, groups[d] of them (uniform groups, offset 0). dims 0: unknown,
// no tile analysis.
struct TileShape {
  uint32_t dims = 0;
  uint64_t local[3] = {1, 1, 1};
  uint64_t groups[3] = {1, 1, 1};
  uint64_t items() const { return local[0] * local[1] * local[2]; }
  bool operator==(const TileShape &o) const {
    if (dims != o.dims) return false;
    for (int d = 0; d < 3; ++d)
      if (local[d] != o.local[d] || groups[d] != o.groups[d]) return false;
    return true;
  }
};

// The strides S_d of a tile access (see tile_index.cpp); dims 0: none.
struct TileStrides {
  uint32_t dims = 0;
  int64_t s[3] = {1, 1, 1};
  bool operator==(const TileStrides &o) const {
    return dims == o.dims && s[0] == o.s[0] && s[1] == o.s[1] && s[2] == o.s[2];
  }
};

// True when `idx` (a GEP index) stays inside the work-item's work-group tile; its
// strides go to `strides`.
bool inTile(llvm::Value *idx, const TileShape &t, TileStrides *strides = nullptr);
// The element's place in its work-group's tile for an index inTile proved with `s`.
llvm::Value *tileIndex(llvm::IRBuilder<> &b, llvm::Value *idx, const TileShape &t,
                       const TileStrides &s);
// "16x16": the tile's local sizes.
std::string tileText(const TileShape &t);

// ---- pointer accesses (access.cpp) ---------------------------------------------------
struct Access {
  bool read = false, write = false;
  bool own = true;          // every access is at base + get_global_id(0) * elemsize
  bool group = true;        // every access stays in the work-group's tile (TileShape)
  uint64_t tileElem = 0;    // element size of the tile accesses
  TileStrides tileStrides;  // their strides (every tile access has the same)
  uint64_t ownElem = 0;     // element size of the own-index accesses
  std::string firstOther;   // "reads" / "writes" for the first access that is not own
  std::string firstOutside; // the same for the first access outside the tile
};

// Walks every use of a kernel's pointer parameter. State: the pointer is the base (0),
// base + gid * elemsize (1: Own), base + an index inside the work-group's tile
// (2: Tile), or something else (3). `roots` collects the base's indexing GEPs (Own or
// Tile).
void walkPointer(llvm::Value *ptr, int state, uint64_t elemSize, const llvm::DataLayout &dl,
                 const OwnShape &ownShape, const TileShape &tile, Access &acc,
                 std::vector<llvm::GetElementPtrInst *> *roots);
// The shapes an instance's accesses are proven against (see access.cpp).
OwnShape ownOf(const IrRequest &req, const Instance &in);
TileShape tileOf(const IrRequest &req, const Instance &in);

// ---- shared LLVM utilities (ir_utils.cpp) --------------------------------------------
// SROA, EarlyCSE, SimplifyCFG, ADCE on `f`. `memory`: also forward loads and drop dead
// stores using alias analysis (the noalias parameters): EarlyCSE with MemorySSA, GVN,
// DSE.
void runCleanup(llvm::Function &f, bool memory = false);
void runGlobalDCE(llvm::Module &m);
// Named metadata that every translated module carries once (versions, memory model):
// after linking, keep each distinct operand once.
void dedupeNamedMetadata(llvm::Module &m);
// The constant of type `t` with these value bits; nullptr where `t` is no integer or
// half/float/double type.
llvm::Constant *literal(llvm::Type *t, uint64_t bits);
// The constant as remarks print it ("3", "0.5").
std::string literalText(llvm::Constant *c);

// ---- steps 1-2: link and analyse the kernels (prepare.cpp) -----------------------
// How each instance accesses each pointer parameter, per function, dimension count and
// tile shape. Key: function, instance (-1: shared by every instance with this shape),
// own shape (dims, sizes), tile shape (dims, local and group counts).
using AccessKey = std::tuple<llvm::Function *, int, uint32_t, uint64_t, uint64_t, uint64_t,
                             std::array<uint64_t, 7>>;
using AccessMap = std::map<AccessKey, std::vector<Access>>;

// Every module the group uses read and linked into `dst`, kernels made internal
// functions (`callee`: per instance), the used ones cleaned; `accessOf`: per instance,
// its parameters' accesses (entries of `analysis`).
Error prepare(const IrRequest &req, llvm::LLVMContext &ctx, llvm::Module *dst,
              std::vector<llvm::Function *> &callee, AccessMap &analysis,
              std::vector<const std::vector<Access> *> &accessOf);

// ---- step 3: slot use and hazards (slot_use.cpp) ---------------------------------
// How the instances of a group (or of a part of a chain) use one slot.
struct SlotUse {
  std::vector<uint32_t> insts; // instances touching it
  bool written = false;
  bool own = true;           // every access at the work-item's own index
  bool group = true;         // every access inside the work-item's work-group tile
  uint64_t tileElem = 0;     // element size of the tile accesses
  TileShape tile;            // the tile (dims 0: some user has no tile shape)
  TileStrides tileStrides;   // the strides of its accesses (the same in every user)
  uint64_t ownElem = 0;      // element size of the own-index accesses
  std::set<uint32_t> params; // fused params bound to it (offsets)
  std::string other;         // "k2 reads tmp at another work-item's index"
  std::string outside;       // "k2 reads tmp outside its work-group"
};
using SlotUses = std::map<int32_t, SlotUse>;

// Adds instance i's accesses to `slots`.
void addUses(const IrRequest &req, uint32_t i, const std::vector<Access> &acc, SlotUses &slots);
// A slot whose accesses a work-group barrier cannot order; empty when none.
std::string hazardOf(const IrRequest &req, int32_t key, SlotUse &su);
// Step 3 of buildFusedKernel: every instance's slot uses; the first hazard and whether
// barriers are needed go to `res`.
SlotUses analyseSlots(const IrRequest &req,
                      const std::vector<const std::vector<Access> *> &accessOf, IrResult &res);

// ---- work-item remapping (remap.cpp) ------------------------------------------------
// The condition under which instance `in` runs in the fused range (nullptr: always).
llvm::Value *guardFor(llvm::IRBuilder<> &b, llvm::Module &m, const Instance &in,
                      const Range &fused);
// In `f` (a clone for instance `in`), the work-item builtins answer the instance's own
// nd-range inside the fused one (see Remap). Fails, naming the reason, for what cannot
// be remapped.
Error remapWorkItems(llvm::Function &f, const Instance &in, const Range &fused);

// ---- steps 4-5: the fused entry point, constants (entry.cpp) ------------------------
// A new kernel `<fusedName>.tmp` in `dst` with one parameter per FusedParam that calls
// every instance in order (barriers between them where res.barriers, remapped clones
// behind their guards) and has those calls inlined. Remarks name the remapped kernels.
Expected<llvm::Function *> buildEntry(const IrRequest &req, llvm::Module &dst,
                                      const std::vector<llvm::Function *> &callee, IrResult &res);
// The literal parameters the IR types allow replaced by constants (res.kept, res.baked,
// a remark each), then the kernel cleaned.
void bakeConstants(const IrRequest &req, llvm::Function &fused, IrResult &res);

// ---- step 6: internalization (internalize.cpp) --------------------------------------
// Slots promoted to local memory: per FusedParam, the placeholder argument its
// accesses now use (a __local pointer); step 7 makes it a parameter of the kernel.
struct LocalTiles {
  std::map<size_t, llvm::Argument *> arg;
  std::vector<std::unique_ptr<llvm::Argument>> placeholders; // owns every `arg`
};
// Private memory where every access is at the work-item's own index, else local memory
// where every access stays in the work-group's tile. Refusals are remarks; an Error is
// an internal inconsistency.
Error internalizeSlots(const IrRequest &req, llvm::Function &fused, SlotUses &slots,
                       const std::vector<const std::vector<Access> *> &accessOf, LocalTiles &tiles,
                       IrResult &res);

// ---- step 7: the final signature (signature.cpp) ------------------------------------
// The kernel `req.fusedName` taking the kept parameters (the local tiles as __local
// pointers) with `fused`'s body, attributes and OpenCL argument metadata; `fused` is
// erased.
llvm::Function *finalSignature(const IrRequest &req, llvm::Function *fused,
                               const std::vector<llvm::Function *> &callee, SlotUses &slots,
                               const LocalTiles &tiles, const IrResult &res);

} // namespace detail
} // namespace fusion
} // namespace cgraph
