// cgraph/runtime/env_options.h: what each kind of value accepts, that an explicit
// option is never overridden, and that a bad value is an error naming the variable and
// the value (never a silent default).
#include "cgraph/runtime/env_options.h"

#include "../common/scoped_env.h"

#include <catch2/catch.hpp>

using namespace cgraph;
using cgraph::test::ScopedEnv;

namespace {
constexpr const char *kVar = "CGRAPH_TEST_ENV_OPTION";
}

TEST_CASE("env options: flags", "[runtime][env]") {
  for (const char *on : {"1", "on", "true", "yes", "ON", "True"}) {
    ScopedEnv e(kVar, on);
    std::optional<bool> f;
    REQUIRE_FALSE(rt::env::fillFlag(f, kVar));
    REQUIRE(f);
    CHECK(*f);
  }
  for (const char *off : {"0", "off", "false", "no", "OFF"}) {
    ScopedEnv e(kVar, off);
    std::optional<bool> f;
    REQUIRE_FALSE(rt::env::fillFlag(f, kVar));
    REQUIRE(f);
    CHECK_FALSE(*f);
  }
  {
    ScopedEnv e(kVar, "maybe");
    std::optional<bool> f;
    Error err = rt::env::fillFlag(f, kVar);
    REQUIRE(err);
    CHECK(err.code() == ErrorCode::Invalid);
    CHECK(err.message() == "CGRAPH_TEST_ENV_OPTION: 'maybe' is not a flag (1/0, on/off, true/false, yes/no)");
    CHECK_FALSE(f);
  }
}

TEST_CASE("env options: unset or empty leaves the field unset", "[runtime][env]") {
  for (const char *v : {static_cast<const char *>(nullptr), ""}) {
    ScopedEnv e(kVar, v);
    std::optional<bool> f;
    std::optional<uint64_t> n, s;
    std::optional<std::string> t;
    REQUIRE_FALSE(rt::env::fillFlag(f, kVar));
    REQUIRE_FALSE(rt::env::fillCount(n, kVar));
    REQUIRE_FALSE(rt::env::fillSize(s, kVar));
    REQUIRE_FALSE(rt::env::fillText(t, kVar));
    CHECK_FALSE(f);
    CHECK_FALSE(n);
    CHECK_FALSE(s);
    CHECK_FALSE(t);
  }
}

TEST_CASE("env options: counts and sizes", "[runtime][env]") {
  auto count = [](const char *v) {
    ScopedEnv e(kVar, v);
    std::optional<uint64_t> n;
    Error err = rt::env::fillCount(n, kVar);
    return std::make_pair(n, err);
  };
  CHECK(*count("0").first == 0);
  CHECK(*count("1048576").first == 1048576);
  CHECK(*count("18446744073709551615").first == UINT64_MAX);
  for (const char *bad : {"garbage", "12x", "-1", "1.5", " 3", "18446744073709551616"}) {
    auto [n, err] = count(bad);
    INFO(bad);
    REQUIRE(err);
    CHECK_FALSE(n);
    CHECK(err.message().rfind(std::string("CGRAPH_TEST_ENV_OPTION: '") + bad + "' is not a count", 0) == 0);
  }
  auto size = [](const char *v) {
    ScopedEnv e(kVar, v);
    std::optional<uint64_t> n;
    Error err = rt::env::fillSize(n, kVar);
    return std::make_pair(n, err);
  };
  CHECK(*size("4096").first == 4096);
  CHECK(*size("64K").first == 64 * 1024);
  CHECK(*size("512m").first == 512ull << 20);
  CHECK(*size("2GiB").first == 2ull << 30);
  CHECK(*size("1TB").first == 1ull << 40);
  for (const char *bad : {"G", "5X", "17179869184T", "1.5G"}) {
    auto [n, err] = size(bad);
    INFO(bad);
    REQUIRE(err);
    CHECK_FALSE(n);
    CHECK(err.message().find(std::string("'") + bad + "' is not a size") != std::string::npos);
  }
}

TEST_CASE("env options: choices", "[runtime][env]") {
  enum class Mode { A, B };
  {
    ScopedEnv e(kVar, "beta");
    std::optional<Mode> m;
    REQUIRE_FALSE(rt::env::fillChoice(m, kVar, {{"alpha", Mode::A}, {"beta", Mode::B}}));
    CHECK(m == Mode::B);
  }
  {
    ScopedEnv e(kVar, "gamma");
    std::optional<Mode> m;
    Error err = rt::env::fillChoice(m, kVar, {{"alpha", Mode::A}, {"beta", Mode::B}});
    REQUIRE(err);
    CHECK(err.message() == "CGRAPH_TEST_ENV_OPTION: 'gamma' is not one of alpha, beta");
    CHECK_FALSE(m);
  }
}

TEST_CASE("env options: an explicit value wins, even over a bad variable", "[runtime][env]") {
  ScopedEnv e(kVar, "garbage");
  std::optional<bool> f = false;
  std::optional<uint64_t> n = 7;
  std::optional<std::string> t = std::string("mine");
  REQUIRE_FALSE(rt::env::fillFlag(f, kVar));
  REQUIRE_FALSE(rt::env::fillCount(n, kVar));
  REQUIRE_FALSE(rt::env::fillText(t, kVar));
  CHECK(*f == false);
  CHECK(*n == 7);
  CHECK(*t == "mine");
}
