// elastic-plan fit: points.json in, fitted.json and a prediction table out. The file access and
// the printing live here; the choice of points and the errors are perf/rubick's (pure).
#include "tools/elastic_plan/fit_command.h"

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <utility>

#include "perf/rubick/fit_evaluation.h"
#include "perf/rubick/fitter.h"
#include "perf/rubick/perf_json.h"

namespace elastic::burst {
namespace {

namespace po = boost::program_options;
using namespace elastic::perf;

constexpr int kUsageStatus = 2;
constexpr const char* kUsage =
    "usage: elastic-plan fit --points P.json [--train-indices I,J,...|--train N] "
    "[--out fitted.json]\n";

int Refuse(const std::string& message) {
  std::cerr << "elastic-plan fit: " << message << "\n";
  return kUsageStatus;
}

bool ReadText(const std::string& path, std::string& text, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

// "0,3,5" -> {0, 3, 5}; false for anything else.
bool ParseIndices(const std::string& text, std::vector<int>& out) {
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 9) {
      return false;
    }
    out.push_back(std::stoi(item));
  }
  return !out.empty();
}

int CountOffload(const std::vector<ProfiledRun>& runs, const std::vector<int>& indices) {
  int count = 0;
  for (int i : indices) count += runs[i].point.plan.offload ? 1 : 0;
  return count;
}

// The run whose forward time fitted.json states: the fewest intra-op threads, among them the
// fewest workers (the first such run: a run that oversubscribes the cores records its workers'
// reduced rate, profile_command.cc), so a reader that knows nothing of threads predicts the
// single-thread worker. REQUIRES: at least one run.
const ProfiledRun& ReferenceRun(const ProfiledPoints& points) {
  const ProfiledRun* reference = &points.runs.front();
  for (const ProfiledRun& run : points.runs) {
    if (std::make_pair(run.intra_threads, run.point.resources.gpus) <
        std::make_pair(reference->intra_threads, reference->point.resources.gpus)) {
      reference = &run;
    }
  }
  return *reference;
}

double ReferenceForwardSeconds(const ProfiledPoints& points, const ProfiledRun& reference) {
  if (points.model.fwd_s_per_sample > 0) return points.model.fwd_s_per_sample;
  return points.model.fwd_flops_per_sample / reference.point.resources.gpu_flops;
}

void PrintTable(const ProfiledPoints& points, const FitEvaluation& evaluation) {
  std::printf("%3s %-28s %-30s %4s %11s %11s %8s\n", "#", "label", "plan", "fit", "measured",
              "predicted", "error");
  for (const PointPrediction& row : evaluation.points) {
    const ProfiledRun& run = points.runs[row.index];
    std::printf("%3d %-28s %-30s %4s %11.1f %11.1f %7.2f%%\n", row.index, run.label.c_str(),
                Describe(run.point.plan).c_str(), row.trained ? "yes" : "", row.measured,
                row.predicted, 100 * row.rel_error);
  }
}

}  // namespace

