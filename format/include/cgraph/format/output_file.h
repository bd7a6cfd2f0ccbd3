// Writing a tool's output file (cgc -o, cgfuse -o, cgrun --output and --trace): what
// happens depends on what the path names when the write starts.
//
//   "-"                        standard output (file descriptor 1)
//   nothing yet, or a regular  writeFileAtomic (atomic_file.h): temporary beside it,
//   file                       fsync, rename; on failure the old file is untouched
//   a character device or a    written through: opened without O_CREAT or O_TRUNC and
//   FIFO (/dev/null, a pipe)   written, never renamed over
//   a symbolic link            followed: a link to a regular file (or a dangling one)
//                              writes the file it finally points to atomically, in
//                              that file's directory, and leaves the link in place; a
//                              link to a device or FIFO is written through; a link to
//                              the file open as standard output (/dev/stdout) writes
//                              to file descriptor 1
//   a directory, socket or     refused with an Error naming the path and its kind
//   block device
//
// Errors name the path and the OS reason; EFBIG (the process's file size limit,
// `ulimit -f`) says so. Tools should ignore SIGXFSZ so that such a write fails with
// EFBIG instead of killing the process (the temporary file is then removed).
// `osErrorOut`, when given, receives the errno of a failed OS call (0 otherwise).
//
// Ownership: the caller owns the bytes; nothing is kept. Thread-safety: as
// writeFileAtomic; writes to standard output from several threads may interleave.
#pragma once

#include "cgraph/format/atomic_file.h"
#include "cgraph/format/writer.h"

namespace cgraph {

Error writeOutputFile(const std::string &path, std::initializer_list<ByteSpan> parts, int *osErrorOut = nullptr);

inline Error writeOutputFile(const std::string &path, const void *data, size_t size, int *osErrorOut = nullptr) {
  return writeOutputFile(path, {ByteSpan{data, size}}, osErrorOut);
}

// writeCgf(g, opts) written with writeOutputFile; encoding errors name the path.
Error writeCgfOutput(const Graph &g, const std::string &path, const WriteOptions &opts = {});

} // namespace cgraph
