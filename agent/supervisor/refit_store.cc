// SaveRefit/LoadRefit: perf_refit.json through the checkpoint code's private-file helpers.
#include "agent/supervisor/refit_store.h"

#include <cstdint>
#include <string>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/private_files.h"

namespace elastic::agent {

namespace fs = std::filesystem;
namespace ck = checkpoint;

void SaveRefit(const fs::path& dir, const perf::FittedModel& model) {
  const fs::path path = dir / kRefitFileName;
  ck::TempFile temp = ck::CreateTempFile(dir, kRefitFileName);
  try {
    ck::WriteAll(temp.fd.get(), temp.path, perf::FittedModelToJson(model));
    ck::SyncFile(temp.fd.get(), temp.path);
    temp.fd.Close(temp.path);
    std::error_code error;
    fs::rename(temp.path, path, error);
    if (error) {
      throw CheckpointError(temp.path.string() + ": rename to " + path.string() + ": " +
                            error.message());
    }
  } catch (...) {
    ck::RemoveFile(temp.path);
    throw;
  }
  ck::SyncDirectory(dir);
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
    ck::UniqueFd fd = ck::OpenRegularFile(path, &size);
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
