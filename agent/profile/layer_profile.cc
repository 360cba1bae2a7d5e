// Layer-by-layer timing of a LayerGraphModel and the profile JSON it produces.
#include "agent/profile/layer_profile.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "agent/common/errors.h"
#include "agent/common/median.h"
#include "common/atomic_file.h"
#include "perf/burst/profile_json.h"

namespace elastic::agent {
namespace {

using Clock = std::chrono::steady_clock;

double ParamBytes(GraphLayerModule& layer) {
  double bytes = 0.0;
  for (const torch::Tensor& p : layer.LayerParameters()) {
    bytes += static_cast<double>(p.numel()) * static_cast<double>(p.element_size());
  }
  return bytes;
}

// Forward + backward of layer `index` alone, seconds: the median of `reps` after `warmup`.
double TimeLayer(LayerGraphModel& model, size_t index, std::vector<torch::Tensor> inputs,
                 const torch::Tensor& output_grad, const LayerProfileOptions& options) {
  std::vector<torch::Tensor> params = model.layers()[index].module->LayerParameters();
  std::vector<double> samples;
  for (int rep = 0; rep < options.warmup + options.reps; ++rep) {
    for (torch::Tensor& p : params) p.mutable_grad().reset();
    for (torch::Tensor& in : inputs) in.mutable_grad().reset();
    const Clock::time_point start = Clock::now();
    torch::Tensor out = model.ForwardLayer(index, inputs);
    out.backward(output_grad);
    const std::chrono::duration<double> elapsed = Clock::now() - start;
    if (rep >= options.warmup) samples.push_back(elapsed.count());
  }
  return std::max(Median(samples), 1e-9);  // the format needs ms > 0
}

// Times every layer at per-worker batch `batch`, appending a point to each profile layer.
void ProfileBatch(LayerGraphModel& model, int batch, int64_t image_size,
                  const LayerProfileOptions& options, burst::ModelProfile& profile,
                  std::ostream& log) {
  const torch::Tensor image =
      torch::randn({batch, model.channels(), image_size, image_size});
  std::vector<torch::Tensor> outputs;
  model.train();
  try {
    torch::NoGradGuard no_grad;
    outputs = model.ForwardAll(image);
  } catch (const c10::Error&) {
    // Training-mode batch norm needs more than one value per channel (batch 1 on a 1x1 map,
    // Inception-v3 below 107 px): time this batch with running statistics instead.
    model.eval();
    torch::NoGradGuard no_grad;
    outputs = model.ForwardAll(image);
    log << "profile-layers: " << model.label() << " batch " << batch
        << ": a batch norm sees one value per channel; timed in eval mode" << std::endl;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::vector<torch::Tensor> inputs;
    for (const torch::Tensor& in : model.InputsOf(i, outputs, image)) {
      inputs.push_back(i == 0 ? in : in.detach().requires_grad_(true));
    }
    const double seconds =
        TimeLayer(model, i, std::move(inputs), torch::ones_like(outputs[i]), options);
    burst::Layer& layer = profile.layers[i];
    layer.compute.push_back({batch, seconds});
    layer.output_bytes_per_sample =
        static_cast<double>(outputs[i].numel() / batch) * outputs[i].element_size();
  }
}

// Crash-safe through <path>.tmp; no exact mode: the profile is the user's ordinary output, so
// the umask decides (0666 under it).
void WriteProfile(const std::string& path, const std::string& text) {
  try {
    WriteFileAtomically(path, text, {.mode = std::nullopt, .temp_name = TempName::kFixed});
  } catch (const FileError& e) {
    throw std::runtime_error(std::string("profile-layers: ") + e.what());
  }
}

}  // namespace

burst::ModelProfile ProfileLayers(LayerGraphModel& model, const LayerProfileOptions& options,
                                  std::ostream& log) {
  burst::ModelProfile profile;
  profile.name = model.label();
  profile.global_batch =
      options.global_batch > 0 ? options.global_batch : options.batches.back();
  profile.network.bandwidth_bytes_per_s = options.bandwidth_gbps * 1e9 / 8.0;
  profile.network.latency_s = options.latency_us * 1e-6;
  for (const GraphLayer& graph_layer : model.layers()) {
    burst::Layer layer;
    layer.name = graph_layer.name;
    layer.inputs = graph_layer.inputs;
    layer.param_bytes = ParamBytes(*graph_layer.module);
    profile.layers.push_back(std::move(layer));
  }
  const int64_t image_size =
      options.image_size > 0 ? options.image_size : model.default_image_size();
  const int previous_threads = torch::get_num_threads();
  torch::set_num_threads(options.threads);
  for (int batch : options.batches) {
    const Clock::time_point start = Clock::now();
    ProfileBatch(model, batch, image_size, options, profile, log);
    const std::chrono::duration<double> elapsed = Clock::now() - start;
    log << "profile-layers: " << model.label() << " batch " << batch << ": "
        << profile.layers.size() << " layers in " << elapsed.count() << " s" << std::endl;
  }
  torch::set_num_threads(previous_threads);
  model.train();
  return profile;
}

void RunLayerProfileCommand(const LayerProfileOptions& options, std::ostream& out) {
  torch::manual_seed(options.seed);
  const int64_t classes =
      options.classes > 0 ? options.classes : (options.model == "fmnist_cnn" ? 10 : 1000);
  std::shared_ptr<LayerGraphModel> model = MakeLayerGraphModel(options.model, classes);
  if (!model) {
    throw UsageError("profile-layers: --model: invalid value \"" + options.model +
                     "\": expected one of " + std::string(LayerGraphModelNames()) +
                     " (fmnist_cnn only with 10 classes)");
  }
  const Clock::time_point start = Clock::now();
  burst::ModelProfile profile = ProfileLayers(*model, options, out);
  const std::string invalid = burst::ValidateProfile(profile);
  if (!invalid.empty()) throw std::runtime_error("profile-layers: " + invalid);
  WriteProfile(options.out_path, burst::ProfileToJson(profile).dump(1) + "\n");
  const std::chrono::duration<double> elapsed = Clock::now() - start;
  double params = 0.0;
  for (const burst::Layer& layer : profile.layers) params += layer.param_bytes / 4.0;
  out << "profile-layers: model=" << profile.name << " layers=" << profile.layers.size()
      << " params=" << static_cast<int64_t>(params) << " image="
      << (options.image_size > 0 ? options.image_size : model->default_image_size())
      << " threads=" << options.threads << " reps=" << options.reps
      << " warmup=" << options.warmup << " seconds=" << elapsed.count()
      << " out=" << options.out_path << std::endl;
}

}  // namespace elastic::agent
