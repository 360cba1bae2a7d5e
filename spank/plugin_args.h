// Arguments of the plugstack.conf line (`required spank_elastic.so key=value ...`).
// Pure C++; written by the sysadmin, but parsed strictly so a typo is reported, not ignored.
#pragma once

#include <string>
#include <vector>

namespace elastic::spank {

struct PluginArgs {
  // Parent of the per-job checkpoint directories (<base>/<user>/<jobid>).
  std::string checkpoint_base = "/var/spool/slurm-elastic";
  // elasticd's UNIX socket.
  std::string elasticd_socket = "/run/elasticd/elasticd.sock";
  // Slurm partition of --elastic-class=background jobs ("" = none: such jobs are refused).
  std::string background_partition;
};

struct PluginArgsResult {
  PluginArgs args;
  std::string error;  // empty on success
};

PluginArgsResult ParsePluginArgs(const std::vector<std::string>& argv);

}  // namespace elastic::spank
