// ParseProfileConfig on toml++ directly: the run list is an array of tables ([[run]]), which the
// dotted-key TomlReader does not walk.
#include "agent/profile/profile_config.h"

#include <toml++/toml.h>

#include <filesystem>
#include <limits>
#include <set>
#include <sstream>

#include "common/toml_reader.h"

namespace elastic::agent {
namespace {

// Most ranks one profile run starts on one machine; more would only measure oversubscription.
constexpr std::int64_t kMaxProfileWorkers = 256;
constexpr std::int64_t kMaxSteps = 1'000'000;
constexpr std::int64_t kMaxRepeats = 100;

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void Fail(const toml::node* node, const std::string& key,
                         const std::string& problem) const {
    std::string where = source_;
    if (node != nullptr && node->source().begin.line > 0) {
      where += ":" + std::to_string(node->source().begin.line);
    }
    throw ConfigError(where + ": " + key + ": " + problem);
  }

  // Every key of `table` must be in `known`.
  void OnlyKeys(const toml::table& table, const std::string& prefix,
                const std::set<std::string>& known) const {
    for (const auto& [key, node] : table) {
      if (!known.count(std::string(key.str()))) {
        std::string list;
        for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
        Fail(&node, prefix + std::string(key.str()), "unknown key (expected one of: " + list + ")");
      }
    }
  }

  std::optional<std::int64_t> Integer(const toml::table& table, const std::string& prefix,
                                      const char* key, std::int64_t min, std::int64_t max) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return std::nullopt;
    std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    if (!node->is_integer()) Fail(node, prefix + key, "expected " + range);
    std::int64_t value = node->as_integer()->get();
    if (value < min || value > max) {
      Fail(node, prefix + key, "invalid value " + std::to_string(value) + ": expected " + range);
    }
    return value;
  }

  std::optional<std::string> String(const toml::table& table, const std::string& prefix,
                                    const char* key) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return std::nullopt;
    if (!node->is_string() || node->as_string()->get().empty()) {
      Fail(node, prefix + key, "expected a non-empty string");
    }
    return node->as_string()->get();
  }

  std::optional<bool> Bool(const toml::table& table, const std::string& prefix,
                           const char* key) const {
    const toml::node* node = table.get(key);
    if (node == nullptr) return std::nullopt;
    if (!node->is_boolean()) Fail(node, prefix + key, "expected true or false");
    return node->as_boolean()->get();
  }

 private:
  std::string source_;
};

bool TakesGaSteps(Plan plan) {
  return plan == Plan::kDp || plan == Plan::kGa || plan == Plan::kGc || plan == Plan::kZeroDp ||
         plan == Plan::kZeroOffload;
}

