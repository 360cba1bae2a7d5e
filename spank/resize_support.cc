// The submission-time decision: does the cluster's configuration let an elastic job resize?
#include "spank/resize_support.h"

#include <algorithm>
#include <cctype>

namespace elastic::spank {
namespace {

// slurmctld enables expansion with a case-insensitive substring test of SchedulerParameters
// (xstrcasestr in job_mgr.c); deciding the same way keeps us from refusing what Slurm accepts.
bool ContainsIgnoringCase(std::string_view haystack, std::string_view needle) {
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                        [](char a, char b) {
                          return std::tolower(static_cast<unsigned char>(a)) ==
                                 std::tolower(static_cast<unsigned char>(b));
                        });
  return it != haystack.end();
}

}  // namespace

std::string CheckResizeSupport(std::string_view sched_params,
                               std::string_view accounting_storage_type) {
  std::string problems;
  if (!ContainsIgnoringCase(sched_params, "permit_job_expansion")) {
    problems +=
        "SchedulerParameters lacks permit_job_expansion, so the job could never grow "
        "(Slurm answers \"Requested operation not supported on this system\")";
  }
  if (accounting_storage_type != "accounting_storage/slurmdbd") {
    if (!problems.empty()) problems += "; ";
    problems += "AccountingStorageType is \"" + std::string(accounting_storage_type) +
                "\", not accounting_storage/slurmdbd, so the job could be resized only once";
  }
  if (problems.empty()) return "";
  return "elastic: --elastic: this cluster cannot resize jobs: " + problems +
         ". Submit without --elastic, or ask the Slurm administrator to merge "
         "/etc/slurm-elastic/slurm.conf.elastic into slurm.conf";
}

bool ShouldCheckResizeSupport(bool elastic, bool inside_job, bool is_sbatch) {
  return elastic && (is_sbatch || !inside_job);
}

}  // namespace elastic::spank
