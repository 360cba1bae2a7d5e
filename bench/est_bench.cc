// EST runtime costs, measured side by side in one run (no pass/fail): (a) the per-step time of
// the EST trainer against a plain LibTorch loop with the same model, batch and threads, for
// E = 1 (one batch of B) and E = 8 (vs a plain loop over 8 sequential micro-batches of B/8
// accumulating gradients), each with the batches prepared in the training thread
// (data.workers = 0: the same work as the plain loop, which gathers its batch inline) and by
// the default loader thread (data.workers = 1, prefetching); (b) peak RSS of a W = 1 trainer
// for E = 1 ... 64, each in its own child processes, with the growth per EST next to the
// gradient size.
//
// Usage: est_bench [--steps N] [--rounds R] [--data DIR]   (defaults: 60 steps, 7 rounds, the
// Fashion-MNIST package). Each round measures every row once, interleaved; a row prints the
// median over rounds of the per-round medians and of the per-round median per-pair ratios.
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

// The same model, optimizer, batch and threads as the trainer in a plain loop: per step a random
// batch of kGlobalBatch samples in `micro_batches` sequential slices, gradients accumulated, one
// optimizer step.
class PlainLoop {
 public:
  PlainLoop(const JobConfig& config, const Dataset& data, std::int64_t micro_batches)
      : data_(data), micro_batches_(micro_batches) {
    torch::manual_seed(1);
    model_ = MakeJobModel(config);
    optimizer_ = std::make_unique<torch::optim::SGD>(
        model_->parameters(),
        torch::optim::SGDOptions(config.train.lr).momentum(config.train.momentum));
  }

