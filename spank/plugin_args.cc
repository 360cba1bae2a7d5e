// Strict key=value parsing of the plugstack arguments.
#include "spank/plugin_args.h"

#include "spank/background_class.h"

namespace elastic::spank {
namespace {

bool IsSafeAbsolutePath(const std::string& path) {
  // Root code builds paths from this: refuse relative paths, "..", and control characters.
  if (path.empty() || path[0] != '/' || path.find("/../") != std::string::npos ||
      path.ends_with("/..")) {
    return false;
  }
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace

PluginArgsResult ParsePluginArgs(const std::vector<std::string>& argv) {
  PluginArgsResult result;
  for (const std::string& arg : argv) {
    auto eq = arg.find('=');
    if (eq == std::string::npos) {
      result.error = "elastic: plugstack argument \"" + arg + "\": expected key=value";
      return result;
    }
    std::string key = arg.substr(0, eq);
    std::string value = arg.substr(eq + 1);
    if (key == "background_partition") {
      if (!IsPartitionName(value)) {
        result.error = "elastic: plugstack argument background_partition=\"" + value +
                       "\": expected a Slurm partition name (letters, digits, _ - .)";
        return result;
      }
      result.args.background_partition = value;
      continue;
    }
    std::string* slot = nullptr;
    if (key == "checkpoint_base") slot = &result.args.checkpoint_base;
    else if (key == "elasticd_socket") slot = &result.args.elasticd_socket;
    if (slot == nullptr) {
      result.error = "elastic: plugstack argument \"" + key +
                     "\": unknown key (expected checkpoint_base, elasticd_socket or "
                     "background_partition)";
      return result;
    }
    if (!IsSafeAbsolutePath(value)) {
      result.error = "elastic: plugstack argument " + key + "=\"" + value +
                     "\": expected an absolute path without \"..\"";
      return result;
    }
    *slot = value;
  }
  return result;
}

}  // namespace elastic::spank
