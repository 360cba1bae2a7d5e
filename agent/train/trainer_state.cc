// Trainer checkpoint state: the fingerprint and the records a resumed run needs to continue bit
// for bit (record layout: docs/checkpoint-format.md, "Records the trainer writes").
#include <torch/torch.h>

#include <charconv>
#include <cstring>
#include <sstream>

#include "agent/checkpoint/checkpoint_error.h"
#include "agent/checkpoint/checkpoint_reader.h"
#include "agent/checkpoint/checkpoint_writer.h"
#include "agent/common/errors.h"
#include "agent/common/shape_text.h"
#include "agent/est/est_buffers.h"
#include "agent/plan/execution_plan.h"
#include "agent/train/params_digest.h"
#include "agent/train/trainer.h"
#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

constexpr const char* kParamsRecord = "params";
constexpr const char* kOptimizerRecord = "optimizer";
constexpr const char* kProgressRecord = "progress";
constexpr const char* kBucketMapRecord = "bucket_map";

std::string EstRecord(std::int64_t id) { return "est/" + std::to_string(id); }
// An EST's buffers (est_buffers.h), only for a model with buffers.
std::string EstBuffersRecord(std::int64_t id) { return "est_buffers/" + std::to_string(id); }

// Shortest text that reads back to the same double (std::to_chars round-trips exactly).
std::string ExactDouble(double value) {
  char text[64];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, end);
}

// The bytes of a LibTorch archive (a zip in PyTorch's format) filled by `save`.
template <typename Saver>
std::string ArchiveBytes(const Saver& save) {
  torch::serialize::OutputArchive archive;
  save(archive);
  std::string bytes;
  archive.save_to([&bytes](const void* data, std::size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  return bytes;
}

// `device`: where the tensors land, whichever device wrote them (checkpoints are
// device-independent: a GPU run's checkpoint resumes on CPUs and the other way round).
template <typename Loader>
void LoadArchive(const CheckpointReader& checkpoint, const char* record, torch::Device device,
                 const Loader& load) {
  const std::string& bytes = checkpoint.Get(record);
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(bytes.data(), bytes.size(), device);
    load(archive);
  } catch (const c10::Error& e) {
    std::string what = e.what();
    throw CheckpointError(
        checkpoint.path(),
        "record \"" + std::string(record) + "\" does not load: " + what.substr(0, what.find('\n')));
  }
}

// "progress" is text, one key=value a line: step=<completed steps>, loss=<last step's loss>,
// plan=<the writer's plan> (information only: any plan resumes any checkpoint).
std::string ProgressText(std::int64_t step, double loss, const std::string& plan) {
  return "step=" + std::to_string(step) + "\nloss=" + ExactDouble(loss) + "\nplan=" + plan + "\n";
}

// Checkpoints written before issue 8 carry fingerprint.plan; the plan no longer decides whether
// a checkpoint resumes, so it is left out of the comparison.
Fingerprint WithoutPlan(const Fingerprint& fingerprint) {
  Fingerprint kept;
  for (const auto& [key, value] : fingerprint.entries()) {
    if (key != "plan") kept.Add(key, value);
  }
  return kept;
}

struct Progress {
  std::int64_t step = -1;
  double loss = 0;
  bool has_loss = false;
};

Progress ParseProgress(const CheckpointReader& checkpoint) {
  Progress progress;
  std::istringstream lines(checkpoint.Get(kProgressRecord));
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq);
    const char* first = line.data() + eq + 1;
    const char* last = line.data() + line.size();
    if (key == "step") {
      auto [end, ec] = std::from_chars(first, last, progress.step);
      if (ec != std::errc() || end != last) progress.step = -1;
    } else if (key == "loss") {
      auto [end, ec] = std::from_chars(first, last, progress.loss);
      progress.has_loss = ec == std::errc() && end == last;
    }
  }
  if (progress.step < 0 || !progress.has_loss ||
      static_cast<std::uint64_t>(progress.step) != checkpoint.step()) {
    throw CheckpointError(checkpoint.path(),
                          "record \"progress\" is malformed or disagrees with the step " +
                              std::to_string(checkpoint.step()) + " of the meta record");
  }
  return progress;
}

}  // namespace

