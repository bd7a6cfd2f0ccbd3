// Integer expressions (cgraph/graph/expr.h): parse, fold, evaluate, encode/decode.
#include <cgraph/graph/expr.h>

#include <catch2/catch.hpp>

#include <limits>

using namespace cgraph;
using namespace cgraph::expr;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Program parseOk(const std::string &text) {
  INFO(text);
  uint32_t off = 999;
  auto p = parse(text, &off);
  INFO((p.ok() ? std::string() : p.error().message() + " at " + std::to_string(off)));
  REQUIRE(p.ok());
  return *p;
}

// Evaluates `text` with the given variables bound by name.
int64_t eval(const std::string &text, const Bindings &vars = {}) {
  Program p = parseOk(text);
  std::vector<int64_t> values;
  for (const std::string &n : p.names) {
    auto it = vars.find(n);
    REQUIRE(it != vars.end());
    values.push_back(it->second);
  }
  auto r = evaluate(p, values);
  INFO(text);
  INFO((r.ok() ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  // Folding everything must give the same value.
  auto f = fold(p, vars);
  REQUIRE(f.ok());
  REQUIRE(f->constant().has_value());
  CHECK(*f->constant() == *r);
  return *r;
}

struct Failure {
  std::string message;
  uint32_t offset;
};

Failure parseFail(const std::string &text) {
  INFO(text);
  uint32_t off = 999;
  auto p = parse(text, &off);
  REQUIRE_FALSE(p.ok());
  return {p.error().message(), off};
}

Failure evalFail(const std::string &text, const Bindings &vars = {}) {
  Program p = parseOk(text);
  std::vector<int64_t> values;
  for (const std::string &n : p.names)
    values.push_back(vars.at(n));
  uint32_t off = 999;
  auto r = evaluate(p, values, &off);
  INFO(text);
  REQUIRE_FALSE(r.ok());
  return {r.error().message(), off};
}

} // namespace

TEST_CASE("every operator, with C semantics", "[graph][expr]") {
  CHECK(eval("7") == 7);
  CHECK(eval("2 + 3") == 5);
  CHECK(eval("2 - 3") == -1);
  CHECK(eval("6 * 7") == 42);
  CHECK(eval("-6") == -6);
  CHECK(eval("--6") == 6);
  CHECK(eval("- (2 + 3)") == -5);
  // Division truncates toward zero; the remainder has the sign of the dividend.
  CHECK(eval("7 / 2") == 3);
  CHECK(eval("-7 / 2") == -3);
  CHECK(eval("7 / -2") == -3);
  CHECK(eval("-7 / -2") == 3);
  CHECK(eval("7 % 3") == 1);
  CHECK(eval("-7 % 3") == -1);
  CHECK(eval("7 % -3") == 1);
  CHECK(eval("-9223372036854775807 - 1") == kMin);
  CHECK(eval("(-9223372036854775807 - 1) % -1") == 0);
  CHECK(eval("min(3, -4)") == -4);
  CHECK(eval("max(3, -4)") == 3);
  CHECK(eval("ceil_div(10, 4)") == 3);
  CHECK(eval("ceil_div(8, 4)") == 2);
  CHECK(eval("ceil_div(0, 4)") == 0);
  CHECK(eval("ceil_div(-10, 4)") == -2); // ceil(-2.5)
  CHECK(eval("ceil_div(10, -4)") == -2);
  CHECK(eval("ceil_div(-10, -4)") == 3);                           // ceil(2.5)
  CHECK(eval("ceil_div(9223372036854775807, 2)") == kMax / 2 + 1); // no (a + b - 1) overflow
  CHECK(eval("align_up(1, 256)") == 256);
  CHECK(eval("align_up(256, 256)") == 256);
  CHECK(eval("align_up(257, 256)") == 512);
  CHECK(eval("align_up(0, 64)") == 0);
  CHECK(eval("align_up(-5, 4)") == -4);
  CHECK(eval("align_up(-8, 4)") == -8);
}

TEST_CASE("precedence, associativity and parentheses", "[graph][expr]") {
  CHECK(eval("2 + 3 * 4") == 14);
  CHECK(eval("(2 + 3) * 4") == 20);
  CHECK(eval("10 - 4 - 3") == 3);   // left-associative
  CHECK(eval("100 / 10 / 5") == 2); // left-associative
  CHECK(eval("2 * 3 % 4") == 2);    // (2 * 3) % 4
  CHECK(eval("-2 * 3") == -6);
  CHECK(eval("- 2 - -3") == 1);
  CHECK(eval("1 + min(2 * 3, 4) * 2") == 9);
  CHECK(eval("align_up($n - $k - 1, 64)", {{"n", 256}, {"k", 0}}) == 256);
  CHECK(eval("align_up($n - $k - 1, 64)", {{"n", 256}, {"k", 200}}) == 64);
  CHECK(eval("\t ( ( $k ) ) + 1 ", {{"k", 4}}) == 5);
  CHECK(eval("$k*$k+$k", {{"k", 3}}) == 12);
}

TEST_CASE("parse builds compact postfix code with offsets and names", "[graph][expr]") {
  Program p = parseOk("align_up($n - $k - 1, 256)");
  REQUIRE(p.code.size() == 7);
  CHECK(p.code[0] == Instr{Op::Var, 0});
  CHECK(p.code[1] == Instr{Op::Var, 1});
  CHECK(p.code[2] == Instr{Op::Sub, 0});
  CHECK(p.code[3] == Instr{Op::Lit, 1});
  CHECK(p.code[4] == Instr{Op::Sub, 0});
  CHECK(p.code[5] == Instr{Op::Lit, 256});
  CHECK(p.code[6] == Instr{Op::AlignUp, 0});
  CHECK(p.names == std::vector<std::string>{"n", "k"});
  CHECK(p.offsets == std::vector<uint32_t>{9, 14, 12, 19, 17, 22, 0});
  CHECK(p.maxStack == 2);
  CHECK(p.toString() == "align_up($n - $k - 1, 256)");
  CHECK(parseOk("$a + $a").names.size() == 1); // one variable, used twice
  CHECK(parseOk("(1 - 2) - (3 - 4) * -$x").toString() == "1 - 2 - (3 - 4) * -$x");
  CHECK(parseOk("1 - (2 - 3)").toString() == "1 - (2 - 3)");
  CHECK(parseOk("-(1 + 2)").toString() == "-(1 + 2)");
  CHECK(parseOk("42").constant() == 42);
  CHECK_FALSE(parseOk("$x").constant().has_value());
}

TEST_CASE("syntax errors give the byte offset of the offending token", "[graph][expr]") {
  auto check = [](const std::string &text, const std::string &message, uint32_t offset) {
    Failure f = parseFail(text);
    INFO(text);
    CHECK(f.message == message);
    CHECK(f.offset == offset);
  };
  check("", "empty expression", 0);
  check("   ", "empty expression", 3);
  check("1 +", "unexpected end of expression; expected a value", 3);
  check("1 + * 2", "unexpected '*'; expected a value", 4);
  check("(1 + 2", "unbalanced '('", 0);
  check("1 + 2)", "unbalanced ')'", 5);
  check("1 2", "unexpected number '2' after the expression", 2);
  check("$", "expected a variable name after '$'", 0);
  check("$1x", "expected a variable name after '$'", 0);
  check("1 + n",
        "unexpected name 'n' (variables are written '$n'; functions are min, max, ceil_div, "
        "align_up)",
        4);
  check("floor(1, 2)", "unknown function 'floor' (expected min, max, ceil_div or align_up)", 0);
  check("2 * min(1)", "'min' takes 2 arguments, found 1", 4);
  check("max(1, 2, 3)", "'max' takes 2 arguments, found 3", 0);
  check("max()", "'max' takes 2 arguments, found 0", 0);
  check("min", "function 'min' needs arguments: min(a, b)", 0);
  check("align_up(1, 2", "unbalanced '('", 8);
  check("min(1 2)", "expected ',' or ')', found number '2'", 6);
  check("9223372036854775808",
        "integer literal '9223372036854775808' does not fit in 64-bit signed integers", 0);
  check("12abc", "invalid number '12abc'", 0);
  check("1 & 2", "unexpected '&' after the expression", 2);
  check("1.5", "unexpected '.' after the expression", 1);
  check("\xff", "unexpected '\\xff'; expected a value", 0);
  check(")", "unexpected ')'; expected a value", 0);
  CHECK(parse("9223372036854775807").ok());
}

TEST_CASE("limits keep hostile expressions bounded", "[graph][expr]") {
  std::string deep(kMaxExprDepth + 2, '(');
  deep += "1";
  deep += std::string(kMaxExprDepth + 2, ')');
  Failure f = parseFail(deep);
  CHECK(f.message.find("nested deeper than") != std::string::npos);
  std::string negs(kMaxExprDepth + 2, '-');
  CHECK(parseFail(negs + "1").message.find("nested deeper than") != std::string::npos);
  std::string ok(kMaxExprDepth, '(');
  ok += "1" + std::string(kMaxExprDepth, ')');
  CHECK(eval(ok) == 1);
  CHECK(parseFail(std::string(kMaxExprText + 1, '1')).message.find("longer than") !=
        std::string::npos);
  // The longest text parses (one instruction per byte at most, under kMaxExprCode).
  std::string longest = "1";
  while (longest.size() + 2 <= kMaxExprText)
    longest += "+1";
  CHECK(eval(longest) == int64_t(longest.size() / 2 + 1));
}

TEST_CASE("evaluate reports overflow and division by zero at the operator", "[graph][expr]") {
  auto check = [](const std::string &text, const std::string &message, uint32_t offset,
                  Bindings vars = {}) {
    Failure f = evalFail(text, vars);
    INFO(text);
    CHECK(f.message == message);
    CHECK(f.offset == offset);
  };
  check("9223372036854775807 + 1", "integer overflow in 9223372036854775807 + 1", 20);
  check("-9223372036854775807 - 2", "integer overflow in -9223372036854775807 - 2", 21);
  check("$a * 2", "integer overflow in 4611686018427387904 * 2", 3, {{"a", int64_t(1) << 62}});
  check("-$a", "integer overflow in -(-9223372036854775808)", 0, {{"a", kMin}});
  check("$a / -1", "integer overflow in -9223372036854775808 / -1", 3, {{"a", kMin}});
  check("1 + 8 / $z", "division by zero", 6, {{"z", 0}});
  check("8 % $z", "remainder by zero", 2, {{"z", 0}});
  check("ceil_div(8, $z)", "division by zero in ceil_div", 0, {{"z", 0}});
  check("align_up(8, $z)", "align_up to a non-positive alignment 0", 0, {{"z", 0}});
  check("align_up(8, -4)", "align_up to a non-positive alignment -4", 0);
  check("align_up(9223372036854775807, 2)", "integer overflow in align_up(9223372036854775807, 2)",
        0);
  // Missing values.
  Program p = parseOk("$a + $b");
  auto r = evaluate(p, std::vector<int64_t>{1});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message() == "no value for variable '$b'");
}

