// The command line of `elastic-agent profile-layers` (Boost.Program_options), kept beside the
// command so agent/cli stays LibTorch-free. Errors: UsageError naming the flag, the value and
// what was expected (main maps it to exit status 2).
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "agent/cli/command_line.h"
#include "agent/profile/layer_profile.h"

namespace elastic::agent {

// `args` are the words after `profile-layers`. ShowText for --help.
std::variant<ShowText, LayerProfileOptions> ParseLayerProfileArgs(
    const std::vector<std::string>& args);

}  // namespace elastic::agent
