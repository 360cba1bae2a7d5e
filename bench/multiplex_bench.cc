// DeepPool Fig. 11 on CPU, measured side by side in one run (no pass/fail): a VGG-like
// foreground training loop co-located with a VGG-like background training job on the "device"
// cores, with the multiplexing mechanisms of agent/multiplex added one at a time:
//   naive co-location (both free-running, one FIFO, whole-iteration background pieces)
//   + priorities (foreground first at dispatch; background stream SCHED_IDLE / nice 19)
//   + pacing (at most 2 outstanding foreground pieces, 1 background piece)
//   + small background pieces (one piece per layer, forward and backward)
//   + slowdown feedback (operators that slow down > 1.5x co-located run alone)
// For each: foreground slowdown vs solo, and foreground, background and total throughput
// normalised to each job's solo rate. The foreground job is a strong-scaled data-parallel
// worker: every step ends with a gradient exchange, modelled as --fg-wait-ms of waiting
// (the idle time co-location reclaims; DeepPool's NCCL all-reduce).
//
// Usage: multiplex_bench [--cpus 1] [--rounds 5] [--window-s 2] [--warmup-s 1]
//                        [--fg-wait-ms 20] [--batch 16]
// Each round measures solo fg and bg, every mechanism once, then solo fg and bg again (the solo
// rate of the round is the mean of the two); rows print medians over rounds of the per-round
// ratios. Intra-op threads: 1 per job.
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/multiplex/cpu_executor.h"
#include "agent/multiplex/engine.h"

namespace {

using namespace elastic::agent::multiplex;
using Steady = std::chrono::steady_clock;

struct BenchOptions {
  std::vector<int> cpus = {1};
  int rounds = 5;
  double window_s = 2.0;
  double warmup_s = 1.0;
  int fg_wait_ms = 20;
  int batch = 16;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// A small VGG: conv3x3 stages 16-16 / 32-32 / 64 on 3x32x32 images, then a linear classifier.
// Each layer is a separate module so a training step can be cut into per-layer pieces: the
// boundary activations are detached leaves, and backward runs one layer range at a time.
class VggLike {
 public:
  VggLike(int batch, std::uint64_t seed) {
    torch::manual_seed(static_cast<std::uint64_t>(seed));
    namespace nn = torch::nn;
    auto conv = [](int in, int out, bool pool) {
      nn::Sequential layer(nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1)), nn::ReLU());
      if (pool) layer->push_back(nn::MaxPool2d(2));
      return layer;
    };
    layers_ = {conv(3, 16, false),  conv(16, 16, true),
               conv(16, 32, false), conv(32, 32, true),
               conv(32, 64, true),  nn::Sequential(nn::Flatten(), nn::Linear(64 * 4 * 4, 10))};
    std::vector<torch::Tensor> params;
    for (auto& layer : layers_) {
      for (auto& p : layer->parameters()) params.push_back(p);
    }
    optimizer_ = std::make_unique<torch::optim::SGD>(params, torch::optim::SGDOptions(0.01));
    input_ = torch::randn({batch, 3, 32, 32});
    labels_ = torch::randint(10, {batch}, torch::kLong);
    boundary_.resize(layers_.size() + 1);
    out_.resize(layers_.size());
  }

