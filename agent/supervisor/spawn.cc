// Spawn: pipe2(O_CLOEXEC) + fork + dup2 + execvp.
#include "agent/supervisor/spawn.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace elastic::agent {

Spawned Spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::system_error(errno, std::generic_category(), "fork");
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copies
    if (options.merge_stderr) ::dup2(fds[1], STDERR_FILENO);
    for (const std::string& name : options.unset_env) ::unsetenv(name.c_str());
    for (const auto& [name, value] : options.set_env) ::setenv(name.c_str(), value.c_str(), 1);
    ::execvp(args[0], args.data());
    _exit(127);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

}  // namespace elastic::agent
