// SaveRefit/LoadRefit: perf_refit.json through AtomicFile and the checkpoint code's readers.
#include "agent/supervisor/refit_store.h"

#include <cstdint>
#include <string>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/private_files.h"
#include "common/atomic_file.h"

namespace elastic::agent {

namespace fs = std::filesystem;
namespace ck = checkpoint;

// A unique 0600 temp file (O_EXCL), as the checkpoints beside it are written.
void SaveRefit(const fs::path& dir, const perf::FittedModel& model) {
  // The first generation's refit may come before its first checkpoint made the directory;
  // made (or checked) the way the checkpoints make it: owned by the user, 0700.
  ck::EnsurePrivateDirectory(dir);
  try {
    WriteFileAtomically(dir / kRefitFileName, perf::FittedModelToJson(model),
                        {.mode = 0600, .temp_name = TempName::kUnique});
  } catch (const FileError& e) {
    throw CheckpointError(e.path(), e.reason());
  }
}

std::optional<perf::FittedModel> LoadRefit(const fs::path& dir, const std::string& model_name,
                                           std::string& why) {
  why.clear();
  const fs::path path = dir / kRefitFileName;
  std::error_code error;
  if (!fs::exists(path, error)) return std::nullopt;
  std::string text;
  try {
    std::uint64_t size = 0;
    UniqueFd fd = ck::OpenRegularFile(path, &size);
    text.resize(size);
    if (!ck::ReadAt(fd.get(), path, 0, text.data(), text.size())) {
      why = path.string() + ": it shrank while being read";
      return std::nullopt;
    }
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
  Result<perf::FittedModel> model = perf::FittedModelFromJson(text);
  if (!model) {
    why = path.string() + ": " + model.error;
    return std::nullopt;
  }
  if (model->model_name != model_name) {
    why = path.string() + " describes model \"" + model->model_name + "\", not \"" + model_name +
          "\"";
    return std::nullopt;
  }
  return *model;
}

}  // namespace elastic::agent
