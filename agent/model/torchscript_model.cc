// TorchScriptModel: a loaded TorchScript module behind the Model interface.
#include "agent/model/torchscript_model.h"

#include <torch/torch.h>

#include <filesystem>
#include <string_view>
#include <system_error>

#include "agent/common/errors.h"
#include "agent/common/shape_text.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

// torch.nn.Sequential's TorchScript type: "__torch__.torch.nn.modules.container.Sequential", or
// with a mangled part before the class name ("...container.___torch_mangle_40.Sequential") when
// one program scripted several.
constexpr std::string_view kSequentialModule = "__torch__.torch.nn.modules.container.";
constexpr std::string_view kSequentialClass = ".Sequential";

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

torch::jit::Module LoadModule(const std::string& path) {
  const std::string where = "model.torchscript: \"" + path + "\"";
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw ConfigError(where + " is not a file: expected a module saved by "
                              "torch.jit.script(model).save(PATH)");
  }
  try {
    return torch::jit::load(path, torch::Device(torch::kCPU));
  } catch (const c10::Error& e) {
    throw ConfigError(where + " is not a TorchScript module (" + FirstLine(e.what()) +
                      "): expected a file saved by torch.jit.script(model).save(PATH) or "
                      "torch.jit.trace(model, example).save(PATH), not torch.save(...)");
  }
}

// Registers `from`'s own parameters and buffers in `into` under their names, then its children
// as child modules, so `into`'s named_parameters() are the module's state_dict names and share
// its tensors.
void Mirror(const torch::jit::Module& from, torch::nn::Module& into) {
  for (const auto& item : from.named_parameters(/*recurse=*/false)) {
    into.register_parameter(item.name, item.value, item.value.requires_grad());
  }
  for (const auto& item : from.named_buffers(/*recurse=*/false)) {
    into.register_buffer(item.name, item.value);
  }
  for (const auto& child : from.named_children()) {
    auto mirror = std::make_shared<torch::nn::Module>();
    Mirror(child.value, *mirror);
    into.register_module(child.name, mirror);
  }
}

bool IsSequential(const torch::jit::Module& module) {
  const auto& type = module.type();
  if (!type->name()) return false;
  const std::string& name = type->name()->qualifiedName();
  return name.starts_with(kSequentialModule) && name.ends_with(kSequentialClass);
}

}  // namespace

TorchScriptModel::TorchScriptModel(const std::string& path)
    : path_(path), module_(LoadModule(path)) {
  Mirror(module_, *this);
  if (parameters().empty()) {
    throw ConfigError("model.torchscript: \"" + path_ +
                      "\" has no parameters: expected a module with something to train");
  }
  if (IsSequential(module_)) {
    for (const torch::jit::Module& child : module_.children()) blocks_.push_back(child);
  }
}

torch::Tensor TorchScriptModel::Logits(const torch::IValue& output,
                                       const torch::Tensor& input) const {
  const std::string where = "model.torchscript \"" + path_ + "\": for an input batch of shape " +
                            ShapeText(input.sizes()) + " the module returned ";
  if (!output.isTensor()) {
    throw TrainingError(where + "a " + output.tagKind() +
                        ": expected one tensor of logits [N, C] or [N, T, V]");
  }
  const torch::Tensor logits = output.toTensor();
  const bool batch_first = logits.dim() >= 1 && logits.size(0) == input.size(0);
  if (batch_first && logits.dim() == 2) return logits;
  if (batch_first && logits.dim() == 3) return logits.transpose(1, 2);  // [N, V, T]
  throw TrainingError(where + "shape " + ShapeText(logits.sizes()) + ": expected logits [" +
                      std::to_string(input.size(0)) + ", C] (classes) or [" +
                      std::to_string(input.size(0)) + ", T, V] (a token model)");
}

torch::Tensor TorchScriptModel::forward(const torch::Tensor& input) {
  return Logits(module_.forward({input}), input);
}

std::int64_t TorchScriptModel::BlockCount() const {
  return blocks_.empty() ? 1 : static_cast<std::int64_t>(blocks_.size());
}

torch::Tensor TorchScriptModel::ForwardBlock(std::int64_t index, const torch::Tensor& input) {
  if (blocks_.empty()) return forward(input);
  torch::IValue output = blocks_[static_cast<std::size_t>(index)].forward({input});
  if (index + 1 < BlockCount()) return output.toTensor();
  return Logits(output, input);
}

std::vector<torch::Tensor> TorchScriptModel::BlockParameters(std::int64_t index) const {
  if (blocks_.empty()) return parameters();
  std::vector<torch::Tensor> params;
  for (const torch::Tensor& p : blocks_[static_cast<std::size_t>(index)].parameters()) {
    params.push_back(p);
  }
  return params;
}

std::optional<std::string> TorchScriptModel::CannotSplitAcrossRanks() const {
  return std::string("a TorchScript module (model.torchscript) runs whole on every rank; this "
                     "plan places parts of a model on different ranks, which only the built-in "
                     "models support: expected dp, ga, zero-dp or zero-offload");
}

std::optional<std::string> TorchScriptModel::CannotRecompute() const {
  if (!blocks_.empty()) return std::nullopt;
  return "model.torchscript \"" + path_ +
         "\" is not an nn.Sequential, so gradient checkpointing cannot cut it into segments to "
         "recompute: expected a scripted nn.Sequential, or plan dp, ga, zero-dp or zero-offload";
}

std::optional<std::string> TorchScriptModel::TensorParallelUnsupported(
    const TensorParallelShard& shard) const {
  (void)shard;
  return CannotSplitAcrossRanks();
}

void TorchScriptModel::train(bool on) {
  torch::nn::Module::train(on);
  module_.train(on);
}

}  // namespace elastic::agent
