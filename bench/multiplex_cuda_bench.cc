// DeepPool Fig. 11 on a GPU, measured side by side in one run: a foreground data-parallel worker
// (per iteration a few layer kernels, then --fg-wait-ms waiting for its gradient exchange) and a
// background job that fills the GPU, with agent/multiplex's mechanisms on CudaExecutor added one
// at a time: naive co-location, + stream priorities, + launch pacing, + small background pieces,
// + CUDA graphs, + slowdown feedback. Kernels spin for calibrated times (tests/unit/multiplex/
// cuda_test_kernels.h), so the only interference is for the GPU's block slots: what priorities,
// pacing and piece size act on. Prints foreground slowdown and throughputs normalised to solo
// runs (medians over rounds), and whether the last row meets DeepPool's target (foreground
// slowdown <= 1.10 at >= 1.5x combined throughput). Torch-free.
//
// Usage: multiplex_cuda_bench [--rounds 3] [--window-s 1.5] [--warmup-s 0.5] [--fg-layers 8]
//          [--fg-piece-us 200] [--fg-wait-ms 4] [--bg-layers 8] [--bg-piece-us 400]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "agent/multiplex/cuda_executor.h"
#include "agent/multiplex/engine.h"
#include "tests/unit/multiplex/cuda_test_kernels.h"

