// StepProcess: fork/exec with a stdout pipe, poll-based line forwarding, non-blocking reaping.
#include "agent/supervisor/step_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "agent/supervisor/spawn.h"
#include "agent/common/first_step_marker.h"

namespace elastic::agent {

StepProcess::~StepProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
}

void StepProcess::Launch(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& set_env,
                         const std::vector<std::string>& unset_env) {
  SpawnOptions options;
  options.set_env = set_env;
  options.unset_env = unset_env;
  Spawned child = Spawn(argv, options);
  if (out_fd_ >= 0) ::close(out_fd_);
  out_fd_ = child.out_fd;
  pid_ = child.pid;
  partial_.clear();
  first_step_seen_ = false;
}

void StepProcess::Signal(int signal_number) const {
  if (pid_ > 0) ::kill(pid_, signal_number);
}

void StepProcess::Pump(std::chrono::milliseconds timeout, std::ostream& out,
                       const std::function<void(const std::string&)>& on_line) {
  if (out_fd_ < 0) {
    ::poll(nullptr, 0, static_cast<int>(timeout.count()));
    return;
  }
  pollfd p{out_fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return;
  char buffer[8192];
  ssize_t n = ::read(out_fd_, buffer, sizeof buffer);
  if (n <= 0) {  // EOF: the step closed its stdout (it is ending)
    ::close(out_fd_);
    out_fd_ = -1;
    if (!partial_.empty()) out << partial_ << std::endl;
    partial_.clear();
    return;
  }
  partial_.append(buffer, static_cast<std::size_t>(n));
  std::size_t newline;
  while ((newline = partial_.find('\n')) != std::string::npos) {
    const std::string line = partial_.substr(0, newline);
    partial_.erase(0, newline + 1);
    if (line.rfind(kFirstStepMarker, 0) == 0) first_step_seen_ = true;
    out << line << '\n';
    if (on_line) on_line(line);
  }
  out.flush();
}

std::optional<int> StepProcess::TryWait() {
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == 0 || (r < 0 && errno == EINTR)) return std::nullopt;
  pid_ = -1;
  if (r < 0) return 255;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace elastic::agent
