// The defines an example's graph description gives one of its kernel files
// ("file": "kernels/x.cl", "defines": { "TILE": 16 }), for tests that compile every
// example kernel on its own: examples/<name>/graph.json first, then the folder's other
// descriptions (*.json, in name order), the first that names the file.
//
// Include from test sources only. Reads files; no state; never throws on a missing or
// unreadable description (no defines).
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
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
  const std::string file = "kernels/" + cl.filename().string();
  for (const fs::path &d : descriptions) {
    std::ifstream in(d, std::ios::binary);
    if (!in) continue;
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object() || !j.contains("kernels") || !j["kernels"].is_array()) continue;
    for (const nlohmann::json &k : j["kernels"]) {
      if (!k.is_object() || k.value("file", "") != file) continue;
      std::vector<std::string> out;
      const nlohmann::json defines = k.value("defines", nlohmann::json::object());
      for (const auto &[name, value] : defines.items())
        out.push_back(name + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
      return out;
    }
  }
  return {};
}

} // namespace cgraph::testutil