namespace {

using namespace elastic::agent::multiplex;
using Steady = std::chrono::steady_clock;

struct BenchOptions {
  int rounds = 3;
  double window_s = 1.5;
  double warmup_s = 0.5;
  int fg_layers = 8;
  double fg_piece_us = 200;
  int fg_wait_ms = 4;
  int bg_layers = 8;
  double bg_piece_us = 400;
};

struct Gpu {
  int sms = 0;
  double cycles_per_us = 0;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The SM count, and the spin kernel's cycles per microsecond timed with events (the SM clock
// boosts, so the nominal clock rate would be off).
Gpu Calibrate() {
  Gpu gpu;
  cudaDeviceGetAttribute(&gpu.sms, cudaDevAttrMultiProcessorCount, 0);
  cudaEvent_t start, end;
  cudaEventCreate(&start);
  cudaEventCreate(&end);
  const std::int64_t cycles = 50'000'000;
  elastic::test::LaunchSpin(cycles / 10, 1, nullptr);  // warm up the clocks
  cudaEventRecord(start, nullptr);
  elastic::test::LaunchSpin(cycles, 1, nullptr);
  cudaEventRecord(end, nullptr);
  cudaEventSynchronize(end);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, end);
  gpu.cycles_per_us = static_cast<double>(cycles) / (ms * 1000.0);
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  return gpu;
}

struct Mechanism {
  std::string name;
  DispatchOptions dispatch;
  bool stream_priorities = false;
  bool small_bg_pieces = false;
  bool graphs = false;
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
  m.name = "+ stream priorities";
  m.dispatch.prioritize_foreground = true;
  m.stream_priorities = true;
  ladder.push_back(m);
  m.name = "+ pacing";
  m.dispatch.max_outstanding_foreground = 2;
  m.dispatch.max_outstanding_background = 1;
  ladder.push_back(m);
  m.name = "+ small bg pieces";
  m.small_bg_pieces = true;
  ladder.push_back(m);
  m.name = "+ CUDA graphs";
  m.graphs = true;
  ladder.push_back(m);
  m.name = "+ slowdown feedback";
  m.dispatch.isolate_sensitive = true;
  m.feedback = true;
  ladder.push_back(m);
  return ladder;
}

// A spin piece: `blocks` blocks for `us` microseconds.
Piece Spin(std::string op, const Gpu& gpu, double us, int blocks) {
  const auto cycles = static_cast<std::int64_t>(us * gpu.cycles_per_us);
  return Piece{std::move(op), [cycles, blocks] {
                 elastic::test::LaunchSpin(cycles, blocks, CurrentCudaStream());
               }};
}

struct Rates {
  double fg = 0;  // iterations/s
  double bg = 0;
};

// Iterations per second finished inside [from, to].
double Rate(const std::vector<Steady::time_point>& done, Steady::time_point from,
            Steady::time_point to) {
  const auto n = std::count_if(done.begin(), done.end(),
                               [&](Steady::time_point t) { return t >= from && t <= to; });
  return static_cast<double>(n) / std::chrono::duration<double>(to - from).count();
}

// The foreground worker: its layers, a wait for the pieces (the gradient exchange needs them),
// then the exchange itself, during which the GPU is idle for it.
void ForegroundLoop(MultiplexEngine& engine, JobId job, const BenchOptions& o, const Gpu& gpu,
                    std::atomic<bool>& stop, std::vector<Steady::time_point>& done) {
  while (!stop.load()) {
    for (int l = 0; l < o.fg_layers; ++l) {
      engine.Submit(job, Spin("fg.l" + std::to_string(l), gpu, o.fg_piece_us, gpu.sms * 4));
    }
    engine.Synchronize(job);
    std::this_thread::sleep_for(std::chrono::milliseconds(o.fg_wait_ms));
    done.push_back(Steady::now());
  }
}

// The background job fills every block slot of the GPU: per layer one piece, or (naive) the
// whole iteration as one long piece.
void BackgroundLoop(MultiplexEngine& engine, JobId job, const BenchOptions& o, const Gpu& gpu,
                    bool small_pieces, std::atomic<bool>& stop,
                    std::vector<Steady::time_point>& done) {
  while (!stop.load()) {
    if (small_pieces) {
      for (int l = 0; l < o.bg_layers; ++l) {
        engine.Submit(job, Spin("bg.l" + std::to_string(l), gpu, o.bg_piece_us, gpu.sms * 16));
      }
    } else {
      engine.Submit(job, Spin("bg.iteration", gpu, o.bg_piece_us * o.bg_layers, gpu.sms * 16));
    }
    engine.Synchronize(job);
    done.push_back(Steady::now());
  }
}

Rates Measure(const BenchOptions& o, const Gpu& gpu, const Mechanism& m, bool with_fg,
              bool with_bg) {
  CudaExecutorOptions executor_options;
  executor_options.use_graphs = m.graphs;
  executor_options.stream_priorities = m.stream_priorities;
  MultiplexOptions engine_options;
  engine_options.dispatch = m.dispatch;
  engine_options.slowdown_feedback = m.feedback;
  const SteadyClock clock;
  std::vector<Steady::time_point> fg_done, bg_done;
  std::atomic<bool> stop{false};
  MultiplexEngine engine(std::make_unique<CudaExecutor>(executor_options), engine_options, clock);
  std::vector<std::thread> hosts;
  if (with_fg) {
    const JobId fg = engine.AddJob(JobClass::kForeground, "fg");
    hosts.emplace_back([&, fg] { ForegroundLoop(engine, fg, o, gpu, stop, fg_done); });
  }
  if (with_bg) {
    const JobId bg = engine.AddJob(JobClass::kBackground, "bg");
    hosts.emplace_back(
        [&, bg] { BackgroundLoop(engine, bg, o, gpu, m.small_bg_pieces, stop, bg_done); });
  }
  const auto from = Steady::now() + std::chrono::duration_cast<Steady::duration>(
                                        std::chrono::duration<double>(o.warmup_s));
  const auto to = from + std::chrono::duration_cast<Steady::duration>(
                             std::chrono::duration<double>(o.window_s));
  std::this_thread::sleep_until(to);
  stop = true;
  for (auto& host : hosts) host.join();
  return {Rate(fg_done, from, to), Rate(bg_done, from, to)};
}

bool ParseArgs(int argc, char** argv, BenchOptions& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const double value = std::atof(argv[i + 1]);
    if (flag == "--rounds") o.rounds = static_cast<int>(value);
    else if (flag == "--window-s") o.window_s = value;
    else if (flag == "--warmup-s") o.warmup_s = value;
    else if (flag == "--fg-layers") o.fg_layers = static_cast<int>(value);
    else if (flag == "--fg-piece-us") o.fg_piece_us = value;
    else if (flag == "--fg-wait-ms") o.fg_wait_ms = static_cast<int>(value);
    else if (flag == "--bg-layers") o.bg_layers = static_cast<int>(value);
    else if (flag == "--bg-piece-us") o.bg_piece_us = value;
    else return false;
  }
  return argc % 2 == 1 && o.rounds > 0 && o.window_s > 0 && o.fg_layers > 0 && o.bg_layers > 0;
}

