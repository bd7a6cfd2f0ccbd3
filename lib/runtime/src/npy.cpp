// .npy reading and writing. The header is a Python dict literal; only the three keys
// numpy writes ('descr', 'fortran_order', 'shape') are understood, in any order.
//
// Grammar of the image (numpy.lib.format):
//   "\x93NUMPY" major:u8 minor:u8 headerLen:(u16 for 1.x, u32 for 2.x/3.x) header:bytes
//   data: product(shape) * itemsize bytes, C order
// where header = "{" key ":" value ("," key ":" value)* ","? "}" padded with spaces
// and ending in "\n".
#include "cgraph/runtime/npy.h"

#include "cgraph/format/atomic_file.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

namespace cgraph::rt {

namespace {

struct DescrEntry {
  const char *code; // without the byte-order character
  ScalarType type;
};
constexpr DescrEntry kDescrs[] = {
    {"f2", ScalarType::F16}, {"f4", ScalarType::F32}, {"f8", ScalarType::F64},
    {"i1", ScalarType::I8},  {"i2", ScalarType::I16}, {"i4", ScalarType::I32},
    {"i8", ScalarType::I64}, {"u1", ScalarType::U8},  {"u2", ScalarType::U16},
    {"u4", ScalarType::U32}, {"u8", ScalarType::U64}, {"b1", ScalarType::U8},
};

class HeaderParser {
public:
  explicit HeaderParser(const std::string &s) : s_(s) {}
  void skipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skipSpace();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skipSpace();
    return i_ < s_.size() && s_[i_] == c;
  }
  bool string(std::string *out) {
    skipSpace();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return false;
    const char q = s_[i_++];
    size_t end = s_.find(q, i_);
    if (end == std::string::npos) return false;
    *out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return true;
  }
  bool word(std::string *out) {
    skipSpace();
    size_t b = i_;
    while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
    *out = s_.substr(b, i_ - b);
    return i_ > b;
  }
  bool number(uint64_t *out) {
    skipSpace();
    size_t b = i_;
    uint64_t v = 0;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      const uint64_t d = uint64_t(s_[i_] - '0');
      if (v > (~uint64_t(0) - d) / 10) return false;
      v = v * 10 + d;
      ++i_;
    }
    if (i_ < s_.size() && s_[i_] == 'L') ++i_; // Python 2 longs
    *out = v;
    return i_ > b;
  }

private:
  const std::string &s_;
  size_t i_ = 0;
};

uint64_t readLe(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

} // namespace

uint64_t NpyArray::elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

std::string npyDescr(ScalarType type) {
  for (const DescrEntry &e : kDescrs)
    if (e.type == type && std::strcmp(e.code, "b1") != 0)
      return std::string(scalarSize(type) == 1 ? "|" : "<") + e.code;
  return "|u1";
}

Expected<NpyArray> parseNpy(const uint8_t *bytes, size_t size, const std::string &name) {
  auto fail = [&](const std::string &m) { return makeError(name + ": " + m); };
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0) return fail("not a .npy file (bad magic)");
  const uint8_t major = bytes[6];
  size_t headerStart, headerLen;
  if (major == 1) {
    headerStart = 10;
    headerLen = size_t(readLe(bytes + 8, 2));
  } else if (major == 2 || major == 3) {
    if (size < 12) return fail("truncated header");
    headerStart = 12;
    headerLen = size_t(readLe(bytes + 8, 4));
  } else {
    return fail("unsupported .npy version " + std::to_string(major) + "." +
                std::to_string(bytes[7]));
  }
  if (headerLen > size - headerStart)
    return fail("header length " + std::to_string(headerLen) + " runs past the end of the file");
  const std::string header(reinterpret_cast<const char *>(bytes + headerStart), headerLen);

  NpyArray a;
  bool haveDescr = false, haveOrder = false, haveShape = false, fortran = false;
  HeaderParser p(header);
  if (!p.eat('{')) return fail("header: expected '{'");
  while (!p.eat('}')) {
    std::string key;
    if (!p.string(&key)) return fail("header: expected a quoted key");
    if (!p.eat(':')) return fail("header: expected ':' after '" + key + "'");
    if (key == "descr") {
      if (!p.string(&a.descr)) return fail("header: 'descr' is not a string (structured dtypes are not supported)");
      haveDescr = true;
    } else if (key == "fortran_order") {
      std::string w;
      if (!p.word(&w) || (w != "True" && w != "False"))
        return fail("header: 'fortran_order' must be True or False");
      fortran = w == "True";
      haveOrder = true;
    } else if (key == "shape") {
      if (!p.eat('(')) return fail("header: 'shape' must be a tuple");
      while (!p.eat(')')) {
        uint64_t d;
        if (!p.number(&d)) return fail("header: bad dimension in 'shape'");
        if (a.shape.size() >= 32) return fail("header: more than 32 dimensions");
        a.shape.push_back(d);
        if (!p.eat(',') && !p.peek(')')) return fail("header: expected ',' or ')' in 'shape'");
      }
      haveShape = true;
    } else {
      return fail("header: unknown key '" + key + "'");
    }
    if (!p.eat(',') && !p.peek('}')) return fail("header: expected ',' or '}'");
  }
  if (!haveDescr || !haveOrder || !haveShape)
    return fail("header: missing key '" +
                std::string(!haveDescr ? "descr" : !haveOrder ? "fortran_order" : "shape") + "'");
  if (a.descr.size() != 3) return fail("header: unsupported dtype '" + a.descr + "'");
  const char order = a.descr[0];
  if (order == '>') return fail("header: dtype '" + a.descr + "' is big-endian");
  if (order != '<' && order != '|' && order != '=')
    return fail("header: unsupported dtype '" + a.descr + "'");
  bool known = false;
  for (const DescrEntry &e : kDescrs)
    if (a.descr.compare(1, 2, e.code) == 0) {
      a.type = e.type;
      known = true;
    }
  if (!known) return fail("header: unsupported dtype '" + a.descr + "'");
  if (order == '|' && scalarSize(a.type) != 1)
    return fail("header: dtype '" + a.descr + "' has no byte order");
  if (fortran && a.shape.size() > 1)
    return fail("header: fortran_order arrays are not supported (write C order)");

  const uint64_t item = scalarSize(a.type);
  uint64_t count = 1;
  for (uint64_t d : a.shape) {
    if (d != 0 && count > (~uint64_t(0) / item) / d) return fail("shape is too large");
    count *= d;
  }
  const uint64_t need = count * item;
  const size_t dataStart = headerStart + headerLen;
  const uint64_t have = size - dataStart;
  if (have < need)
    return fail("payload has " + std::to_string(have) + " bytes, shape of " +
                std::to_string(count) + " " + a.descr + " elements needs " + std::to_string(need));
  if (have > need)
    return fail("payload has " + std::to_string(have - need) + " trailing bytes");
  a.data.assign(bytes + dataStart, bytes + dataStart + need);
  return a;
}