  // Seconds of one step; the batch indices are drawn before the clock starts.
  double Step() {
    torch::Tensor order = torch::randperm(data_.size(), torch::kInt64).slice(0, 0, kGlobalBatch);
    const std::int64_t micro = kGlobalBatch / micro_batches_;
    const Clock::time_point start = Clock::now();
    model_->zero_grad(/*set_to_none=*/true);
    for (std::int64_t m = 0; m < micro_batches_; ++m) {
      torch::Tensor index = order.slice(0, m * micro, (m + 1) * micro);
      torch::Tensor loss =
          torch::nn::functional::cross_entropy(model_->forward(data_.images.index_select(0, index)),
                                               data_.labels.index_select(0, index));
      (loss / static_cast<double>(micro_batches_)).backward();
      loss.item<double>();  // the trainer reads every EST's loss too
    }
    optimizer_->step();
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

 private:
  const Dataset& data_;
  std::int64_t micro_batches_;
  std::shared_ptr<Model> model_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
};

double TrainerStep(Trainer& trainer) {
  const Clock::time_point start = Clock::now();
  trainer.RunStep();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct RoundResult {
  double est = 0, plain = 0, ratio = 0;  // medians: seconds per step, and per-pair est/plain
};

// One round of a row: a fresh trainer and plain loop in this process (ConfigureTorchRuntime
// applies the trainer's process-wide settings, malloc thresholds included, to both), warmed up,
// then `steps` pairs of steps alternating AB/BA, so drift and load hit both sides of each pair.
RoundResult MeasureRound(const JobConfig& config, const Dataset& data, int steps,
                         std::int64_t micro_batches) {
  Trainer trainer(config, data);
  PlainLoop plain(config, data, micro_batches);
  for (int i = 0; i < kWarmupSteps; ++i) {
    TrainerStep(trainer);
    plain.Step();
  }
  std::vector<double> est, loop, ratio;
  for (int i = 0; i < steps; ++i) {
    double e, p;
    if (i % 2 == 0) {
      e = TrainerStep(trainer);
      p = plain.Step();
    } else {
      p = plain.Step();
      e = TrainerStep(trainer);
    }
    est.push_back(e);
    loop.push_back(p);
    ratio.push_back(e / p);
  }
  return {Median(est), Median(loop), Median(ratio)};
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
      "AB/BA step pairs, %d interleaved rounds\n",
      static_cast<long long>(kGlobalBatch), steps, rounds);
  std::vector<OverheadRow> rows = {
      {"E=1 workers=0 vs plain loop (1 batch of 256)", 1, 0, {}, {}, {}},
      {"E=1 workers=1 vs plain loop (1 batch of 256)", 1, 1, {}, {}, {}},
      {"E=8 workers=0 vs plain loop (8 micro-batches)", 8, 0, {}, {}, {}},
      {"E=8 workers=1 vs plain loop (8 micro-batches)", 8, 1, {}, {}, {}},
  };
  // Rows interleaved per round and steps paired within a row, so a machine-wide slowdown hits
  // both sides alike; a row's ratio is the median over rounds of the median per-pair ratio.
  for (int round = 0; round < rounds; ++round) {
    for (OverheadRow& row : rows) {
      const RoundResult r =
          MeasureRound(BenchConfig(data_dir, row.ests, row.workers), data, steps, row.ests);
      row.est.push_back(r.est);
      row.plain.push_back(r.plain);
      row.ratio.push_back(r.ratio);
    }
  }
  for (const OverheadRow& row : rows) {
    std::printf("%-47s est=%7.2f ms  plain=%7.2f ms  ratio=%.4f\n", row.what, Median(row.est) * 1e3,
                Median(row.plain) * 1e3, Median(row.ratio));
  }
  return 0;
}

// Median over kRssRepeats children of the peak RSS (KiB) for `ests` ESTs; sets the gradient bytes.
constexpr int kRssRepeats = 3;

long MedianChildRssKiB(const std::string& self, const std::string& data_dir, int ests,
                       long long* grad_bytes) {
  std::vector<double> samples;
  for (int i = 0; i < kRssRepeats; ++i) {
    const std::string command =
        self + " --rss-child " + std::to_string(ests) + " --data '" + data_dir + "'";
    FILE* child = popen(command.c_str(), "r");
    long rss = -1;
    if (child == nullptr || std::fscanf(child, "%ld %lld", &rss, grad_bytes) != 2) {
      if (child != nullptr) pclose(child);
      return -1;
    }
    pclose(child);
    samples.push_back(static_cast<double>(rss));
  }
  return static_cast<long>(Median(samples));
}

// Allocator noise in one process's peak is a few MiB, more than one gradient of this model
// (313 KiB), so a per-EST delta at small E says nothing. E goes to 64 (63 extra ESTs make a
// 20 MiB budget) and the row that decides is the least-squares slope of peak RSS over E.
int RunRss(const std::string& self, const std::string& data_dir) {
  std::printf(
      "(b) peak RSS (VmHWM, reset after the dataset load; median of %d processes) of a W = 1 "
      "trainer over 10 steps, %lld samples per EST; budget = (E-1) gradient copies\n",
      kRssRepeats, static_cast<long long>(kRssEstBatch));
  const std::vector<int> sizes = {1, 2, 4, 8, 16, 32, 64};
  std::vector<double> xs, ys;
  long base = 0;
  long long grad_bytes = 0;
  for (int ests : sizes) {
    const long rss = MedianChildRssKiB(self, data_dir, ests, &grad_bytes);
    if (rss < 0) {
      std::fprintf(stderr, "est_bench: child for E=%d failed\n", ests);
      return 1;
    }
    if (ests == 1) base = rss;
    const double grad_kib = static_cast<double>(grad_bytes) / 1024;
    const double growth = static_cast<double>(rss - base);
    const double budget = (ests - 1) * grad_kib;
    std::printf("E=%-2d peak_rss=%7.1f MiB  growth=%8.1f KiB  budget=%8.1f KiB  growth/budget=%s\n",
                ests, static_cast<double>(rss) / 1024, growth, budget,
                ests == 1 ? "-" : std::to_string(growth / budget).substr(0, 5).c_str());
    xs.push_back(ests);
    ys.push_back(static_cast<double>(rss));
  }
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) mx += xs[i] / xs.size(), my += ys[i] / ys.size();
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) * (xs[i] - mx);
  }
  const double slope = sxy / sxx;
  const double grad_kib = static_cast<double>(grad_bytes) / 1024;
  std::printf("least-squares growth per EST = %.1f KiB = %.2f gradient copies (target <= 1)\n",
              slope, slope / grad_kib);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string data_dir(kDefaultDataPath);
  int steps = 60;
  int rounds = 7;
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