struct Row {
  std::vector<double> slowdown, fg, bg, total;
};

void Print(const BenchOptions& o, const Gpu& gpu, const std::vector<Mechanism>& ladder,
           const std::vector<Row>& rows, const std::vector<double>& solo_fg,
           const std::vector<double>& solo_bg) {
  std::printf("multiplex_cuda_bench: %d SMs, %.0f cycles/us; fg %d x %.0f us pieces + %d ms "
              "exchange wait; bg %d x %.0f us pieces filling the GPU; %d rounds x %.1f s\n",
              gpu.sms, gpu.cycles_per_us, o.fg_layers, o.fg_piece_us, o.fg_wait_ms, o.bg_layers,
              o.bg_piece_us, o.rounds, o.window_s);
  std::printf("solo rates (median): fg %.1f it/s, bg %.1f it/s\n", Median(solo_fg),
              Median(solo_bg));
  std::printf("%-22s %12s %9s %9s %9s\n", "mechanism", "fg slowdown", "fg tput", "bg tput",
              "total");
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    std::printf("%-22s %11.3fx %9.2f %9.2f %9.2f\n", ladder[i].name.c_str(),
                Median(rows[i].slowdown), Median(rows[i].fg), Median(rows[i].bg),
                Median(rows[i].total));
  }
  const double slowdown = Median(rows.back().slowdown);
  const double total = Median(rows.back().total);
  std::printf("multiplex_cuda_bench: target fg slowdown <= 1.10 at total >= 1.5: %s "
              "(all mechanisms: %.3fx slowdown, %.2f total)\n",
              slowdown <= 1.10 && total >= 1.5 ? "MET" : "NOT MET", slowdown, total);
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions options;
  if (!ParseArgs(argc, argv, options)) {
    std::cerr << "usage: multiplex_cuda_bench [--rounds 3] [--window-s 1.5] [--warmup-s 0.5] "
                 "[--fg-layers 8] [--fg-piece-us 200] [--fg-wait-ms 4] [--bg-layers 8] "
                 "[--bg-piece-us 400]\n";
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::cerr << "multiplex_cuda_bench: no usable CUDA device\n";
    return 1;
  }
  const Gpu gpu = Calibrate();
  const std::vector<Mechanism> ladder = Ladder();
  std::vector<Row> rows(ladder.size());
  std::vector<double> solo_fg, solo_bg;
  for (int round = 0; round < options.rounds; ++round) {
    const Rates fg_alone = Measure(options, gpu, ladder.back(), true, false);
    const Rates bg_alone = Measure(options, gpu, ladder.back(), false, true);
    solo_fg.push_back(fg_alone.fg);
    solo_bg.push_back(bg_alone.bg);
    for (std::size_t i = 0; i < ladder.size(); ++i) {
      // Every row against the same solo runs (all mechanisms on: the best each job does
      // alone), so a row's gain is never its own solo baseline getting slower.
      const Rates both = Measure(options, gpu, ladder[i], true, true);
      rows[i].slowdown.push_back(fg_alone.fg / both.fg);
      rows[i].fg.push_back(both.fg / fg_alone.fg);
      rows[i].bg.push_back(both.bg / bg_alone.bg);
      rows[i].total.push_back(both.fg / fg_alone.fg + both.bg / bg_alone.bg);
    }
    std::fprintf(stderr, "round %d/%d done\n", round + 1, options.rounds);
  }
  Print(options, gpu, ladder, rows, solo_fg, solo_bg);
  return 0;
}
