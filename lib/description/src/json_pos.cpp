#include "json_pos.h"

#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace cgraph::desc {

namespace {

class Parser {
public:
  explicit Parser(const std::string &text) : s_(text) {}

  bool run(JValue *root, JsonError *err) {
    if (s_.size() >= 3 && std::memcmp(s_.data(), "\xEF\xBB\xBF", 3) == 0) advance(3);
    skipSpace();
    bool ok = parseValue(*root, 0);
    if (ok) {
      skipSpace();
      if (i_ < s_.size()) ok = error("unexpected '" + printable(s_[i_]) + "' after the top-level value");
    }
    if (!ok) *err = JsonError{errPos_, err_};
    return ok;
  }

private:
  const std::string &s_;
  size_t i_ = 0;
  Pos pos_;
  Pos errPos_;
  std::string err_;

  bool error(std::string msg) { return errorAt(pos_, std::move(msg)); }
  bool errorAt(Pos p, std::string msg) {
    errPos_ = p;
    err_ = std::move(msg);
    return false;
  }
  static std::string printable(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", u);
    return buf;
  }

  bool atEnd() const { return i_ >= s_.size(); }
  char peek() const { return atEnd() ? '\0' : s_[i_]; }
  void advance(size_t n = 1) {
    for (size_t k = 0; k < n && i_ < s_.size(); ++k, ++i_) {
      if (s_[i_] == '\n') {
        ++pos_.line;
        pos_.col = 1;
      } else {
        ++pos_.col;
      }
    }
  }
  void skipSpace() {
    while (!atEnd()) {
      char c = s_[i_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      advance();
    }
  }
  bool expectWord(const char *w) {
    size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0) return error("invalid literal; expected a JSON value");
    advance(n);
    return true;
  }

  bool parseValue(JValue &v, uint32_t depth) {
    v.pos = pos_;
    if (atEnd()) return error("unexpected end of input; expected a value");
    char c = peek();
    switch (c) {
    case '{': return parseObject(v, depth);
    case '[': return parseArray(v, depth);
    case '"': {
      v.kind = JValue::Kind::String;
      const size_t start = i_;
      if (!parseString(v.text)) return false;
      v.escaped = i_ - start != v.text.size() + 2; // every escape is longer than its value
      return true;
    }
    case 't': v.kind = JValue::Kind::Bool; v.boolean = true; return expectWord("true");
    case 'f': v.kind = JValue::Kind::Bool; v.boolean = false; return expectWord("false");
    case 'n': v.kind = JValue::Kind::Null; return expectWord("null");
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return parseNumber(v);
      return error("unexpected '" + printable(c) + "'; expected a value");
    }
  }

  bool enter(uint32_t depth) {
    if (depth >= kMaxJsonDepth)
      return error("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return true;
  }

  bool parseObject(JValue &v, uint32_t depth) {
    if (!enter(depth)) return false;
    v.kind = JValue::Kind::Object;
    advance(); // {
    skipSpace();
    if (peek() == '}') {
      advance();
      return true;
    }
    for (;;) {
      skipSpace();
      if (peek() != '"') {
        if (atEnd()) return error("unexpected end of input; expected '\"' to begin a key");
        return error("expected '\"' to begin an object key, found '" + printable(peek()) + "'");
      }
      Pos keyPos = pos_;
      std::string key;
      if (!parseString(key)) return false;
      for (const auto &k : v.keys)
        if (k.first == key) return errorAt(keyPos, "duplicate key '" + key + "'");
      skipSpace();
      if (peek() != ':') return error("expected ':' after key '" + key + "'");
      advance();
      skipSpace();
      v.keys.emplace_back(std::move(key), keyPos);
      v.items.emplace_back();
      if (!parseValue(v.items.back(), depth + 1)) return false;
      const Next next = afterItem('}', "object");
      if (next == Next::More) continue;
      return next == Next::Closed;
    }
  }

  enum class Next { More, Closed, Failed };
  // After an object member or array element: ',' means more, `close` ends the
  // container, anything else is an error naming what was expected.
  Next afterItem(char close, const char *container) {
    skipSpace();
    if (peek() == ',') {
      advance();
      return Next::More;
    }
    if (peek() == close) {
      advance();
      return Next::Closed;
    }
    const std::string expected = std::string("',' or '") + close + "'";
    if (atEnd()) error("unexpected end of input; expected " + expected);
    else error("expected " + expected + " in " + container + ", found '" + printable(peek()) + "'");
    return Next::Failed;
  }

  bool parseArray(JValue &v, uint32_t depth) {
    if (!enter(depth)) return false;
    v.kind = JValue::Kind::Array;
    advance(); // [
    skipSpace();
    if (peek() == ']') {
      advance();
      return true;
    }
    for (;;) {
      skipSpace();
      v.items.emplace_back();
      if (!parseValue(v.items.back(), depth + 1)) return false;
      const Next next = afterItem(']', "array");
      if (next == Next::More) continue;
      return next == Next::Closed;
    }
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  bool hex4(uint32_t *out) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = peek();
      uint32_t d;
      if (c >= '0' && c <= '9') d = uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') d = uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') d = uint32_t(c - 'A' + 10);
      else return error("invalid \\u escape; expected 4 hex digits");
      v = v * 16 + d;
      advance();
    }
    *out = v;
    return true;
  }