ProfileRun ParseRun(const Reader& reader, const toml::table& table, const std::string& prefix) {
  reader.OnlyKeys(table, prefix,
                  {"label", "workers", "plan", "threads", "ests", "ga_steps", "micro_batches",
                   "cpu_threads"});
  ProfileRun run;
  auto workers = reader.Integer(table, prefix, "workers", 1, kMaxProfileWorkers);
  if (!workers) reader.Fail(&table, prefix + "workers", "missing: expected the number of ranks");
  run.workers = static_cast<int>(*workers);
  auto word = reader.String(table, prefix, "plan");
  if (!word) reader.Fail(&table, prefix + "plan", "missing: expected dp, ga, gc, zero-dp, "
                                                   "zero-offload, pp or tp");
  Result<Plan> plan = ParsePlan(*word);
  if (!plan || *plan.value == Plan::kAuto || *plan.value == Plan::kBurst) {
    reader.Fail(table.get("plan"), prefix + "plan",
                "invalid value \"" + *word + "\": expected dp, ga, gc, zero-dp, zero-offload, "
                "pp or tp (a profile runs one concrete plan the performance model describes)");
  }
  run.plan = *plan.value;
  run.threads = static_cast<int>(reader.Integer(table, prefix, "threads", 1, 256).value_or(0));
  const int per_rank_max = std::numeric_limits<int>::max() / run.workers;
  auto ests = reader.Integer(table, prefix, "ests", 1, 1 << 20);
  auto ga = reader.Integer(table, prefix, "ga_steps", 1, std::min(1 << 20, per_rank_max));
  auto mb = reader.Integer(table, prefix, "micro_batches", 1, 1 << 20);
  if (int(ests.has_value()) + int(ga.has_value()) + int(mb.has_value()) > 1) {
    reader.Fail(&table, prefix + "ests",
                "give at most one of ests, ga_steps and micro_batches (each sets the run's ESTs)");
  }
  if (ga && !TakesGaSteps(run.plan)) {
    reader.Fail(table.get("ga_steps"), prefix + "ga_steps",
                "plan \"" + *word + "\" has no gradient-accumulation steps (under pp the "
                "micro-batches are the accumulation: use micro_batches)");
  }
  if (mb && run.plan != Plan::kPp) {
    reader.Fail(table.get("micro_batches"), prefix + "micro_batches",
                "only plan \"pp\" has micro-batches (use ga_steps for " + *word + ")");
  }
  if (ests) run.ests = static_cast<int>(*ests);
  if (ga) run.ests = static_cast<int>(*ga) * run.workers;
  if (mb) run.ests = static_cast<int>(*mb);
  auto cpu = reader.Integer(table, prefix, "cpu_threads", 1, 256);
  if (cpu && run.plan != Plan::kZeroOffload) {
    reader.Fail(table.get("cpu_threads"), prefix + "cpu_threads",
                "only plan \"zero-offload\" runs host optimizer threads");
  }
  run.cpu_threads = static_cast<int>(cpu.value_or(0));
  run.label = reader.String(table, prefix, "label").value_or(DefaultLabel(run));
  // The label names the run's files and a CSV field.
  if (run.label.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789._-") != std::string::npos ||
      run.label.front() == '.') {
    reader.Fail(table.get("label"), prefix + "label",
                "invalid value \"" + run.label + "\": expected letters, digits, '.', '_' and '-' "
                "(not starting with '.')");
  }
  return run;
}

}  // namespace

std::string DefaultLabel(const ProfileRun& run) {
  std::ostringstream label;
  label << "w" << run.workers << "-t" << (run.threads > 0 ? std::to_string(run.threads) : "job")
        << "-" << ToString(run.plan);
  if (run.ests > 0) label << (run.plan == Plan::kPp ? "-m" : "-e") << run.ests;
  if (run.cpu_threads > 0) label << "-c" << run.cpu_threads;
  return label.str();
}

ProfileConfig ParseProfileConfig(std::string_view text, const std::string& source_name,
                                 const std::string& base_dir) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(source_name + ":" + std::to_string(e.source().begin.line) +
                      ": invalid TOML: " + std::string(e.description()));
  }
  Reader reader(source_name);
  reader.OnlyKeys(root, "",
                  {"job", "warmup_steps", "measured_steps", "repeats", "host_probe", "mpirun",
                   "run"});
  ProfileConfig config;
  auto job = reader.String(root, "", "job");
  if (!job) reader.Fail(nullptr, "job", "missing: expected the job config (TOML) to profile");
  config.job_path = (std::filesystem::path(base_dir) / *job).lexically_normal().string();
  config.warmup_steps =
      reader.Integer(root, "", "warmup_steps", 1, kMaxSteps).value_or(config.warmup_steps);
  config.measured_steps =
      reader.Integer(root, "", "measured_steps", 1, kMaxSteps).value_or(config.measured_steps);
  config.repeats = reader.Integer(root, "", "repeats", 1, kMaxRepeats).value_or(config.repeats);
  config.host_probe = reader.Bool(root, "", "host_probe").value_or(config.host_probe);
  config.mpirun = reader.String(root, "", "mpirun").value_or(config.mpirun);
  const toml::node* runs = root.get("run");
  if (runs == nullptr || !runs->is_array_of_tables() || runs->as_array()->empty()) {
    reader.Fail(runs, "run", "expected at least one [[run]] table (workers, plan, ...)");
  }
  std::set<std::string> labels;
  int index = 0;
  for (const toml::node& node : *runs->as_array()) {
    const std::string prefix = "run[" + std::to_string(index++) + "].";
    ProfileRun run = ParseRun(reader, *node.as_table(), prefix);
    if (!labels.insert(run.label).second) {
      reader.Fail(&node, prefix + "label",
                  "\"" + run.label + "\" names two runs: give each run its own label");
    }
    config.runs.push_back(std::move(run));
  }
  return config;
}

}  // namespace elastic::agent
