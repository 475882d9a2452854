// Runs the built parsim binary and captures exit status, stdout and stderr (CLI-level tests).
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

namespace parsim::testing {

struct Run {
  int status = -1;
  std::string out, err;
  // Exactly one line on stderr, beginning with the contract's prefix, and nothing on stdout.
  bool clean_error() const {
    return status == 2 && out.empty() && err.rfind("parsim: error: ", 0) == 0 && err.find('\n') == err.size() - 1;
  }
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// `args` is appended to the binary path as shell words (tests pass only safe literals).
inline Run run_parsim(const std::string& args) {
  static int counter = 0;
  const std::string base = "cli_run_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  const std::string cmd = std::string(PARSIM_BIN) + " " + args + " >" + base + ".out 2>" + base + ".err";
  Run r;
  const int rc = std::system(cmd.c_str());
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

inline std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = "cli_tmp_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << content;
  return path;
}

}  // namespace parsim::testing
