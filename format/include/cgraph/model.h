// The in-memory command graph: exactly what a .cgf file holds.
//
// This is the one data model every layer shares: the builder (lib/graph) produces it,
// cgc serializes it (format/writer.h), runtimes read it (format/reader.h) and finalize
// it for a device. Plain value types with public fields; all cross references are
// indices into the vectors of the same Graph (kNone = absent).
//
// Ownership: a Graph owns everything it refers to, including subgraphs and all blob
// bytes. Thread-safety: none; treat a Graph as a value (copy, or share as const).
// Validation: a Graph built by hand may be inconsistent; lib/graph/validate.h checks
// semantics, the reader (format/reader.h) guarantees structural soundness (every index
// in range, every count bounded) for graphs it returns.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cgraph {

constexpr uint32_t kNone = 0xFFFFFFFFu;

enum class ScalarType : uint8_t {
  I8 = 1, I16 = 2, I32 = 3, I64 = 4,
  U8 = 5, U16 = 6, U32 = 7, U64 = 8,
  F16 = 9, F32 = 10, F64 = 11,
};
// Size in bytes (1..8); 0 for an invalid value.
uint32_t scalarSize(ScalarType t);
const char *scalarName(ScalarType t);              // "i32", "f32", ...
bool parseScalarType(const std::string &s, ScalarType *out);

// ---- binding slots -------------------------------------------------------------
enum SlotUsage : uint32_t {
  kUsageRead = 1u << 0,     // read by a kernel or host task
  kUsageWrite = 1u << 1,    // written by a kernel or host task
  kUsageTransfer = 1u << 2, // source or target of copy/fill
};

enum class SlotInit : uint8_t {
  External = 0, // supplied per submission through a binding table
  Data = 1,     // initial contents embedded in the file (`data`, size bytes)
  Fill = 2,     // allocated by the runtime, filled with `data` (pattern, 1..128 bytes)
  File = 3,     // contents read from `path` at run time (inside allowed dirs)
  Transient = 4 // allocated by the runtime, contents undefined until written
};

struct Slot {
  std::string name;
  uint64_t size = 0;       // bytes
  uint32_t alignment = 16; // power of two
  uint32_t usage = 0;      // SlotUsage bits, accumulated from the nodes that use it
  SlotInit init = SlotInit::External;
  std::vector<uint8_t> data; // Data: `size` bytes; Fill: the pattern
  std::string path;          // File
};

// ---- parameters ----------------------------------------------------------------
struct Param {
  std::string name;
  ScalarType type = ScalarType::I32;
  uint64_t defaultBits = 0; // value bits, little-endian, zero-extended to 64
};

// ---- kernels -------------------------------------------------------------------
enum class FormKind : uint8_t {
  SpirV = 1,        // SPIR-V binary (always present, form 0)
  OpenCLC = 2,      // OpenCL C source
  LLVMBitcode = 3,  // LLVM bitcode (e.g. spir64, or lowered for a target)
  PTX = 4,
  Cubin = 5,
  AmdgcnCodeObject = 6,
  HostObject = 7,   // ELF relocatable for a host triple
};
const char *formKindName(FormKind k);

struct KernelForm {
  FormKind kind = FormKind::SpirV;
  std::string target;  // e.g. "spirv64", "spir64", "nvptx64-sm_80", "x86_64"
  std::string options; // build options used to produce it
  std::vector<uint8_t> bytes;
};

struct KernelModule {
  std::string name;             // usually the source file name
  std::vector<KernelForm> forms; // forms[0] is SPIR-V
};

enum class ParamKind : uint8_t {
  GlobalBuffer = 1,   // __global T*
  ConstantBuffer = 2, // __constant T*
  LocalBuffer = 3,    // __local T* (size given by the node's LocalMem arg)
  Scalar = 4,         // by-value scalar or small struct/vector
};

enum ParamQualifier : uint32_t {
  kQualConst = 1u << 0,
  kQualRestrict = 1u << 1,
  kQualVolatile = 1u << 2,
};

struct KernelParam {
  std::string name;     // may be empty if the module has no names
  std::string typeName; // OpenCL type spelling, e.g. "float*", "int"
  ParamKind kind = ParamKind::Scalar;
  uint32_t size = 0;       // Scalar: bytes of the value; buffers: pointee size or 0
  uint32_t qualifiers = 0; // ParamQualifier bits
};

