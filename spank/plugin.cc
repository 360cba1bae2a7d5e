// The exported C ABI of spank_elastic.so: symbols Slurm looks up, and a dispatcher per context.
// Everything else lives in small C++ units; no exception may cross this boundary.
extern "C" {
#include <slurm/slurm_version.h>
}

#include <exception>
#include <string>
#include <vector>

#include "spank/context.h"
#include "spank/resize_support.h"

namespace elastic::spank {

ElasticSettings& Settings() {
  static ElasticSettings settings;
  return settings;
}

PluginArgs& Args() {
  static PluginArgs args;
  return args;
}

namespace {

std::string& RemoteError() {
  static std::string error;
  return error;
}

}  // namespace

int Refuse(const std::string& message) {
  if (spank_context() != S_CTX_REMOTE) {
    slurm_error("%s", message.c_str());
    return -1;
  }
  if (RemoteError().empty()) RemoteError() = message;
  slurm_error("%s (the job's tasks will fail; the node stays in service)", message.c_str());
  return 0;
}

const std::string& DeferredRemoteError() { return RemoteError(); }

namespace {

// Slurm may call an option callback twice with the same value (command line, then the
// forwarded environment); applying a value is idempotent, so that is harmless.
int OnOption(int val, const char* optarg, int /*remote*/) {
  try {
    std::string error = ApplyFlag(Settings(), static_cast<FlagId>(val), optarg);
    return error.empty() ? 0 : Refuse(error);
  } catch (const std::exception& e) {
    return Refuse(std::string("elastic: internal error parsing an option: ") + e.what());
  }
}

int RegisterOptions(spank_t sp) {
  for (const FlagSpec& flag : Flags()) {
    // spank_option wants non-const char*; Slurm copies the strings and never writes them.
    struct spank_option option = {
        const_cast<char*>(flag.name), const_cast<char*>(flag.arginfo),
        const_cast<char*>(flag.usage), flag.arginfo != nullptr ? 1 : 0,
        static_cast<int>(flag.id), OnOption};
    if (spank_option_register(sp, &option) != ESPANK_SUCCESS) {
      return Refuse(std::string("elastic: cannot register --") + flag.name);
    }
  }
  return 0;
}

template <typename F>
int Guarded(const char* where, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Refuse(std::string("elastic: internal error in ") + where + ": " + e.what());
  } catch (...) {
    return Refuse(std::string("elastic: internal error in ") + where);
  }
}

}  // namespace
}  // namespace elastic::spank

using namespace elastic::spank;

extern "C" {

__attribute__((visibility("default"))) extern const char plugin_name[] = "elastic";
__attribute__((visibility("default"))) extern const char plugin_type[] = "spank";
__attribute__((visibility("default"))) extern const unsigned int plugin_version =
    SLURM_VERSION_NUMBER;
__attribute__((visibility("default"))) extern const unsigned int spank_plugin_version = 0;

__attribute__((visibility("default"))) int slurm_spank_init(spank_t sp, int ac, char** av) {
  return Guarded("slurm_spank_init", [&] {
    PluginArgsResult parsed = ParsePluginArgs(std::vector<std::string>(av, av + ac));
    if (!parsed.error.empty()) return Refuse(parsed.error);
    Args() = parsed.args;
    switch (spank_context()) {
      case S_CTX_LOCAL:
      case S_CTX_REMOTE:
      case S_CTX_ALLOCATOR: return RegisterOptions(sp);
      default: return 0;
    }
  });
}

__attribute__((visibility("default"))) int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  return Guarded("slurm_spank_init_post_opt", [&] {
    switch (spank_context()) {
      case S_CTX_ALLOCATOR: return AllocatorInitPostOpt(sp);
      case S_CTX_LOCAL:  // srun outside a job creates one: the same refusal as sbatch
        return LocalInitPostOpt(sp) != 0 ? -1 : RefuseUnsupportedResize();
      case S_CTX_REMOTE: return RemoteInitPostOpt(sp);
      default: return 0;
    }
  });
}

__attribute__((visibility("default"))) int slurm_spank_user_init(spank_t sp, int, char**) {
  return Guarded("slurm_spank_user_init", [&] { return RemoteUserInit(sp); });
}

// Each task, as the user, just before exec: where a remembered remote failure fails the task
// (and so the job), which slurmstepd handles without draining the node.
__attribute__((visibility("default"))) int slurm_spank_task_init(spank_t, int, char**) {
  if (spank_context() != S_CTX_REMOTE || DeferredRemoteError().empty()) return 0;
  slurm_error("%s", DeferredRemoteError().c_str());
  return -1;
}

}  // extern "C"
