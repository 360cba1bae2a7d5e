// RunExportCommand: checkpoint into the user's module, saved for torch.jit.load.
#include "agent/eval/export_command.h"

#include <torch/script.h>

#include <sstream>

#include "agent/eval/trained_model.h"
#include "agent/model/torchscript_model.h"
#include "common/atomic_file.h"
#include "common/toml_reader.h"

namespace elastic::agent {

std::string RunExportCommand(const JobConfig& config, const std::string& out, std::ostream& err) {
  if (config.model.torchscript.empty()) {
    throw ConfigError("export: model.name = \"" + config.model.name +
                      "\" is a built-in model: export writes the TorchScript module of "
                      "model.torchscript; expected a job with model.torchscript");
  }
  TrainedModel trained = LoadTrainedModel(config, err, "export", "export");
  auto& model = dynamic_cast<TorchScriptModel&>(*trained.model);
  // The module shares its tensors with the model, so it now holds the checkpoint's values.
  std::ostringstream bytes;
  model.module().save(bytes);
  // The user's file: the umask decides its mode, as for any file they write.
  WriteFileAtomically(out, bytes.str(), {std::nullopt, TempName::kFixed});
  return "elastic-agent: exported checkpoint=" + trained.checkpoint.string() +
         " step=" + std::to_string(trained.step) + " out=" + out + "\n";
}

}  // namespace elastic::agent