int FitCommand(const std::vector<std::string>& args) {
  std::string points_path, out_path, indices_text;
  int train_count = kMinFitPoints;
  po::options_description description("elastic-plan fit options");
  description.add_options()("help,h", "show this help")(
      "points", po::value(&points_path)->required(),
      "points.json written by `elastic-agent profile`")(
      "train-indices", po::value(&indices_text),
      "comma-separated 0-based indices of the runs to fit on (at least 7)")(
      "train", po::value(&train_count),
      "fit on N runs chosen by the default rule (docs/perf-model.md); default 7")(
      "out", po::value(&out_path), "write the FittedModel here (fitted.json)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(description).run(), vm);
  if (vm.count("help")) {
    std::cout << kUsage << description;
    return 0;
  }
  po::notify(vm);
  if (vm.count("train-indices") && vm.count("train")) {
    return Refuse("give --train-indices or --train, not both");
  }
  std::string text, error;
  if (!ReadText(points_path, text, error)) return Refuse(error);
  Result<ProfiledPoints> points = ProfiledPointsFromJson(text);
  if (!points) return Refuse(points_path + ": " + points.error);
  const std::vector<ProfiledRun>& runs = points->runs;
  if (static_cast<int>(runs.size()) < kMinFitPoints) {
    return Refuse(points_path + ": " + std::to_string(runs.size()) +
                  " profiled points; fitting the model's 7 parameters needs at least " +
                  std::to_string(kMinFitPoints) + " (Rubick §4.3): profile more configurations");
  }
  Result<FitSplit> split = Result<FitSplit>::Fail("");
  if (vm.count("train-indices")) {
    std::vector<int> indices;
    if (!ParseIndices(indices_text, indices)) {
      return Refuse("--train-indices: invalid value \"" + indices_text +
                    "\": expected comma-separated integers such as 0,2,5");
    }
    split = ExplicitFitSplit(runs, indices);
  } else {
    split = DefaultFitSplit(runs, train_count);
  }
  if (!split) return Refuse(split.error);

  std::vector<ProfiledPoint> training;
  for (int i : split->train) training.push_back(runs[i].point);
  FitOptions options;
  const int offload = CountOffload(runs, split->train);
  if (offload == 0) {
    // Nothing constrains the offload parameters: keep their starting values (fitter.h).
    options.free[3] = options.free[4] = options.free[5] = false;
  }
  Result<FitResult> fit = FitPerfParams(points->model, training, options);
  if (!fit) {
    std::cerr << "elastic-plan fit: " << fit.error << "\n";
    return 1;
  }
  FitEvaluation evaluation = EvaluateFit(points->model, runs, *split, fit->params);
  std::printf("fit: %s, %zu of %zu points (%d ZeRO-Offload%s), RMSLE %.4f\n",
              points->model_name.c_str(), split->train.size(), runs.size(), offload,
              offload == 0 ? "; offload parameters held at their defaults" : "", fit->rmsle);
  ParamVector values = ToVector(fit->params);
  std::printf("params:");
  for (int i = 0; i < kNumPerfParams; ++i) {
    std::printf(" %s=%.6g", std::string(ParamName(i)).c_str(), values[i]);
  }
  std::printf("\n");
  PrintTable(*points, evaluation);
  std::printf("fitted points: %zu, average relative error %.2f%%, maximum %.2f%%\n",
              split->train.size(), 100 * evaluation.train_avg_rel_error,
              100 * evaluation.train_max_rel_error);
  if (split->test.empty()) {
    std::printf("unseen points: none (every point was fitted)\n");
  } else {
    std::printf(
        "unseen points: %zu, average relative error %.2f%%, maximum %.2f%% "
        "(target <= 5%% / <= 10%%; Rubick §7.1: 7.4%% / 10.4%%)\n",
        split->test.size(), 100 * evaluation.test_avg_rel_error,
        100 * evaluation.test_max_rel_error);
  }
  if (!out_path.empty()) {
    FittedModel fitted;
    fitted.model_name = points->model_name;
    fitted.model = points->model;
    const ProfiledRun& reference = ReferenceRun(*points);
    fitted.model.fwd_s_per_sample = ReferenceForwardSeconds(*points, reference);
    // Its fixed cost per pass and backward pass too: the parameters were fitted with them.
    fitted.fwd_s_per_pass = reference.point.resources.fwd_s_per_pass;
    fitted.backward = reference.point.resources.backward;
    fitted.params = fit->params;
    fitted.b_intra = points->b_intra;
    fitted.b_inter = points->b_inter;
    fitted.b_pcie = points->b_pcie;
    fitted.points = static_cast<int>(split->train.size());
    fitted.rmsle = fit->rmsle;
    // Kept for the online refit (agent/supervisor/online_refit.h), with each point's forward
    // rate as one worker's samples/s (gpu_flops in units of fwd_flops_per_sample).
    for (int i : split->train) {
      ProfiledPoint point = runs[i].point;
      point.resources.gpu_flops =
          points->model.fwd_s_per_sample > 0
              ? 1.0 / points->model.fwd_s_per_sample
              : point.resources.gpu_flops / points->model.fwd_flops_per_sample;
      fitted.fit_points.push_back(point);
    }
    std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
    out << FittedModelToJson(fitted);
    out.close();
    if (!out) {
      std::cerr << "elastic-plan fit: " << out_path << ": cannot write\n";
      return 1;
    }
    std::printf("wrote %s\n", out_path.c_str());
  }
  return 0;
}

}  // namespace elastic::burst
