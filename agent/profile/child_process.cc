// RunChild: pipe + fork + execvp, read to EOF, waitpid.
#include "agent/profile/child_process.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

extern char** environ;

namespace elastic::agent {
namespace {

// Names of the SLURM_ELASTIC_* variables of this process (read before fork: the child only
// unsets, which is async-signal-unsafe in theory but the child is single-threaded until exec).
std::vector<std::string> ElasticVariables() {
  std::vector<std::string> names;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string item(*entry);
    if (item.rfind("SLURM_ELASTIC_", 0) == 0) names.push_back(item.substr(0, item.find('=')));
  }
  return names;
}

}  // namespace

ChildResult RunChild(const std::vector<std::string>& argv) {
  const std::vector<std::string> unset = ElasticVariables();
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::system_error(errno, std::generic_category(), "fork");
  }
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copies
    ::dup2(fds[1], STDERR_FILENO);
    for (const std::string& name : unset) ::unsetenv(name.c_str());
    ::execvp(args[0], args.data());
    _exit(127);
  }
  ::close(fds[1]);
  ChildResult result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace elastic::agent
