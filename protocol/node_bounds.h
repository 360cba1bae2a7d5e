// A job's -N MIN-MAX and --elastic-class as its AdminComment records them ("elastic:…nodes=K/MIN-MAX…"): written by
// etc/job_submit.lua at submission, kept by elasticd's summary, because Slurm forgets a running
// job's MAX. Read by elasticd when a job registers and by the supervisor for the EST default.
#pragma once

#include <optional>
#include <string_view>

#include "common/job_options.h"

namespace elastic::daemon {

struct NodeBounds {
  int min_nodes = 0;
  int max_nodes = 0;
};

// The MIN-MAX of "nodes=K/MIN-MAX" in an "elastic:" comment, whatever fields surround it (such as
// a trailing devices=); nullopt if absent or malformed (MIN < 1, MAX < MIN).
std::optional<NodeBounds> ParseNodeBounds(std::string_view admin_comment);

// The SLA class of "class=WORD" in an "elastic:" comment (job_submit.lua records --elastic-class
// there at submission, elasticd's summary keeps it); nullopt if absent or not a class word.
std::optional<SlaClass> ParseRecordedClass(std::string_view admin_comment);

}  // namespace elastic::daemon
