// `elastic-plan memory --config F --ranks W [--ests E]`: the per-rank memory estimate of every plan
// the agent can run on W ranks for a job config (perf/rubick/agent_memory.h), one line per plan:
// `plan=<name> ranks=<W> bytes=<n>`; the budget and why other plans cannot run go to stderr.
#pragma once

#include <string>
#include <vector>

namespace elastic::agent {

// `args` follow "memory". Returns the exit status: 0, 2 for bad arguments or a config the plan
// choice cannot use (the message names the flag or file, the value and what is expected).
int MemoryCommand(const std::vector<std::string>& args);

}  // namespace elastic::agent