TEST_CASE("fold replaces known variables and keeps the rest", "[graph][expr]") {
  Program p = parseOk("align_up($n - $k - 1, 256)");
  auto f = fold(p, {{"k", 3}});
  REQUIRE(f.ok());
  CHECK_FALSE(f->constant().has_value());
  CHECK(f->names == std::vector<std::string>{"n"});
  CHECK(f->toString() == "align_up($n - 3 - 1, 256)"); // ($n - 3) - 1: not reassociated
  CHECK(f->offsets.size() == f->code.size());
  CHECK(f->offsets[0] == 9); // $n
  CHECK(f->maxStack == 2);
  CHECK(*evaluate(*f, std::vector<int64_t>{1000}) == 1024); // align_up(996, 256)
  CHECK(*evaluate(*f, std::vector<int64_t>{260}) == 256);
  auto all = fold(p, {{"k", 3}, {"n", 1000}});
  REQUIRE(all.ok());
  CHECK(all->constant() == 1024);

  // Constant sub-expressions fold even next to unknowns; names are renumbered.
  Program q = parseOk("$a * (2 + 3) + $b - $c * $a");
  auto g = fold(q, {{"b", 7}});
  REQUIRE(g.ok());
  CHECK(g->toString() == "$a * 5 + 7 - $c * $a");
  CHECK(g->names == std::vector<std::string>{"a", "c"});
  CHECK(*evaluate(*g, std::vector<int64_t>{2, 3}) == 11);

  // Nothing known: the program is unchanged.
  auto h = fold(q, {});
  REQUIRE(h.ok());
  CHECK(h->code.size() == q.code.size() - 2); // only 2 + 3 folded
}

