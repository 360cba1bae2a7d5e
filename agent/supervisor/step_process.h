// The training step of one generation: `srun … elastic-agent train …` as a child process whose
// stdout the supervisor forwards line by line (so the batch log reads as usual) while watching
// for the agent's first-step marker, the end of a resize's pause. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace elastic::agent {

class StepProcess {
 public:
  StepProcess() = default;
  StepProcess(const StepProcess&) = delete;
  StepProcess& operator=(const StepProcess&) = delete;
  ~StepProcess();  // kills a step still running (SIGKILL) and reaps it

  // Starts argv[0] (searched in PATH) with the current environment, less `unset_env` and with
  // `set_env` added (the generation's plan). Throws std::system_error.
  void Launch(const std::vector<std::string>& argv,
              const std::vector<std::pair<std::string, std::string>>& set_env = {},
              const std::vector<std::string>& unset_env = {});
  bool running() const { return pid_ > 0; }
  void Signal(int signal_number) const;

  // Forwards complete stdout lines to `out` for up to `timeout`, returns once something was read
  // or the time is up. Sets first_step_seen() when the agent's marker passes by. `on_line` (if
  // set) sees each complete line after it was forwarded.
  void Pump(std::chrono::milliseconds timeout, std::ostream& out,
            const std::function<void(const std::string&)>& on_line = {});
  bool first_step_seen() const { return first_step_seen_; }

  // The exit status once the step has ended (128 + signal when killed), else nullopt.
  std::optional<int> TryWait();

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string partial_;
  bool first_step_seen_ = false;
};

}  // namespace elastic::agent