struct Kernel {
  std::string name;
  uint32_t module = kNone; // index into Graph::modules
  std::vector<KernelParam> params;
  uint32_t reqdLocal[3] = {0, 0, 0}; // reqd_work_group_size, 0 = none
};
// Why kernel `b` cannot stand in for kernel `a` as a node's alternative ("parameter 1 is
// float*, not int*"), or "" when their signatures match: the same parameter count and,
// per parameter, the same kind, size, qualifiers and type spelling.
std::string signatureDifference(const Kernel &a, const Kernel &b);

// ---- nodes ---------------------------------------------------------------------
enum class NodeKind : uint8_t {
  Kernel = 1,
  Copy = 2,
  CopyRect = 3,
  Fill = 4,
  Host = 5,
  Barrier = 6,
  Subgraph = 7,
  Conditional = 8, // if/while over a body subgraph (.cgf 2.1, COND)
  Collective = 9,  // all_reduce, all_gather, ... across ranks (.cgf 2.3, COLL)
};
const char *nodeKindName(NodeKind k);

enum class ArgKind : uint8_t {
  Slot = 1,     // buffer: `index` = slot, `value` = byte offset
  Scalar = 2,   // literal: `type`, `value` = bits
  Param = 3,    // graph parameter: `index` = param
  LocalMem = 4, // __local allocation: `value` = bytes
  String = 5,   // host tasks only: `text`
};

struct Arg {
  ArgKind kind = ArgKind::Scalar;
  ScalarType type = ScalarType::I32; // Scalar
  uint32_t index = kNone;            // Slot, Param
  uint64_t value = 0;                // Slot offset, Scalar bits, LocalMem bytes
  std::string text;                  // String

  static Arg slot(uint32_t s, uint64_t offset = 0) { Arg a; a.kind = ArgKind::Slot; a.index = s; a.value = offset; return a; }
  static Arg scalar(ScalarType t, uint64_t bits) { Arg a; a.kind = ArgKind::Scalar; a.type = t; a.value = bits; return a; }
  static Arg param(uint32_t p) { Arg a; a.kind = ArgKind::Param; a.index = p; return a; }
  static Arg localMem(uint64_t bytes) { Arg a; a.kind = ArgKind::LocalMem; a.value = bytes; return a; }
  static Arg string(std::string s) { Arg a; a.kind = ArgKind::String; a.text = std::move(s); return a; }
};

// One dimension of an nd-range: a literal, or a graph parameter (integer typed).
struct Dim {
  uint64_t value = 0;
  uint32_t param = kNone; // when set, the value comes from this parameter
};

struct NDRange {
  uint32_t dims = 1;    // 1..3
  Dim global[3];        // unused dims: value 1
  Dim local[3];         // value 0 in every dim = runtime chooses
  Dim offset[3];        // global offset, default 0
  bool hasLocal() const { return local[0].value != 0 || local[0].param != kNone; }
};

// Byte copy between slots. For CopyRect, `region`/pitches apply (bytes, rows, slices).
struct CopyOp {
  uint32_t srcSlot = kNone;
  uint64_t srcOffset = 0;
  uint32_t dstSlot = kNone;
  uint64_t dstOffset = 0;
  uint64_t bytes = 0; // Copy
  // CopyRect only
  uint64_t region[3] = {0, 1, 1}; // width in bytes, height in rows, depth in slices
  uint64_t srcRowPitch = 0, srcSlicePitch = 0;
  uint64_t dstRowPitch = 0, dstSlicePitch = 0;
};

struct FillOp {
  uint32_t slot = kNone;
  uint64_t offset = 0;
  uint64_t bytes = 0;            // multiple of pattern size
  std::vector<uint8_t> pattern;  // 1..128 bytes
};

struct HostOp {
  std::string op;      // built-in name ("checksum", "print", ...) or plugin symbol
  std::string library; // empty: built-in; else a shared library path (plugin)
};

// Conditional nodes (CUDA's IF/WHILE conditional nodes, issue 10): the condition is the
// u32 at byte `offset` of `slot`, written by earlier device work; nonzero = true.
enum class CondKind : uint8_t {
  If = 0,    // the body runs once when the condition is true
  While = 1, // the condition is read before every trip; the body runs while it is true
};
const char *condKindName(CondKind k);
struct CondOp {
  CondKind kind = CondKind::If;
  uint32_t slot = kNone;
  uint64_t offset = 0; // a multiple of 4; offset + 4 <= the slot's size
  // While: the most trips the body may make (>= 1). A condition still true after them
  // is an error of the submission, never a silent stop. If: 0.
  uint32_t maxTrips = 0;
};

