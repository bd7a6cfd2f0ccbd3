// One environment variable set (or unset) for a scope, restored when the scope ends.
// Only for tests of the environment's own rules (cgraph/runtime/env_options.h, the
// cache's CacheConfig::fromEnvironment): other tests hand backends their cache
// directories and switches through options. Not thread-safe (setenv).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace cgraph::test {

class ScopedEnv {
public:
  // `value` null: the variable is unset for the scope.
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  std::string name_;
  std::optional<std::string> old_;
};

} // namespace cgraph::test