  // Length of the valid UTF-8 sequence at i_, or 0.
  size_t utf8Length() const {
    auto at = [&](size_t k) { return static_cast<unsigned char>(i_ + k < s_.size() ? s_[i_ + k] : 0); };
    unsigned char c = at(0);
    auto cont = [&](size_t k) { return (at(k) & 0xC0) == 0x80; };
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
      if (!cont(1) || !cont(2)) return 0;
      if (c == 0xE0 && at(1) < 0xA0) return 0;  // overlong
      if (c == 0xED && at(1) >= 0xA0) return 0; // surrogates
      return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
      if (!cont(1) || !cont(2) || !cont(3)) return 0;
      if (c == 0xF0 && at(1) < 0x90) return 0;
      if (c == 0xF4 && at(1) >= 0x90) return 0;
      return 4;
    }
    return 0;
  }

  bool parseString(std::string &out) {
    advance(); // "
    for (;;) {
      if (atEnd()) return error("unexpected end of input inside a string");
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        advance();
        return true;
      }
      if (c < 0x20) return error("control character in a string (escape it)");
      if (c == '\\') {
        advance();
        char e = peek();
        switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          advance();
          uint32_t cp = 0;
          if (!hex4(&cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (peek() != '\\' || i_ + 1 >= s_.size() || s_[i_ + 1] != 'u')
              return error("unpaired UTF-16 surrogate in \\u escape");
            advance(2);
            uint32_t lo = 0;
            if (!hex4(&lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return error("unpaired UTF-16 surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return error("unpaired UTF-16 surrogate in \\u escape");
          }
          appendUtf8(out, cp);
          continue;
        }
        default:
          return error("invalid escape '\\" + printable(e) + "' in a string");
        }
        advance();
        continue;
      }
      if (c < 0x80) {
        out += char(c);
        advance();
        continue;
      }
      size_t n = utf8Length();
      if (n == 0) return error("invalid UTF-8 in a string");
      out.append(s_, i_, n);
      // One column per code point reads better than one per byte for non-ASCII names.
      i_ += n;
      ++pos_.col;
    }
  }

  bool parseNumber(JValue &v) {
    v.kind = JValue::Kind::Number;
    size_t start = i_;
    auto digits = [&]() {
      size_t n = 0;
      while (peek() >= '0' && peek() <= '9') {
        advance();
        ++n;
      }
      return n;
    };
    if (peek() == '-') advance();
    if (peek() == '0') {
      advance();
      if (peek() >= '0' && peek() <= '9') return error("invalid number: leading zero");
    } else if (digits() == 0) {
      return error("invalid number: expected a digit");
    }
    if (peek() == '.') {
      advance();
      if (digits() == 0) return error("invalid number: expected a digit after '.'");
    }
    if (peek() == 'e' || peek() == 'E') {
      advance();
      if (peek() == '+' || peek() == '-') advance();
      if (digits() == 0) return error("invalid number: expected a digit in the exponent");
    }
    v.text = s_.substr(start, i_ - start);
    return true;
  }
};

} // namespace

bool JValue::isIntegerText() const {
  return kind == Kind::Number && text.find_first_of(".eE") == std::string::npos;
}

const JValue *JValue::find(const std::string &key) const {
  if (kind != Kind::Object) return nullptr;
  for (size_t k = 0; k < keys.size(); ++k)
    if (keys[k].first == key) return &items[k];
  return nullptr;
}

bool JValue::toU64(uint64_t *out) const {
  if (!isIntegerText() || text.empty() || text[0] == '-') {
    // "-0" is fine; other negatives are not.
    if (isIntegerText() && text == "-0") {
      *out = 0;
      return true;
    }
    return false;
  }
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE || end == nullptr || *end != '\0') return false;
  *out = v;
  return true;
}

bool JValue::toI64(int64_t *out) const {
  if (!isIntegerText()) return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || end == nullptr || *end != '\0') return false;
  *out = v;
  return true;
}

bool JValue::toDouble(double *out) const {
  if (kind != Kind::Number) return false;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || std::isinf(v)) return false;
  *out = v; // underflow to 0 or a denormal is accepted, like C
  return true;
}

const char *JValue::kindName() const {
  switch (kind) {
  case Kind::Null: return "null";
  case Kind::Bool: return "boolean";
  case Kind::Number: return "number";
  case Kind::String: return "string";
  case Kind::Array: return "array";
  case Kind::Object: return "object";
  }
  return "value";
}

bool parseJson(const std::string &text, JValue *out, JsonError *error) {
  return Parser(text).run(out, error);
}

} // namespace cgraph::desc