Fingerprint Trainer::CheckpointFingerprint() const {
  Fingerprint fingerprint;
  fingerprint.Add("model", ModelLabel(config_));
  fingerprint.Add("ests", std::to_string(config_.train.ests));
  fingerprint.Add("global_batch", std::to_string(config_.train.global_batch));
  fingerprint.Add("lr", ExactDouble(config_.train.lr));
  fingerprint.Add("momentum", ExactDouble(config_.train.momentum));
  fingerprint.Add("seed", std::to_string(config_.train.seed));
  fingerprint.Add("determinism", std::string(ToString(config_.train.determinism)));
  fingerprint.Add("threads", std::to_string(config_.train.threads));
  // The sample order is a permutation of the training set: another size, another order.
  fingerprint.Add("samples", std::to_string(data_.size()));
  // Only when set, so checkpoints from before data.augment existed still match plain runs.
  if (config_.data.augment != Augment::kNone) {
    fingerprint.Add("augment", std::string(ToString(config_.data.augment)));
  }
  // The same for the optimizer's later keys: a run that does not set them matches old ones.
  if (config_.train.weight_decay != 0) {
    fingerprint.Add("weight_decay", ExactDouble(config_.train.weight_decay));
  }
  if (config_.train.lr_schedule != LrSchedule::kConstant || config_.train.warmup_steps != 0) {
    fingerprint.Add("lr_schedule", std::string(ToString(config_.train.lr_schedule)));
    fingerprint.Add("warmup_steps", std::to_string(config_.train.warmup_steps));
    fingerprint.Add("steps", std::to_string(config_.train.steps));  // the curve's length
  }
  for (const auto& item : model_->named_parameters()) {
    fingerprint.Add("param." + item.key(), ShapeText(item.value().sizes()));
  }
  for (const auto& item : model_->named_buffers()) {
    fingerprint.Add("buffer." + item.key(), ShapeText(item.value().sizes()));
  }
  return fingerprint;
}

void Trainer::SaveState(CheckpointWriter* writer) {
  // Replicas stay identical by construction (same reduced gradient, same optimizer step); check
  // it here, once per checkpoint, where a silent divergence would otherwise be saved for good.
  const std::string digest = ParametersOnlySha256(*model_);
  const std::string root_digest = BroadcastText(*world_, digest);
  if (digest != root_digest) {
    throw TrainingError("rank " + std::to_string(world_->rank()) + ": parameters after step " +
                        std::to_string(step_) + " (sha256 " + digest + ") differ from rank 0's (" +
                        root_digest + "): the replicas diverged; not writing a checkpoint");
  }
  // An EST context is its generator state: raw bytes of the CPU generator's uint8 state tensor,
  // all of one size. Hosted blocks are contiguous in rank order, so the gather is in EST order.
  std::vector<std::uint8_t> mine;
  for (const EstContext& est : ests_) {
    if (!ReportsHostedEsts()) break;  // rank 0 of a TP group holds the same contexts
    torch::Tensor state = est.rng_state.contiguous();
    const auto* bytes = static_cast<const std::uint8_t*>(state.data_ptr());
    mine.insert(mine.end(), bytes, bytes + state.numel());
  }
  std::vector<std::int64_t> counts;
  const std::vector<std::uint8_t> all = world_->AllGatherBytes(mine, counts);
  // Every context has one size; a rank may host none (pipeline stages after the first).
  const std::size_t state_size = all.size() / static_cast<std::size_t>(config_.train.ests);
  if (all.size() != static_cast<std::size_t>(config_.train.ests) * state_size || state_size == 0) {
    throw TrainingError("checkpoint: gathered " + std::to_string(all.size()) +
                        " bytes of EST contexts: expected " + std::to_string(config_.train.ests) +
                        " x " + std::to_string(state_size));
  }
  std::vector<std::string> est_buffers = GatherEstBuffers();
  std::string loader = GatherLoaderRecord();
  std::string optimizer = update_->OptimizerArchive(/*primary=*/writer != nullptr);
  if (writer == nullptr) return;
  writer->Add(kParamsRecord, ArchiveBytes([this](auto& archive) { model_->save(archive); }));
  writer->Add(kOptimizerRecord, std::move(optimizer));
  writer->Add(kProgressRecord,
              ProgressText(step_, last_loss_, DescribeExecutionPlan(config_, plan_)));
  writer->Add(kBucketMapRecord, stash_.BucketMap());
  writer->Add(std::string(kLoaderRecordName), std::move(loader));
  for (std::int64_t id = 0; id < config_.train.ests; ++id) {
    const auto* first = reinterpret_cast<const char*>(all.data()) + id * state_size;
    writer->Add(EstRecord(id), std::string(first, state_size));
  }
  for (std::size_t id = 0; id < est_buffers.size(); ++id) {
    writer->Add(EstBuffersRecord(static_cast<std::int64_t>(id)), std::move(est_buffers[id]));
  }
}

