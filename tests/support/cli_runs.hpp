// SPDX-License-Identifier: MIT
#pragma once
// Runs of the command line (SHALLOWS_CLI) for tests through a shell, with a
// folder of their own and their files read back.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace shallows::test_support {

struct Result {
  int code;  // exit status, or 128 + signal when a signal ended the process
  std::string output;
};

// `env` (VAR=value ... or empty) then the command line's arguments; stdout and stderr together.
inline Result shell(const std::string& env, const std::string& args) {
  const std::string cmd = env + " " + std::string(SHALLOWS_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe)) out += buf.data();
  const int status = pclose(pipe);
  // sh reports a child killed by signal s as exit status 128 + s.
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

inline Result shell(const std::string& args) { return shell("", args); }

// An empty folder; one per process, as ctest runs the tests of a binary side by side.
inline std::filesystem::path temp_dir(const std::string& name) {
  const std::filesystem::path d =
      std::filesystem::temp_directory_path() / ("shallows-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The number after the first `"key": ` of summary.json's text from `from` on, or NaN when the key is missing or
// null.
inline double summary_number(const std::string& summary, const std::string& key, std::size_t from = 0) {
  const std::size_t at = summary.find("\"" + key + "\": ", from);
  if (at == std::string::npos) return std::nan("");
  const std::string rest = summary.substr(at + key.size() + 4);
  if (rest.rfind("null", 0) == 0) return std::nan("");
  return std::stod(rest);
}

}  // namespace shallows::test_support
