// EST runtime costs, measured side by side in one run (no pass/fail): (a) the per-step time of
// the EST trainer against a plain LibTorch loop with the same model, batch and threads, for
// E = 1 (one batch of B) and E = 8 (vs a plain loop over 8 sequential micro-batches of B/8
// accumulating gradients), each with the batches prepared in the training thread
// (data.workers = 0: the same work as the plain loop, which gathers its batch inline) and by
// the default loader thread (data.workers = 1, prefetching); (b) peak RSS of a W = 1 trainer
// for E = 1, 2, 4, 8, 16, each in its own child process, with the growth per EST next to the
// gradient size.
//
// Usage: est_bench [--steps N] [--rounds R] [--data DIR]   (defaults: 60 steps, 3 rounds, the
// Fashion-MNIST package). Each round measures every row once, interleaved; a row prints the
// median over rounds of the per-round medians and the median of the per-round ratios.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "agent/config/job_config.h"
#include "agent/data/dataset.h"
#include "agent/model/model.h"
#include "agent/model/registry.h"
#include "agent/train/trainer.h"

namespace {

using namespace elastic::agent;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kGlobalBatch = 256;
constexpr int kWarmupSteps = 5;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

JobConfig BenchConfig(const std::string& data, std::int64_t ests, std::int64_t workers = 1) {
  JobConfig config;
  config.data.workers = workers;
  config.data.path = data;
  config.train.ests = ests;
  config.train.global_batch = kGlobalBatch;
  config.train.threads = 1;
  config.train.log_every = 0;
  return config;
}

// Median seconds per step over `steps` steps (after warm-up) of the EST trainer.
double EstStepSeconds(const JobConfig& config, const Dataset& data, int steps) {
  Trainer trainer(config, data);
  std::vector<double> times;
  for (int i = 0; i < kWarmupSteps + steps; ++i) {
    const Clock::time_point start = Clock::now();
    trainer.RunStep();
    if (i >= kWarmupSteps) {
      times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  }
  return Median(times);
}

// The same model, optimizer, batch and threads in a plain loop: per step a random batch of
// kGlobalBatch samples in `micro_batches` sequential slices, gradients accumulated, one step.
double PlainStepSeconds(const JobConfig& config, const Dataset& data, int steps,
                        std::int64_t micro_batches) {
  // The trainer's process-wide settings, glibc's malloc thresholds included: which side of a
  // row page-faults its activations back in must not decide the ratio.
  ConfigureTorchRuntime(config);
  torch::manual_seed(1);
  std::shared_ptr<Model> model = MakeModel(config.model.name);
  torch::optim::SGD optimizer(
      model->parameters(),
      torch::optim::SGDOptions(config.train.lr).momentum(config.train.momentum));
  const std::int64_t micro = kGlobalBatch / micro_batches;
  std::vector<double> times;
  for (int i = 0; i < kWarmupSteps + steps; ++i) {
    torch::Tensor order = torch::randperm(data.size(), torch::kInt64).slice(0, 0, kGlobalBatch);
    const Clock::time_point start = Clock::now();
    model->zero_grad(/*set_to_none=*/true);
    for (std::int64_t m = 0; m < micro_batches; ++m) {
      torch::Tensor index = order.slice(0, m * micro, (m + 1) * micro);
      torch::Tensor loss = torch::nn::functional::cross_entropy(
          model->forward(data.images.index_select(0, index)), data.labels.index_select(0, index));
      (loss / static_cast<double>(micro_batches)).backward();
      loss.item<double>();  // the trainer reads every EST's loss too
    }
    optimizer.step();
    if (i >= kWarmupSteps) {
      times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  }
  return Median(times);
}

long PeakRssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Forgets the peak so far (Linux >= 4.0: "5" to clear_refs resets VmHWM), so the peak that
// follows is training's, not the dataset decoder's transient buffers.
void ResetPeakRss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
}

// Child mode: with `ests` ESTs of kRssEstBatch samples each (so every EST turn needs the same
// activation memory and growth comes from per-EST state), train 10 steps and print the peak RSS
// of training in KiB and the gradient bytes.
constexpr std::int64_t kRssEstBatch = 32;

int RssChild(const std::string& data_dir, std::int64_t ests) {
  JobConfig config = BenchConfig(data_dir, ests);
  config.train.global_batch = kRssEstBatch * ests;
  Dataset data = LoadFashionMnist(data_dir, Split::kTrain);
  ResetPeakRss();
  Trainer trainer(config, std::move(data));
  for (int i = 0; i < 10; ++i) trainer.RunStep();
  std::int64_t params = 0;
  for (const auto& p : trainer.model().parameters()) params += p.numel();
  std::printf("%ld %lld\n", PeakRssKiB(), static_cast<long long>(params * 4));
  return 0;
}

struct OverheadRow {
  const char* what;
  std::int64_t ests;
  std::int64_t workers;
  std::vector<double> est, plain, ratio;
};

int RunOverhead(const std::string& data_dir, int steps, int rounds) {
  const Dataset data = LoadFashionMnist(data_dir, Split::kTrain);
  std::printf(
      "(a) EST overhead: fmnist_cnn, global batch %lld, 1 thread, W = 1, median of %d "
      "steps, %d interleaved rounds\n",
      static_cast<long long>(kGlobalBatch), steps, rounds);
  std::vector<OverheadRow> rows = {
      {"E=1 workers=0 vs plain loop (1 batch of 256)", 1, 0, {}, {}, {}},
      {"E=1 workers=1 vs plain loop (1 batch of 256)", 1, 1, {}, {}, {}},
      {"E=8 workers=0 vs plain loop (8 micro-batches)", 8, 0, {}, {}, {}},
      {"E=8 workers=1 vs plain loop (8 micro-batches)", 8, 1, {}, {}, {}},
  };
  // Interleaved so a machine-wide slowdown hits both sides of a row alike.
  for (int round = 0; round < rounds; ++round) {
    for (OverheadRow& row : rows) {
      const JobConfig config = BenchConfig(data_dir, row.ests, row.workers);
      row.est.push_back(EstStepSeconds(config, data, steps));
      row.plain.push_back(PlainStepSeconds(config, data, steps, row.ests));
      row.ratio.push_back(row.est.back() / row.plain.back());
    }
  }
  for (const OverheadRow& row : rows) {
    std::printf("%-47s est=%7.2f ms  plain=%7.2f ms  ratio=%.4f\n", row.what, Median(row.est) * 1e3,
                Median(row.plain) * 1e3, Median(row.ratio));
  }
  return 0;
}

int RunRss(const std::string& self, const std::string& data_dir) {
  std::printf(
      "(b) peak RSS (VmHWM, reset after the dataset load) of a W = 1 trainer over 10 "
      "steps, %lld samples per EST\n",
      static_cast<long long>(kRssEstBatch));
  long base = 0;
  for (int ests : {1, 2, 4, 8, 16}) {
    const std::string command =
        self + " --rss-child " + std::to_string(ests) + " --data '" + data_dir + "'";
    FILE* child = popen(command.c_str(), "r");
    long rss = -1;
    long long grad_bytes = 0;
    if (child == nullptr || std::fscanf(child, "%ld %lld", &rss, &grad_bytes) != 2) {
      std::fprintf(stderr, "est_bench: child for E=%d failed\n", ests);
      return 1;
    }
    pclose(child);
    if (ests == 1) base = rss;
    const double per_est =
        ests == 1 ? 0.0 : static_cast<double>(rss - base) / static_cast<double>(ests - 1);
    std::printf(
        "E=%-2d peak_rss=%7.1f MiB  delta_per_est=%7.1f KiB  gradient=%7.1f KiB  "
        "delta/gradient=%.2f\n",
        ests, static_cast<double>(rss) / 1024, per_est, static_cast<double>(grad_bytes) / 1024,
        per_est / (static_cast<double>(grad_bytes) / 1024));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir(kDefaultDataPath);
  int steps = 60;
  int rounds = 3;
  long rss_child = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--steps")
      steps = std::atoi(argv[i + 1]);
    else if (flag == "--rounds")
      rounds = std::atoi(argv[i + 1]);
    else if (flag == "--data")
      data_dir = argv[i + 1];
    else if (flag == "--rss-child")
      rss_child = std::atol(argv[i + 1]);
    else {
      std::cerr << "usage: est_bench [--steps N] [--rounds R] [--data DIR]\n";
      return 2;
    }
  }
  try {
    if (rss_child > 0) return RssChild(data_dir, rss_child);
    if (RunOverhead(data_dir, steps, rounds) != 0) return 1;
    // Resolved here: in the popen shell /proc/self/exe would be the shell.
    return RunRss(std::filesystem::read_symlink("/proc/self/exe").string(), data_dir);
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::cerr << "est_bench: " << what.substr(0, what.find('\n')) << std::endl;
    return 1;
  }
}