// Collective nodes (issue "collective nodes"): data exchanged between the ranks of a
// communicator the caller binds at finalize (rt::Communicator), never stored in the
// file. Rank and world size reach a graph as ordinary parameters (`$rank`, `$world`),
// so one file serves every rank and world size.
enum class CollKind : uint8_t {
  AllReduce = 0,     // recv[0, count) = op over ranks of send[0, count)
  AllGather = 1,     // recv[r*count, (r+1)*count) = rank r's send[0, count)
  ReduceScatter = 2, // recv[0, count) = op over ranks of send[rank*count, (rank+1)*count)
  Broadcast = 3,     // recv[0, count) = rank `peer`'s send[0, count) (root)
  Send = 4,          // send[0, count) to rank `peer`; no recv slot
  Recv = 5,          // recv[0, count) from rank `peer`; no send slot
};
constexpr uint8_t kCollKindMax = 5;
enum class ReduceOp : uint8_t { Sum = 0, Max = 1, Min = 2, Prod = 3 };
constexpr uint8_t kReduceOpMax = 3;
// "all_reduce", "all_gather", "reduce_scatter", "broadcast", "send", "recv".
const char *collKindName(CollKind k);
bool parseCollKind(const std::string &s, CollKind *out);
const char *reduceOpName(ReduceOp op); // "sum", "max", "min", "prod"
bool parseReduceOp(const std::string &s, ReduceOp *out);
// Whether the kind reads a send side / writes a receive side / reduces / has a peer.
inline bool collHasSend(CollKind k) { return k != CollKind::Recv; }
inline bool collHasRecv(CollKind k) { return k != CollKind::Send; }
inline bool collReduces(CollKind k) { return k == CollKind::AllReduce || k == CollKind::ReduceScatter; }
inline bool collHasPeer(CollKind k) {
  return k == CollKind::Broadcast || k == CollKind::Send || k == CollKind::Recv;
}
// Elements of the send / receive side for a world of `world` ranks (all_gather's
// receive side and reduce_scatter's send side are `world` blocks of `count`).
inline uint64_t collSendElems(CollKind k, uint64_t count, uint64_t world) {
  return k == CollKind::ReduceScatter ? count * world : collHasSend(k) ? count : 0;
}
inline uint64_t collRecvElems(CollKind k, uint64_t count, uint64_t world) {
  return k == CollKind::AllGather ? count * world : collHasRecv(k) ? count : 0;
}

struct CollectiveOp {
  CollKind kind = CollKind::AllReduce;
  ReduceOp op = ReduceOp::Sum;       // AllReduce, ReduceScatter; Sum otherwise
  ScalarType type = ScalarType::F32; // element type
  uint32_t sendSlot = kNone;         // kNone for Recv
  uint64_t sendOffset = 0;           // bytes
  uint32_t recvSlot = kNone;         // kNone for Send; may equal sendSlot (in place)
  uint64_t recvOffset = 0;           // bytes
  uint64_t count = 0;                // elements per rank (see CollKind)
  uint64_t peer = 0;                 // Broadcast: the root; Send/Recv: the peer; else 0
};

// Logical devices a graph may place nodes on (Node::device < kMaxDevices).
constexpr uint32_t kMaxDevices = 64;

struct Node {
  std::string name;
  NodeKind kind = NodeKind::Barrier;
  // Kernel
  uint32_t kernel = kNone;
  NDRange range;
  // Kernel: the kernels an update may switch this node to (UR's kernel alternatives),
  // `kernel` among them; empty = `kernel` only. All have the same signature (same
  // parameter count, kinds, sizes and qualifiers), so arguments and hazards stay valid.
  std::vector<uint32_t> alternatives;
  // Kernel and Host
  std::vector<Arg> args;
  // Copy, CopyRect
  CopyOp copy;
  // Fill
  FillOp fill;
  // Host
  HostOp host;
  // Subgraph, and the body of a Conditional: index into Graph::subgraphs; child slot i
  // binds parent slot subgraphSlots[i]; child params bind by name to parent params of
  // the same name.
  uint32_t subgraph = kNone;
  std::vector<uint32_t> subgraphSlots;
  // Conditional
  CondOp cond;
  // Collective
  CollectiveOp coll;
  // Any node: the logical device it runs on (< kMaxDevices) (an index into the device list the user
  // maps at run time, e.g. `cgrun --backend cpu --backend opencl`); 0 = the first.
  uint32_t device = 0;
};

