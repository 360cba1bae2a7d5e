// RunChild: Spawn (agent/supervisor/spawn.h) with stderr merged, read to EOF, waitpid.
#include "agent/profile/child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "agent/supervisor/spawn.h"

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
  SpawnOptions options;
  options.merge_stderr = true;
  options.unset_env = ElasticVariables();
  const Spawned child = Spawn(argv, options);
  ChildResult result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(child.out_fd, buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(child.out_fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace elastic::agent
