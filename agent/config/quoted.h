// Quoted: a config value as error messages show it ("value"), shared by the job-config readers.
#pragma once

#include <string>
#include <string_view>

namespace elastic::agent {

inline std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

}  // namespace elastic::agent
