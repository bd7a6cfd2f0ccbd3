// The one atomic file write of the project (the .cgf writer, cgc's text outputs and the
// persistent cache all use it; it lives here because format is the lowest layer).
//
// writeFileAtomic writes `parts`, in order, to a new temporary file beside `path`
// ("<path>.tmp.<pid>.<n>", created with O_EXCL so concurrent writers never share
// one), fsyncs it, then renames it over `path` (the commit) and fsyncs the directory.
// Nothing is committed unless every byte was written and synced: on any failure
// (missing or read-only directory, ENOSPC, EDQUOT, EFBIG, EIO, ...) the temporary
// file is removed, an existing file at `path` is left exactly as it was, and an
// Error naming the path and the OS reason is returned. `osErrorOut`, when given,
// receives that errno (0 on success) so callers can tell "this disk takes no writes"
// from "this one file failed". A failed fsync of the directory after the rename is
// not reported: the new contents are in place, only their durability is weaker.
//
// Ownership: the caller owns the bytes; nothing is kept. Thread-safety: no shared
// state beyond an atomic counter; concurrent calls are safe, and concurrent writes
// to one path leave one complete version (the last rename wins).
#pragma once

#include "cgraph/error.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace cgraph {

struct ByteSpan {
  const void *data = nullptr;
  size_t size = 0;
};

Error writeFileAtomic(const std::string &path, std::initializer_list<ByteSpan> parts, int *osErrorOut = nullptr);

inline Error writeFileAtomic(const std::string &path, const uint8_t *data, size_t size, int *osErrorOut = nullptr) {
  return writeFileAtomic(path, {ByteSpan{data, size}}, osErrorOut);
}

} // namespace cgraph
