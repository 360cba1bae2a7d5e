// Runs a shell command and captures its exit status and output, for integration tests.
#pragma once

#include <string>

namespace elastic::testing {

struct CommandResult {
  int exit_code = -1;   // the shell's exit status; 128+N when killed by signal N
  std::string output;   // stdout and stderr interleaved
};

// Runs `command` with /bin/sh -c, stderr merged into stdout.
CommandResult RunCommand(const std::string& command);

// Quotes `text` for a POSIX shell.
std::string ShellQuote(const std::string& text);

}  // namespace elastic::testing
