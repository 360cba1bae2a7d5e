// CheckBackgroundClass and the control variable that steers a background job to its partition.
#include "spank/background_class.h"

#include <cctype>

namespace elastic::spank {
namespace {

bool IsBackground(const ElasticSettings& settings) {
  return settings.elastic && settings.sla_class == SlaClass::kBackground;
}

}  // namespace

std::string CheckBackgroundClass(const ElasticSettings& settings,
                                 std::string_view background_partition, bool new_job,
                                 bool is_srun) {
  if (!IsBackground(settings) || !new_job) return {};
  if (background_partition.empty()) {
    return "elastic: --elastic-class=background: this cluster has no background partition "
           "(the Slurm administrator sets background_partition= on the spank_elastic.so line "
           "of plugstack.conf, docs/admin.md \"Background jobs\"); submit with "
           "--elastic-class=best-effort or guaranteed";
  }
  if (is_srun) {
    return "elastic: --elastic-class=background: submit background jobs with sbatch or salloc "
           "(srun cannot steer a new job into the background partition \"" +
           std::string(background_partition) + "\")";
  }
  return {};
}

std::vector<std::pair<std::string, std::string>> BackgroundControlEnvironment(
    const ElasticSettings& settings, std::string_view background_partition) {
  if (!IsBackground(settings) || background_partition.empty()) return {};
  return {{"ELASTIC_BACKGROUND_PARTITION", std::string(background_partition)}};
}

bool IsPartitionName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (unsigned char c : name) {
    if (!std::isalnum(c) && c != '_' && c != '-' && c != '.') return false;
  }
  return true;
}

}  // namespace elastic::spank
