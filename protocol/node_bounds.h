// A job's -N MIN-MAX as its AdminComment records it ("elastic:…nodes=K/MIN-MAX…"): written by
// etc/job_submit.lua at submission, kept by elasticd's summary, because Slurm forgets a running
// job's MAX. Read by elasticd when a job registers and by the supervisor for the EST default.
#pragma once

#include <optional>
#include <string_view>

namespace elastic::daemon {

struct NodeBounds {
  int min_nodes = 0;
  int max_nodes = 0;
};

// The MIN-MAX of "nodes=K/MIN-MAX" in an "elastic:" comment, whatever fields surround it (such as
// a trailing devices=); nullopt if absent or malformed (MIN < 1, MAX < MIN).
std::optional<NodeBounds> ParseNodeBounds(std::string_view admin_comment);

}  // namespace elastic::daemon