  // The pieces of one training step, in order; `done` runs at the end of the last one.
  // layers_per_piece 0: the whole step is one piece.
  std::vector<Piece> StepPieces(const std::string& prefix, int layers_per_piece,
                                const std::function<void()>& done) {
    if (layers_per_piece == 0) {
      return {MakePiece(prefix + ".step", [this, done] {
        torch::Tensor x = input_;
        for (auto& layer : layers_) x = layer->forward(x);
        torch::nn::functional::cross_entropy(x, labels_).backward();
        Update();
        done();
      })};
    }
    const int n = static_cast<int>(layers_.size());
    std::vector<std::pair<int, int>> chunks;
    for (int lo = 0; lo < n; lo += layers_per_piece) {
      chunks.emplace_back(lo, std::min(n, lo + layers_per_piece));
    }
    std::vector<Piece> pieces;
    for (const auto& [lo, hi] : chunks) {
      pieces.push_back(MakePiece(prefix + ".L" + std::to_string(lo) + ".fwd",
                                 [this, lo = lo, hi = hi, n] { Forward(lo, hi, n); }));
    }
    for (auto it = chunks.rbegin(); it != chunks.rend(); ++it) {
      pieces.push_back(
          MakePiece(prefix + ".L" + std::to_string(it->first) + ".bwd",
                    [this, lo = it->first, hi = it->second, n] { Backward(lo, hi, n); }));
    }
    pieces.push_back(MakePiece(prefix + ".update", [this, done] {
      Update();
      done();
    }));
    return pieces;
  }

 private:
  static Piece MakePiece(std::string op, std::function<void()> run) {
    Piece piece;
    piece.op = std::move(op);
    piece.run = std::move(run);
    return piece;
  }

  void Forward(int lo, int hi, int n) {
    torch::Tensor x = lo == 0 ? input_ : boundary_[lo];
    for (int l = lo; l < hi; ++l) x = layers_[l]->forward(x);
    if (hi == n) {
      out_[lo] = torch::nn::functional::cross_entropy(x, labels_);
    } else {
      out_[lo] = x;
      boundary_[hi] = x.detach().requires_grad_(true);
    }
  }

  void Backward(int lo, int hi, int n) {
    if (hi == n) {
      out_[lo].backward();
    } else {
      out_[lo].backward(boundary_[hi].grad());
      boundary_[hi] = torch::Tensor();
    }
    out_[lo] = torch::Tensor();
  }

  void Update() {
    optimizer_->step();
    optimizer_->zero_grad();
  }

  std::vector<torch::nn::Sequential> layers_;
  std::unique_ptr<torch::optim::SGD> optimizer_;
  torch::Tensor input_;
  torch::Tensor labels_;
  std::vector<torch::Tensor> boundary_;  // detached inputs of each layer (index = layer)
  std::vector<torch::Tensor> out_;       // output (or loss) of each chunk, by first layer
};

// One rung of Fig. 11.
struct Mechanism {
  std::string name;
  DispatchOptions dispatch;
  bool os_priorities = false;
  int bg_layers_per_piece = 0;
  bool feedback = false;
};

std::vector<Mechanism> Ladder() {
  std::vector<Mechanism> ladder;
  Mechanism m;
  m.name = "naive co-location";
  m.dispatch = {.prioritize_foreground = false,
                .max_outstanding_foreground = 0,
                .max_outstanding_background = 0,
                .isolate_sensitive = false};
  ladder.push_back(m);
  m.name = "+ priorities";
  m.dispatch.prioritize_foreground = true;
  m.os_priorities = true;
  ladder.push_back(m);
  m.name = "+ pacing";
  m.dispatch.max_outstanding_foreground = 2;
  m.dispatch.max_outstanding_background = 1;
  ladder.push_back(m);
  m.name = "+ small bg pieces";
  m.bg_layers_per_piece = 1;
  ladder.push_back(m);
  m.name = "+ slowdown feedback";
  m.dispatch.isolate_sensitive = true;
  m.feedback = true;
  ladder.push_back(m);
  return ladder;
}

struct Measurement {
  double fg_rate = 0;  // steps/s
  double bg_rate = 0;
  double fg_isolated_per_step = 0;
  std::vector<OpReport> feedback;
};

// Steps per second from step completion times inside [from, to].
double Rate(const std::vector<Steady::time_point>& done, Steady::time_point from,
            Steady::time_point to) {
  std::vector<Steady::time_point> in;
  for (auto t : done) {
    if (t >= from && t <= to) in.push_back(t);
  }
  if (in.size() < 3)
    return static_cast<double>(in.size()) / std::chrono::duration<double>(to - from).count();
  return static_cast<double>(in.size() - 1) /
         std::chrono::duration<double>(in.back() - in.front()).count();
}

