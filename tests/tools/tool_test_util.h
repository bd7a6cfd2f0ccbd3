// Shared by the tool end-to-end tests: run a real tool binary through the shell and
// capture its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tooltest {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Single-quotes `s` for /bin/sh.
inline std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

// Runs `exe <args>` in `cwd` with stdin from /dev/null; args go to the shell as written.
// stdout/stderr are captured through files named by `ioStem` (+ ".out" / ".err").
inline Result runTool(const std::string &exe, const std::string &args, const fs::path &cwd,
                      const fs::path &ioStem) {
  fs::path out = ioStem.string() + ".out", err = ioStem.string() + ".err";
  std::string cmd = "cd " + quote(cwd.string()) + " && " + quote(exe) + " " + args + " >" +
                    quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

} // namespace tooltest
