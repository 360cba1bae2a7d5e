// RunCommand via popen; integration tests only (never in product code).
#include "tests/common/run_command.h"

#include <stdio.h>
#include <sys/wait.h>

#include <array>

namespace elastic::testing {

CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  std::string wrapped = "exec 2>&1; " + command;
  FILE* pipe = popen(wrapped.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.output.append(buffer.data(), n);
  int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) result.exit_code = 128 + WTERMSIG(status);
  return result;
}

std::string ShellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') quoted += "'\\''";
    else quoted += c;
  }
  return quoted + "'";
}

}  // namespace elastic::testing