// The host loop of one job: submit a step's pieces, synchronise every `sync_every` steps.
void HostLoop(MultiplexEngine& engine, JobId job, VggLike& model, const std::string& prefix,
              int layers_per_piece, int wait_ms, int sync_every, std::atomic<bool>& stop,
              std::vector<Steady::time_point>& done) {
  const auto on_done = [&done] { done.push_back(Steady::now()); };
  for (int step = 1; !stop.load(); ++step) {
    std::vector<Piece> pieces = model.StepPieces(prefix, layers_per_piece, on_done);
    if (wait_ms > 0) {  // the gradient exchange, before the update
      Piece wait;
      wait.op = prefix + ".allreduce";
      wait.run = [wait_ms] { std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms)); };
      pieces.insert(pieces.end() - 1, std::move(wait));
    }
    for (Piece& piece : pieces) engine.Submit(job, std::move(piece));
    if (step % sync_every == 0) engine.Synchronize(job);
  }
  engine.Synchronize(job);
}

Measurement Measure(const BenchOptions& options, const Mechanism& mechanism, bool with_fg,
                    bool with_bg) {
  CpuExecutorOptions executor_options;
  executor_options.cpus = options.cpus;
  executor_options.os_priorities = mechanism.os_priorities;
  MultiplexOptions engine_options;
  engine_options.dispatch = mechanism.dispatch;
  engine_options.slowdown_feedback = mechanism.feedback;
  const SteadyClock clock;
  VggLike fg_model(options.batch, 1);
  VggLike bg_model(options.batch, 2);
  std::vector<Steady::time_point> fg_done, bg_done;
  std::atomic<bool> stop{false};
  Measurement m;
  {
    MultiplexEngine engine(std::make_unique<CpuExecutor>(executor_options), engine_options, clock);
    std::vector<std::thread> hosts;
    JobId fg = 0;
    if (with_fg) {
      fg = engine.AddJob(JobClass::kForeground, "fg");
      hosts.emplace_back(
          [&] { HostLoop(engine, fg, fg_model, "fg", 1, options.fg_wait_ms, 1, stop, fg_done); });
    }
    if (with_bg) {
      const JobId bg = engine.AddJob(JobClass::kBackground, "bg");
      hosts.emplace_back([&, bg] {
        HostLoop(engine, bg, bg_model, "bg", mechanism.bg_layers_per_piece, 0, 4, stop, bg_done);
      });
    }
    const auto start = Steady::now();
    const auto from = start + std::chrono::duration_cast<Steady::duration>(
                                  std::chrono::duration<double>(options.warmup_s));
    const auto to = from + std::chrono::duration_cast<Steady::duration>(
                               std::chrono::duration<double>(options.window_s));
    std::this_thread::sleep_until(to);
    stop = true;
    for (auto& host : hosts) host.join();
    m.fg_rate = Rate(fg_done, from, to);
    m.bg_rate = Rate(bg_done, from, to);
    if (with_fg && !fg_done.empty()) {
      m.fg_isolated_per_step =
          static_cast<double>(engine.stats(fg).isolated) / static_cast<double>(fg_done.size());
      m.feedback = engine.feedback_report();
    }
  }
  return m;
}

std::vector<int> ParseCpus(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) cpus.push_back(std::atoi(item.c_str()));
  return cpus;
}

bool ParseArgs(int argc, char** argv, BenchOptions& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return false;
    const std::string value = argv[++i];
    if (flag == "--cpus")
      options.cpus = ParseCpus(value);
    else if (flag == "--rounds")
      options.rounds = std::atoi(value.c_str());
    else if (flag == "--window-s")
      options.window_s = std::atof(value.c_str());
    else if (flag == "--warmup-s")
      options.warmup_s = std::atof(value.c_str());
    else if (flag == "--fg-wait-ms")
      options.fg_wait_ms = std::atoi(value.c_str());
    else if (flag == "--batch")
      options.batch = std::atoi(value.c_str());
    else
      return false;
  }
  return options.rounds > 0 && options.window_s > 0 && options.batch > 0 && !options.cpus.empty();
}

