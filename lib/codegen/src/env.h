// The environment variables the code generators read (tool paths, dump folders): an
// empty value counts as unset, as in lib/runtime's env_options.h. Not installed.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace cgraph::codegen {

inline std::optional<std::string> envText(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

} // namespace cgraph::codegen