TEST_CASE("fold reports a known zero divisor even when the dividend is unknown", "[graph][expr]") {
  struct Case {
    const char *text;
    const char *message;
    uint32_t offset;
  } cases[] = {
      {"$n / 0", "division by zero", 3},
      {"$n / ($k - 2)", "division by zero", 3},
      {"$n % $k - 2", "", 0}, // ($n % $k) - 2 with k = 2: fine
      {"$n % ($k - 2)", "remainder by zero", 3},
      {"ceil_div($n, $k - 2)", "division by zero in ceil_div", 0},
      {"align_up($n, 2 - $k)", "align_up to a non-positive alignment 0", 0},
      {"1 + $k * 9223372036854775807", "integer overflow in 2 * 9223372036854775807", 7},
  };
  for (const Case &c : cases) {
    INFO(c.text);
    Program p = parseOk(c.text);
    uint32_t off = 999;
    auto f = fold(p, {{"k", 2}}, &off);
    if (std::string(c.message).empty()) {
      CHECK(f.ok());
      continue;
    }
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().message() == c.message);
    CHECK(off == c.offset);
  }
}

TEST_CASE("encode and decode round-trip and refuse malformed bytes", "[graph][expr]") {
  for (const char *text :
       {"align_up($n - $k - 1, 256)", "-9223372036854775807 - 1", "9223372036854775807",
        "min(-64, 63) * max(-65, 64) + ceil_div($a, 8191) % 8192", "$b / $a"}) {
    INFO(text);
    Program p = parseOk(text);
    std::vector<uint8_t> bytes = encode(p);
    auto d = decode(bytes.data(), bytes.size(), uint32_t(p.names.size()));
    REQUIRE(d.ok());
    CHECK(d->code == p.code);
    CHECK(d->maxStack == p.maxStack);
    CHECK(d->offsets.empty());
  }
  // Compact: one byte per operator, small literals and indices one byte each.
  Program p = parseOk("align_up($n - $k - 1, 256)");
  CHECK(encode(p) == std::vector<uint8_t>{1, 0, 1, 1, 4, 0, 1, 4, 0, 0x80, 0x02, 11});

  auto bad = [](std::vector<uint8_t> b, uint32_t vars, const std::string &part) {
    auto d = decode(b.data(), b.size(), vars);
    REQUIRE_FALSE(d.ok());
    INFO(d.error().message());
    CHECK(d.error().message().find(part) != std::string::npos);
  };
  bad({}, 0, "empty");
  bad({12}, 0, "unknown opcode 12");
  bad({0}, 0, "truncated literal");
  bad({0, 0x80}, 0, "truncated literal");
  bad({0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0,
      "longer than 10 bytes");
  bad({0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 0, "out of range");
  bad({1, 2}, 2, "variable 2 out of range");
  bad({1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 1, "longer than 5 bytes");
  bad({3}, 0, "malformed");          // + with no operands
  bad({0, 1, 0, 2}, 0, "malformed"); // two values left
  std::vector<uint8_t> negs = {0, 1, 2, 2, 2};
  CHECK(decode(negs.data(), negs.size(), 0).ok() == true);
}

TEST_CASE("remapVariables renumbers for storage", "[graph][expr]") {
  Program p = parseOk("$x * 2 + $y");
  auto r = remapVariables(p, {5, 3});
  REQUIRE(r.ok());
  CHECK(r->code[0] == Instr{Op::Var, 5});
  CHECK(r->code[3] == Instr{Op::Var, 3});
  CHECK(r->names.empty());
  std::vector<int64_t> values = {0, 0, 0, 10, 0, 4};
  CHECK(*evaluate(*r, values) == 18);
  CHECK_FALSE(remapVariables(p, {5}).ok());
}

namespace {

// A random expression tree rendered as text, with its value computed here through
// apply() (nullopt when some operation fails), for a property test of the parser.
struct Gen {
  uint64_t s;
  uint32_t next(uint32_t n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return uint32_t((s >> 33) % n);
  }
  std::pair<std::string, std::optional<int64_t>> expr(int depth, const Bindings &vars) {
    uint32_t pick = depth <= 0 ? next(2) : next(11);
    if (pick == 0) {
      int64_t v = int64_t(next(3) == 0 ? next(1u << 31) : next(300));
      return {std::to_string(v), v};
    }
    if (pick == 1) {
      auto it = vars.begin();
      std::advance(it, next(uint32_t(vars.size())));
      return {"$" + it->first, it->second};
    }
    if (pick == 2) {
      auto a = expr(depth - 1, vars);
      std::optional<int64_t> v;
      if (a.second) {
        auto r = apply(Op::Neg, *a.second, 0);
        if (r) v = *r;
      }
      return {"-(" + a.first + ")", v};
    }
    static const Op ops[] = {Op::Add, Op::Sub, Op::Mul,     Op::Div,    Op::Rem,
                             Op::Min, Op::Max, Op::CeilDiv, Op::AlignUp};
    Op op = ops[next(9)];
    auto a = expr(depth - 1, vars), b = expr(depth - 1, vars);
    std::optional<int64_t> v;
    if (a.second && b.second) {
      auto r = apply(op, *a.second, *b.second);
      if (r) v = *r;
    }
    std::string text = op >= Op::Min
                           ? std::string(opName(op)) + "(" + a.first + ", " + b.first + ")"
                           : "(" + a.first + ") " + opName(op) + " (" + b.first + ")";
    return {text, v};
  }
};

} // namespace

TEST_CASE("random expressions: parse, evaluate, fold, print and encode agree", "[graph][expr]") {
  Gen gen{42};
  const Bindings vars = {{"n", 1000}, {"k", 7}, {"big", int64_t(1) << 40}, {"neg", -33}};
  int evaluated = 0, failed = 0;
  for (int i = 0; i < 3000; ++i) {
    auto [text, want] = gen.expr(1 + int(i % 6), vars);
    INFO(text);
    Program p = parseOk(text);
    std::vector<int64_t> values;
    for (const std::string &n : p.names)
      values.push_back(vars.at(n));
    auto got = evaluate(p, values);
    REQUIRE(got.ok() == want.has_value());
    if (!want) {
      ++failed;
      CHECK_FALSE(fold(p, vars).ok());
      continue;
    }
    ++evaluated;
    CHECK(*got == *want);
    // Printing and parsing again gives the same value.
    Program again = parseOk(p.toString());
    std::vector<int64_t> v2;
    for (const std::string &n : again.names)
      v2.push_back(vars.at(n));
    CHECK(*evaluate(again, v2) == *want);
    // Folding only some variables, then evaluating the rest, gives the same value
    // (unless folding found an error the full evaluation order would not reach first).
    Bindings some = {{"k", 7}, {"neg", -33}};
    auto part = fold(p, some);
    if (part) {
      std::vector<int64_t> rest;
      for (const std::string &n : part->names)
        rest.push_back(vars.at(n));
      CHECK(*evaluate(*part, rest) == *want);
      std::vector<uint8_t> bytes = encode(*part);
      auto d = decode(bytes.data(), bytes.size(), uint32_t(part->names.size()));
      REQUIRE(d.ok());
      CHECK(*evaluate(*d, rest) == *want);
    }
  }
  CHECK(evaluated > 1000);
  CHECK(failed > 10);
}

TEST_CASE("random bytes never crash parse or decode", "[graph][expr]") {
  Gen gen{7};
  const char alphabet[] = "0123456789$()+-*/%, \tminaxceil_dvgup\xff";
  for (int i = 0; i < 5000; ++i) {
    std::string text;
    uint32_t len = gen.next(40);
    for (uint32_t k = 0; k < len; ++k)
      text += alphabet[gen.next(sizeof(alphabet) - 1)];
    uint32_t off = 0;
    auto p = parse(text, &off);
    if (!p) {
      CHECK(off <= text.size());
      CHECK_FALSE(p.error().message().empty());
      continue;
    }
    std::vector<int64_t> values(p->names.size(), 3);
    (void)evaluate(*p, values).ok();
    std::vector<uint8_t> bytes(gen.next(24));
    for (auto &b : bytes)
      b = uint8_t(gen.next(256));
    auto d = decode(bytes.data(), bytes.size(), 4);
    if (d) {
      std::vector<int64_t> four(4, 5);
      (void)evaluate(*d, four).ok();
    }
  }
}