struct Row {
  std::vector<double> slowdown, fg, bg, total, isolated;
};

}  // namespace

int main(int argc, char** argv) {
  BenchOptions options;
  if (!ParseArgs(argc, argv, options)) {
    std::cerr << "usage: multiplex_bench [--cpus 1] [--rounds 5] [--window-s 2] [--warmup-s 1]"
                 " [--fg-wait-ms 20] [--batch 16]\n";
    return 2;
  }
  torch::set_num_threads(1);
  const std::vector<Mechanism> ladder = Ladder();
  std::vector<Row> rows(ladder.size());
  std::vector<double> solo_fg, solo_bg;
  std::vector<OpReport> last_feedback;
  Mechanism solo;  // alone on the device at normal priority
  solo.dispatch = ladder[0].dispatch;
  for (int round = 0; round < options.rounds; ++round) {
    // Solo rates before and after the round's co-located runs, averaged: the device cores are
    // shared with whatever else runs on the machine, and its load drifts.
    double fg_alone = Measure(options, solo, true, false).fg_rate;
    double bg_alone = Measure(options, solo, false, true).bg_rate;
    std::vector<Measurement> round_runs;
    for (const Mechanism& mechanism : ladder) {
      round_runs.push_back(Measure(options, mechanism, true, true));
    }
    fg_alone = (fg_alone + Measure(options, solo, true, false).fg_rate) / 2;
    bg_alone = (bg_alone + Measure(options, solo, false, true).bg_rate) / 2;
    solo_fg.push_back(fg_alone);
    solo_bg.push_back(bg_alone);
    for (std::size_t i = 0; i < ladder.size(); ++i) {
      const Measurement& m = round_runs[i];
      rows[i].slowdown.push_back(fg_alone / m.fg_rate);
      rows[i].fg.push_back(m.fg_rate / fg_alone);
      rows[i].bg.push_back(m.bg_rate / bg_alone);
      rows[i].total.push_back(m.fg_rate / fg_alone + m.bg_rate / bg_alone);
      rows[i].isolated.push_back(m.fg_isolated_per_step);
      if (ladder[i].feedback) last_feedback = m.feedback;
    }
    std::fprintf(stderr, "round %d/%d done\n", round + 1, options.rounds);
  }
  std::string cpus;
  for (int cpu : options.cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(cpu);
  std::printf(
      "multiplex_bench: device cpus {%s}; fg VGG-like batch %d + %d ms gradient wait "
      "per step; bg VGG-like batch %d; 1 intra-op thread per job; %d rounds x %.1f s\n",
      cpus.c_str(), options.batch, options.fg_wait_ms, options.batch, options.rounds,
      options.window_s);
  std::printf("solo rates (median): fg %.2f steps/s, bg %.2f steps/s\n", Median(solo_fg),
              Median(solo_bg));
  std::printf("%-22s %12s %9s %9s %9s %16s\n", "mechanism", "fg slowdown", "fg tput", "bg tput",
              "total", "isolated/fg step");
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    std::printf("%-22s %11.2fx %9.2f %9.2f %9.2f %16.2f\n", ladder[i].name.c_str(),
                Median(rows[i].slowdown), Median(rows[i].fg), Median(rows[i].bg),
                Median(rows[i].total), Median(rows[i].isolated));
  }
  std::printf("slowdown feedback, last round (co-located/solo median; * = sensitive):\n");
  for (const OpReport& op : last_feedback) {
    std::printf("  %-16s %s%s\n", op.op.c_str(),
                op.ratio ? (std::to_string(*op.ratio).substr(0, 4) + "x").c_str() : "n/a",
                op.sensitive ? " *" : "");
  }
  return 0;
}
