// Remote context (slurmstepd, as root, before tasks exist): prepare the per-job checkpoint
// directory, then export the validated settings to the tasks as SLURM_ELASTIC_*, which
// elastic-agent reads (they override its config file).
#include <cstdint>
#include <string>

#include "spank/checkpoint_dir.h"
#include "spank/context.h"

namespace elastic::spank {
namespace {

std::string& CheckpointDir() {
  static std::string path;
  return path;
}

}  // namespace

int RemoteInitPostOpt(spank_t sp) {
  if (!Settings().elastic) return 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::uint32_t job_id = 0;
  if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) {
    return Refuse("elastic: cannot read the job's uid, gid and id");
  }
  // Every step on every node does this; it is idempotent and keeps a node that joined the job
  // by expansion as ready as the batch host.
  std::string error =
      PrepareJobCheckpointDir(Args().checkpoint_base, UserNameOf(uid), uid, gid, job_id,
                              CheckpointDir());
  // Fails this step's tasks (with the reason in the job's output), never the node.
  if (!error.empty()) return Refuse(error);
  return 0;
}

int RemoteUserInit(spank_t sp) {
  // Values were parsed by the option callbacks in this process: only well-formed text remains.
  auto env = TaskEnvironment(Settings());
  if (!CheckpointDir().empty()) env.emplace_back("SLURM_ELASTIC_CHECKPOINT_DIR", CheckpointDir());
  // Where `elastic-agent run` finds elasticd (the plugstack's elasticd_socket argument).
  if (!env.empty() && !Args().elasticd_socket.empty()) {  // elastic jobs only
    env.emplace_back("SLURM_ELASTIC_ELASTICD_SOCKET", Args().elasticd_socket);
  }
  for (const auto& [name, value] : env) {
    if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
      return Refuse("elastic: cannot set " + name + " for the job's tasks");
    }
  }
  return 0;
}

}  // namespace elastic::spank
