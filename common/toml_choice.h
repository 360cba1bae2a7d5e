// Reading one TOML string key through a job-option parser (job_options.h): the agent's config
// and the supervisor's own reading of the same file must refuse a bad value the same way.
#pragma once

#include <string_view>

#include "common/job_options.h"
#include "common/result.h"
#include "common/toml_reader.h"

namespace elastic {

// Sets `out` from `key` when present; a value `parse` refuses is reported through reader.Fail.
template <typename T>
void ReadChoice(TomlReader& reader, std::string_view key, Result<T> (*parse)(std::string_view),
                T& out) {
  if (auto text = reader.String(key)) {
    Result<T> parsed = parse(*text);
    if (!parsed) reader.Fail(key, parsed.error);
    out = *parsed.value;
  }
}

}  // namespace elastic
