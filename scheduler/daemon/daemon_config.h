// elasticd's configuration (etc/elasticd.toml): a plain struct with named defaults and a loader.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace elastic::daemon {

enum class LogLevel { kError, kWarn, kInfo, kDebug };

struct DaemonConfig {
  // [daemon]
  std::string socket = "/run/elasticd/elasticd.sock";
  std::string state_dir = "/var/lib/elasticd";
  LogLevel log_level = LogLevel::kInfo;
  std::string log_file;      // empty: stderr (journald under systemd)
  std::string munge_socket;  // empty: libmunge's default socket
  // [scheduler]
  std::string policy = "elastic";
  std::chrono::milliseconds cycle_interval{std::chrono::seconds(10)};
  std::chrono::milliseconds min_resize_interval{std::chrono::seconds(60)};
  double reconfig_penalty = 0.97;  // Rubick §5: resize only if (T - N*delta)/T >= this
  // Rubick's delta: what one resize costs a job (checkpoint, resize, relaunch; measured ~2 s
  // for the Fashion-MNIST job, see docs/evaluation.md).
  std::chrono::milliseconds resize_cost{std::chrono::seconds(3)};
  // Requeue best-effort elastic jobs when shrinking alone cannot start a guaranteed job within
  // its account's quota (resize_decision.h step 1).
  bool preemption = true;
  // With preemption, also for a rigid job Slurm starts next (ResizeDecisionOptions::
  // preempt_for_rigid): elastic best-effort jobs give back what the rigid queue needs.
  bool preempt_for_rigid = true;
  // etc/job_submit.lua's ELASTIC_NICE, and the wait in multiples of a job's time limit after
  // which elasticd takes it back from a waiting elastic job (0 = never; policy/nice_lift.h).
  std::int64_t elastic_nice = 1'000'000;
  double nice_lift_after = 6.0;
  // [quotas]: account = devices its guaranteed jobs may claim (sla_quota.h); nullopt without the
  // table, when every guaranteed job is within quota.
  std::optional<std::map<std::string, int>> quotas;
  // [node_types]: a node type's speed against a reference GPU of 1 (node_types.h): the type
  // is the node's gres GPU type or a Slurm feature named here.
  std::map<std::string, double> node_types;
  // [cleanup]
  // Parent of the per-job checkpoint directories: the plugin's checkpoint_base argument.
  std::string checkpoint_base = "/var/spool/slurm-elastic";
  // How long a finished job's checkpoint directory is kept (0 = removed once Slurm no longer
  // lists the job as unfinished); nullopt ("never"): elasticd never removes any.
  std::optional<std::chrono::seconds> checkpoint_retention{std::chrono::hours(24 * 7)};
  // [background] (docs/admin.md "Background jobs"; DeepPool §5)
  // The Slurm partition of --elastic-class=background jobs, whose Nodes= elasticd keeps equal
  // to the nodes foreground elastic jobs hold; "" = background placement off.
  std::string background_partition;
  // Most background jobs on one foreground node; more are requeued.
  int background_max_per_node = 1;
};

// "7d", "12h", "30m", "0s" (anything ParseDuration takes, plus whole days) or "never"
// (nullopt in the outer optional). The outer nullopt means the text is invalid.
std::optional<std::optional<std::chrono::seconds>> ParseRetention(std::string_view text);

// Throws elastic::ConfigError naming file, line, key, value and expected form.
DaemonConfig LoadDaemonConfig(const std::string& path);
DaemonConfig ParseDaemonConfig(const std::string& text, const std::string& source_name);

const char* ToString(LogLevel level);

}  // namespace elastic::daemon
