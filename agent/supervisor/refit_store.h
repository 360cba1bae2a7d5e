// The online refit's model kept beside the job's checkpoints (<checkpoint dir>/perf_refit.json),
// so that a requeued job (same job id, same checkpoint directory) chooses its plans with what its
// earlier runs measured instead of starting again from train.perf_model (Rubick §4.3).
// Errors: SaveRefit throws checkpoint::CheckpointError (a std::runtime_error) naming the path.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "perf/rubick/perf_json.h"

namespace elastic::agent {

inline constexpr const char* kRefitFileName = "perf_refit.json";

// Writes `model` as fitted.json (elastic-perf-fitted/1) into `dir` (made 0700 when missing, as
// checkpoint directories are) atomically: a 0600 temp file,
// fsync, rename over the previous one, fsync of the directory.
void SaveRefit(const std::filesystem::path& dir, const perf::FittedModel& model);

// The model saved in `dir`, if there is one for `model_name`. nullopt with `why` empty when there
// is none; with `why` set when one exists but cannot be used (unreadable, invalid, another model),
// so the caller can say why it starts from its configured model.
std::optional<perf::FittedModel> LoadRefit(const std::filesystem::path& dir,
                                           const std::string& model_name, std::string& why);

}  // namespace elastic::agent