struct Edge {
  uint32_t from = kNone; // must complete before `to` starts
  uint32_t to = kNone;
};

// A partition is a run of nodes one backend command buffer can execute
// (host tasks split partitions, as in the SYCL graph design).
struct Partition {
  std::vector<uint32_t> nodes; // in execution order
  std::vector<uint32_t> deps;  // partition indices that must complete first
};

// A field whose value is an integer expression over graph parameters (issue 12, .cgf
// 2.0): evaluated per submission by the runtime. The field itself keeps a plain value
// (cgc stores the value at the parameters' defaults, or the smallest valid one) for
// tools that do not evaluate expressions.
enum class ExprField : uint16_t {
  Global0 = 0,
  Global1 = 1,
  Global2 = 2, // Kernel: range.global[d]
  Local0 = 3,
  Local1 = 4,
  Local2 = 5, // Kernel: range.local[d]
  Offset0 = 6,
  Offset1 = 7,
  Offset2 = 8,    // Kernel: range.offset[d]
  ScalarArg = 16, // Kernel or Host: args[arg] (kind Scalar, integer type)
  // The fields below (and ScalarArg of a Host node) need header flag bit 2 (.cgf 2.2).
  CopySrcOffset = 20, // Copy: copy.srcOffset
  CopyDstOffset = 21, // Copy: copy.dstOffset
  CopyBytes = 22,     // Copy: copy.bytes
  FillOffset = 24,    // Fill: fill.offset
  FillBytes = 25,     // Fill: fill.bytes
  SlotSize = 32,      // node = kNone, arg = the slot: slots[arg].size
  // Collective fields (.cgf 2.3, with the collective nodes themselves).
  CollSendOffset = 40, // coll.sendOffset
  CollRecvOffset = 41, // coll.recvOffset
  CollCount = 42,      // coll.count
  CollPeer = 43,       // coll.peer (root or peer rank)
};
constexpr uint16_t kExprFieldMax = 43;
// "global[0]", "local[2]", "arg 3", "src offset", "dst offset", "bytes", "offset",
// "size", "send offset", "recv offset", "count", "peer"; "?" for an unknown field.
std::string exprFieldName(ExprField f, uint32_t arg);
// Whether `f` is a field of a copy or fill node (CopySrcOffset..FillBytes).
inline bool isTransferField(ExprField f) {
  const uint16_t v = static_cast<uint16_t>(f);
  return v >= 20 && v <= 25 && v != 23;
}

// Whether `f` is a field of a collective node (CollSendOffset..CollPeer).
inline bool isCollectiveField(ExprField f) {
  const uint16_t v = static_cast<uint16_t>(f);
  return v >= 40 && v <= 43;
}

struct FieldExpr {
  uint32_t node = kNone; // index into Graph::nodes; kNone for SlotSize
  ExprField field = ExprField::Global0;
  uint32_t arg = 0; // ScalarArg: the argument index; SlotSize: the slot; otherwise 0
  // The program in cgraph/expr.h's serialized form (`encode`); variable i is
  // Graph::params[i] (which must be integer typed).
  std::vector<uint8_t> code;
};

struct Graph {
  std::string name;
  std::vector<Slot> slots;
  std::vector<Param> params;
  std::vector<KernelModule> modules;
  std::vector<Kernel> kernels;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<uint32_t> order;        // execution order (empty = not computed)
  std::vector<Partition> partitions;  // empty = not computed
  std::vector<Graph> subgraphs;
  std::vector<std::pair<std::string, std::string>> metadata;
  // Stored parameter expressions, sorted by (node, field, arg), at most one per field
  // (slot sizes, node kNone, last).
  std::vector<FieldExpr> exprs;

  uint32_t findSlot(const std::string &n) const;
  uint32_t findParam(const std::string &n) const;
  uint32_t findKernel(const std::string &n) const;
  uint32_t findNode(const std::string &n) const;
};

} // namespace cgraph
