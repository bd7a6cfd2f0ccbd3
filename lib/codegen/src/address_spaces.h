// Step 4 of the table-ABI lowering (table_abi.h): the module's address spaces remapped on
// the IR. Not installed.
//
// Every type goes through a type remapper: a pointer in a space of `spaces` gets the
// space it maps to, and the structs, arrays, vectors and function types that hold one
// are rebuilt around it (an identified struct becomes a new struct of the same name).
// Globals whose type or space changes are re-created in place of the old ones, every
// function with a body is cloned into a new function of the remapped type
// (CloneFunctionInto), declarations of a new type or name are re-declared: an intrinsic
// under the name of its new overload (llvm.memcpy.p4i8.p2i8.i64 -> llvm.memcpy.p0i8.p1i8.i64
// for {4 -> 0, 2 -> 1}), any other declaration under `builtinName(its name)`.
// Declarations that end up with one name (vload4 from global and from constant, both
// from global afterwards) become the first of them in module order. An addrspacecast
// between two spaces that now are one (private 0 and generic 4) becomes a bitcast, or
// its operand where the types agree. Module order, value names and metadata are kept.
//
// Failure modes (an Error): two functions that end up with one name where not both are
// declarations of one type; an intrinsic whose remapped type is none of its overloads;
// a replaced global that something outside the module's functions and globals still
// uses.
#pragma once

#include "cgraph/error.h"

#include <functional>
#include <map>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace cgraph::codegen {

Error remapAddressSpaces(llvm::Module &m, const std::map<unsigned, unsigned> &spaces,
                         const std::function<std::string(const std::string &)> &builtinName);

// `s` with every `from` replaced by `to`: how a target's builtinName rewrites the address
// space qualifiers (U3AS<n>) of a mangled builtin name.
inline std::string replaceAll(std::string s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

} // namespace cgraph::codegen
