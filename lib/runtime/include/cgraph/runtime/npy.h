// NumPy .npy files (format versions 1.0, 2.0 and 3.0) and raw binary files.
//
// Accepted: little-endian or byte-free dtypes '<f2 <f4 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4
// <u8' ('|i1', '|u1' and '|b1' read as u8), C order (fortran_order True is accepted only
// for 0-D and 1-D arrays, where the layouts agree). Big-endian data, object and
// structured dtypes are refused. Written files are version 1.0, C order.
//
// Errors name the file and the problem (`x.npy: header: dtype '>f4' is big-endian`,
// `x.npy: payload has 12 bytes, shape (4,) of <f4 needs 16`). Reading never allocates
// more than the file size. Pure functions; thread-safe; results owned by the caller.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cgraph::rt {

struct NpyArray {
  ScalarType type = ScalarType::U8;
  std::string descr;            // as written in the header, e.g. "<f4"
  std::vector<uint64_t> shape;  // empty = 0-D (one element)
  std::vector<uint8_t> data;    // element bytes, C order
  uint64_t elements() const;
};

// Parses a whole .npy image; `name` prefixes error messages.
Expected<NpyArray> parseNpy(const uint8_t *bytes, size_t size, const std::string &name);
Expected<NpyArray> readNpyFile(const std::string &path);
// The .npy image of `bytes` bytes of `type` elements; shape empty = 1-D of all elements.
// Fails when bytes is not a multiple of the element size or disagrees with `shape`.
Expected<std::vector<uint8_t>> encodeNpy(ScalarType type, const void *data, uint64_t bytes,
                                         std::vector<uint64_t> shape = {});
Error writeNpyFile(const std::string &path, ScalarType type, const void *data, uint64_t bytes,
                   std::vector<uint64_t> shape = {});
// The numpy descr of a type ("<f4"); "|u1"/"|i1" for 1-byte types.
std::string npyDescr(ScalarType type);

Expected<std::vector<uint8_t>> readBinaryFile(const std::string &path);
Error writeBinaryFile(const std::string &path, const void *data, uint64_t bytes);

// True when `path` ends in ".npy" (case-insensitive).
bool isNpyPath(const std::string &path);
// A data file's bytes: the .npy payload when isNpyPath (type in *npyType when non-null),
// else the raw file contents.
Expected<std::vector<uint8_t>> readDataFile(const std::string &path, NpyArray *header = nullptr);

} // namespace cgraph::rt
