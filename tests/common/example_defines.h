// The defines an example's graph description gives one of its kernel files
// ("file": "kernels/x.cl", "defines": { "TILE": 16 }), for tests that compile every
// example kernel on its own: examples/<name>/graph.json first, then the folder's other
// descriptions (*.json, in name order), the first that names the file.
//
// Include from test sources only. Reads files; no state; never throws on a missing or
// unreadable description (no defines).
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace cgraph::testutil {

inline std::vector<std::string> exampleDefines(const std::filesystem::path &cl) {
  namespace fs = std::filesystem;
  const fs::path dir = cl.parent_path().parent_path();
  std::vector<fs::path> descriptions;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json" && e.path().filename() != "graph.json") descriptions.push_back(e.path());
  std::sort(descriptions.begin(), descriptions.end());
  descriptions.insert(descriptions.begin(), dir / "graph.json");
  const std::regex entry("\"file\"\\s*:\\s*\"kernels/" + cl.filename().string() +
                         "\"\\s*,\\s*\"defines\"\\s*:\\s*\\{([^}]*)\\}");
  const std::regex kv("\"([A-Za-z_][A-Za-z0-9_]*)\"\\s*:\\s*\"?([^\",]*)\"?");
  for (const fs::path &d : descriptions) {
    std::ifstream in(d, std::ios::binary);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    std::smatch m;
    if (!std::regex_search(text, m, entry)) continue;
    const std::string body = m[1].str();
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), kv); it != std::sregex_iterator(); ++it) {
      std::string value = (*it)[2].str();
      value.erase(value.find_last_not_of(" \t\r\n") + 1);
      out.push_back((*it)[1].str() + "=" + value);
    }
    return out;
  }
  return {};
}

} // namespace cgraph::testutil