// Every EST's buffers from the rank hosting it, in EST order (collective); empty for a model
// without buffers. Each EST's bytes have one size: the same buffers, shapes and dtypes.
std::vector<std::string> Trainer::GatherEstBuffers() {
  if (model_->buffers().empty()) return {};
  std::string mine;
  for (const EstContext& est : ests_) {
    if (!ReportsHostedEsts()) break;
    mine += BuffersToBytes(est.buffers);
  }
  std::vector<std::int64_t> counts;
  const std::vector<std::uint8_t> all = world_->AllGatherBytes(
      std::span(reinterpret_cast<const std::uint8_t*>(mine.data()), mine.size()), counts);
  const auto ests = static_cast<std::size_t>(config_.train.ests);
  const std::size_t size = all.size() / ests;
  std::vector<std::string> records;
  for (std::size_t id = 0; id < ests; ++id) {
    records.emplace_back(reinterpret_cast<const char*>(all.data()) + id * size, size);
  }
  return records;
}

// The hosted ESTs' buffers from the checkpoint. Read before anything changes, like the streams.
std::vector<std::vector<torch::Tensor>> Trainer::ReadEstBuffers(
    const CheckpointReader& checkpoint) const {
  std::vector<std::vector<torch::Tensor>> buffers;
  const std::vector<torch::Tensor> like = model_->buffers();
  if (like.empty()) return buffers;
  for (const EstContext& est : ests_) {
    const std::string record = EstBuffersRecord(est.id);
    if (!checkpoint.Contains(record)) {
      throw CheckpointError(checkpoint.path(), "no record \"" + record +
                                                   "\": the model has buffers, so every EST's "
                                                   "copy is needed to resume");
    }
    std::vector<torch::Tensor> values;
    if (!BuffersFromBytes(checkpoint.Get(record), like, values)) {
      throw CheckpointError(checkpoint.path(), "record \"" + record + "\" has " +
                                                   std::to_string(checkpoint.Get(record).size()) +
                                                   " bytes: not this model's buffers");
    }
    buffers.push_back(std::move(values));
  }
  return buffers;
}

// Every rank's queue state (its hosted ESTs' lines), concatenated in rank order, which is EST
// order: the "loader" record (collective; every rank gets it, rank 0 writes it).
std::string Trainer::GatherLoaderRecord() {
  const std::string mine =
      ReportsHostedEsts() ? EncodeEstLoaderLines(queue_->Snapshot()) : std::string();
  std::vector<std::int64_t> counts;
  const std::vector<std::uint8_t> all = world_->AllGatherBytes(
      std::span(reinterpret_cast<const std::uint8_t*>(mine.data()), mine.size()), counts);
  return EncodeLoaderRecord(
      step_, ToString(config_.data.augment),
      std::string_view(reinterpret_cast<const char*>(all.data()), all.size()));
}