Expected<std::vector<uint8_t>> readBinaryFile(const std::string &path) {
  std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return makeError(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) out.insert(out.end(), buf, buf + n);
  if (std::ferror(f.get())) return makeError(path + ": read failed: " + std::strerror(errno));
  return out;
}

Error writeBinaryFile(const std::string &path, const void *data, uint64_t bytes) {
  // Atomic (temporary + fsync + rename): a failed write (a full disk, the file size
  // limit) leaves no truncated file under `path` and an existing one untouched.
  if (bytes > uint64_t(SIZE_MAX)) return makeError(path + ": " + std::to_string(bytes) + " bytes is too large to write");
  return writeFileAtomic(path, static_cast<const uint8_t *>(data), size_t(bytes));
}

Expected<NpyArray> readNpyFile(const std::string &path) {
  Expected<std::vector<uint8_t>> bytes = readBinaryFile(path);
  if (!bytes) return bytes.error();
  return parseNpy(bytes->data(), bytes->size(), path);
}

Expected<std::vector<uint8_t>> encodeNpy(ScalarType type, const void *data, uint64_t bytes,
                                         std::vector<uint64_t> shape) {
  const uint64_t item = scalarSize(type);
  if (item == 0) return makeError("npy: invalid element type");
  if (bytes % item != 0)
    return makeError("npy: " + std::to_string(bytes) + " bytes is not a whole number of " +
                     scalarName(type) + " elements");
  if (shape.empty()) shape.push_back(bytes / item);
  uint64_t count = 1;
  for (uint64_t d : shape) count *= d;
  if (count * item != bytes)
    return makeError("npy: shape has " + std::to_string(count) + " elements but the data has " +
                     std::to_string(bytes / item));
  std::string header = "{'descr': '" + npyDescr(type) + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) header += std::to_string(shape[i]) + ", ";
  if (shape.size() > 1) header.resize(header.size() - 2);
  else header.resize(header.size() - 1); // keep the 1-tuple comma: "(4,)"
  header += "), }";
  // Total header (magic + len + dict + padding + '\n') is a multiple of 64 (numpy does it).
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 0xFFFF) return makeError("npy: header too long");
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              uint8_t(header.size() & 0xFF), uint8_t(header.size() >> 8)};
  out.insert(out.end(), header.begin(), header.end());
  const uint8_t *d = static_cast<const uint8_t *>(data);
  out.insert(out.end(), d, d + bytes);
  return out;
}

Error writeNpyFile(const std::string &path, ScalarType type, const void *data, uint64_t bytes,
                   std::vector<uint64_t> shape) {
  Expected<std::vector<uint8_t>> img = encodeNpy(type, data, bytes, std::move(shape));
  if (!img) return img.error().withContext(path);
  return writeBinaryFile(path, img->data(), img->size());
}

bool isNpyPath(const std::string &path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  for (char &c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".npy";
}

Expected<std::vector<uint8_t>> readDataFile(const std::string &path, NpyArray *header) {
  if (!isNpyPath(path)) return readBinaryFile(path);
  Expected<NpyArray> a = readNpyFile(path);
  if (!a) return a.error();
  std::vector<uint8_t> data = std::move(a->data);
  if (header) *header = std::move(*a);
  return data;
}

} // namespace cgraph::rt