// The queue continues from the checkpoint's record: this rank takes its hosted ESTs' streams
// and pending batches, whatever W wrote them. A checkpoint from before the record existed
// resumes from the state an uninterrupted run has at its step (nothing pending).
void Trainer::RestoreLoader(const CheckpointReader& checkpoint) {
  const auto step = static_cast<std::int64_t>(checkpoint.step());
  if (!checkpoint.Contains(kLoaderRecordName)) {
    queue_->Restore(step, BatchQueue::StatesAtStep(static_cast<std::uint64_t>(config_.train.seed),
                                                   hosted_, step));
    return;
  }
  const LoaderExpectations expected{step, config_.train.ests, queue_->steps_per_epoch(),
                                    ToString(config_.data.augment)};
  std::vector<EstLoaderState> all;
  if (std::string problem = DecodeLoaderRecord(checkpoint.Get(kLoaderRecordName), expected, &all);
      !problem.empty()) {
    throw CheckpointError(checkpoint.path(), "record \"loader\" " + problem);
  }
  queue_->Restore(
      step, std::vector<EstLoaderState>(all.begin() + hosted_.begin, all.begin() + hosted_.end));
}

void Trainer::RestoreState(const CheckpointReader& checkpoint) {
  if (std::string mismatch =
          DescribeMismatch(WithoutPlan(checkpoint.fingerprint()), CheckpointFingerprint());
      !mismatch.empty()) {
    throw ConfigError("checkpoint " + checkpoint.path().string() + ": cannot resume: " + mismatch);
  }
  const Progress progress = ParseProgress(checkpoint);
  // d1/d2 rebuild the gradient layout from the checkpoint's bucket map (here: require that it is
  // this run's, since the layout is a pure function of the model); d0 does not restore it.
  if (config_.train.determinism != Determinism::kD0 &&
      checkpoint.Get(kBucketMapRecord) != stash_.BucketMap()) {
    throw CheckpointError(checkpoint.path(),
                          "record \"bucket_map\" is not this run's gradient layout (" +
                              std::string(ToString(config_.train.determinism)) +
                              " restores it exactly): the model's parameter order changed");
  }
  // Read every EST first so a malformed record leaves the trainer untouched where it can.
  std::vector<torch::Tensor> rng_states;
  for (const EstContext& est : ests_) {
    const std::string& bytes = checkpoint.Get(EstRecord(est.id));
    if (static_cast<std::int64_t>(bytes.size()) != est.rng_state.numel()) {
      throw CheckpointError(checkpoint.path(),
                            "record \"" + EstRecord(est.id) + "\" has " +
                                std::to_string(bytes.size()) + " bytes: expected " +
                                std::to_string(est.rng_state.numel()) + " (a CPU generator state)");
    }
    torch::Tensor state = torch::empty({est.rng_state.numel()}, torch::kUInt8);
    std::memcpy(state.data_ptr(), bytes.data(), bytes.size());
    rng_states.push_back(state);
  }
  std::vector<std::vector<torch::Tensor>> est_buffers = ReadEstBuffers(checkpoint);
  RestoreLoader(checkpoint);  // validates before anything below changes the trainer
  // Module::load assigns into the existing parameter tensors (Tensor::set_), so the optimizer
  // and the gradient stash keep referring to them.
  LoadArchive(checkpoint, kParamsRecord, device_,
              [this](auto& archive) { model_->load(archive); });
  LoadArchive(checkpoint, kOptimizerRecord, device_,
              [this](auto& archive) { optimizer_->load(archive); });
  update_->AdoptLoadedOptimizerState();
  for (std::size_t i = 0; i < ests_.size(); ++i) ests_[i].rng_state = rng_states[i];
  for (std::size_t i = 0; i < est_buffers.size(); ++i) ests_[i].buffers = est_buffers[i];
  if (!ests_.empty()) LoadEstBuffers(*model_, ests_.front());
  step_ = progress.step;
  last_loss_ = progress.loss;
}

}  // namespace elastic::agent
