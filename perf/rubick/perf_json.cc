// fitted.json and points.json: strict readers (unknown keys, wrong types and out-of-range values
// are refused with the JSON path) and writers whose doubles round-trip bit-exactly (nlohmann
// prints the shortest text that parses back to the same double).
#include "perf/rubick/perf_json.h"

#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "perf/rubick/json_reader.h"

namespace elastic::perf {
namespace {

using json_detail::Field;
using json_detail::FieldKeys;
using json_detail::FieldsToJson;
using json_detail::Reader;
using json_detail::ReadFields;
using nlohmann::json;

template <typename T>
Result<T> Parse(std::string_view text, json& root) {
  try {
    root = json::parse(text);
  } catch (const json::parse_error& error) {
    return Result<T>::Fail(std::string("not valid JSON: ") + error.what());
  }
  return Result<T>::Ok(T{});
}

// ---- Field tables ---------------------------------------------------------------------------

const std::array<Field<ModelDesc>, 13> kModelFields = {{
    {"params", &ModelDesc::params, 1},
    {"layers", &ModelDesc::layers, 1},
    {"seq_len", &ModelDesc::seq_len},
    {"hidden", &ModelDesc::hidden},
    {"global_batch", &ModelDesc::global_batch, 1},
    {"fwd_s_per_sample", &ModelDesc::fwd_s_per_sample},
    {"fwd_flops_per_sample", &ModelDesc::fwd_flops_per_sample},
    {"activation_bytes_per_sample", &ModelDesc::activation_bytes_per_sample},
    {"gc_checkpoint_bytes_per_sample_layer", &ModelDesc::gc_checkpoint_bytes_per_sample_layer},
    {"weight_bytes", &ModelDesc::weight_bytes},
    {"grad_bytes", &ModelDesc::grad_bytes},
    {"optimizer_bytes", &ModelDesc::optimizer_bytes},
    {"activation_elem_bytes", &ModelDesc::activation_elem_bytes},
}};

const std::array<Field<ExecutionPlan>, 9> kPlanFields = {{
    {"dp", &ExecutionPlan::dp, 1},
    {"tp", &ExecutionPlan::tp, 1},
    {"pp", &ExecutionPlan::pp, 1},
    {"ga_steps", &ExecutionPlan::ga_steps, 1},
    {"micro_batches", &ExecutionPlan::micro_batches, 1},
    {"gc", &ExecutionPlan::gc},
    {"zero_stage", &ExecutionPlan::zero_stage},
    {"offload", &ExecutionPlan::offload},
    {"cpu_threads", &ExecutionPlan::cpu_threads},
}};

const std::array<Field<Resources>, 10> kResourceFields = {{
    {"gpus", &Resources::gpus, 1},
    {"gpus_per_node", &Resources::gpus_per_node, 1},
    {"cpus", &Resources::cpus},
    {"gpu_mem_bytes", &Resources::gpu_mem_bytes},
    {"host_mem_bytes", &Resources::host_mem_bytes},
    {"b_intra", &Resources::b_intra},
    {"b_inter", &Resources::b_inter},
    {"b_pcie", &Resources::b_pcie},
    {"gpu_flops", &Resources::gpu_flops},
    {"fwd_s_per_pass", &Resources::fwd_s_per_pass},
}};

// ---- ModelDesc ------------------------------------------------------------------------------

json ModelToJson(const ModelDesc& model) {
  json object = FieldsToJson(model, kModelFields);
  object["gradient_exchange"] = GradientExchangeName(model.gradient_exchange);
  object["tp_unsplit_share"] = model.tp_unsplit_share;
  if (!model.block_shares.empty()) object["block_shares"] = model.block_shares;
  return object;
}

// How the model splits (optional: files written before these keys read as §4.1's even split).
void ReadSplitShares(Reader& reader, const json& object, const std::string& path,
                     ModelDesc& model) {
  reader.Number(object, path, "tp_unsplit_share", 0, model.tp_unsplit_share);
  if (reader.ok() && !(model.tp_unsplit_share < 1)) {
    reader.Fail(Reader::Join(path, "tp_unsplit_share"), "expected a number below 1");
  }
  if (!reader.ok() || !object.contains("block_shares")) return;
  const json& shares = object.at("block_shares");
  const std::string at = Reader::Join(path, "block_shares");
  if (!shares.is_array() || static_cast<int>(shares.size()) != model.layers) {
    reader.Fail(at, "expected an array of " + std::to_string(model.layers) +
                        " numbers (one per layer), got " + shares.dump().substr(0, 60));
    return;
  }
  for (std::size_t i = 0; i < shares.size(); ++i) {
    if (!shares[i].is_number() || !(shares[i].get<double>() >= 0) ||
        !(shares[i].get<double>() <= 1)) {
      reader.Fail(at + "[" + std::to_string(i) + "]",
                  "expected a share in [0, 1], got " + shares[i].dump());
      return;
    }
    model.block_shares.push_back(shares[i].get<double>());
  }
}

// Absent (files written before the key existed) reads as Rubick's ring all-reduce.
void ReadGradientExchange(Reader& reader, const json& object, const std::string& path,
                          GradientExchange& out) {
  std::string name;
  reader.String(object, path, "gradient_exchange", name);
  if (!reader.ok() || name.empty()) return;
  std::string expected;  // "a", "b" or "c"
  for (std::size_t i = 0; i < kGradientExchanges.size(); ++i) {
    const GradientExchange exchange = kGradientExchanges[i];
    if (name == GradientExchangeName(exchange)) {
      out = exchange;
      return;
    }
    expected += std::string(i == 0                              ? ""
                            : i + 1 < kGradientExchanges.size() ? ", "
                                                                : " or ") +
                "\"" + std::string(GradientExchangeName(exchange)) + "\"";
  }
  reader.Fail(Reader::Join(path, "gradient_exchange"),
              "expected " + expected + ", got \"" + name + "\"");
}

ModelDesc ModelFromJson(Reader& reader, const json& object, const std::string& path,
                        bool all_required) {
  const std::vector<const char*> fields = FieldKeys(kModelFields);
  std::vector<const char*> known = fields;
  known.insert(known.end(), {"gradient_exchange", "tp_unsplit_share", "block_shares"});
  ModelDesc model;
  if (!reader.Keys(object, path, known,
                   all_required ? fields : std::vector<const char*>{"params", "global_batch"})) {
    return model;
  }
  ReadFields(reader, object, path, kModelFields, model);
  ReadGradientExchange(reader, object, path, model.gradient_exchange);
  ReadSplitShares(reader, object, path, model);
  if (reader.ok() && model.fwd_s_per_sample == 0 && model.fwd_flops_per_sample == 0) {
    reader.Fail(path,
                "needs fwd_s_per_sample > 0 or fwd_flops_per_sample > 0 (the forward time "
                "is the model's only compute input, Rubick §4.1)");
  }
  return model;
}

// ---- PerfParams -----------------------------------------------------------------------------

json ParamsToJson(const PerfParams& params) {
  json object = json::object();
  ParamVector values = ToVector(params);
  for (int i = 0; i < kNumPerfParams; ++i) object[std::string(ParamName(i))] = values[i];
  return object;
}

PerfParams ParamsFromJson(Reader& reader, const json& object, const std::string& path) {
  std::vector<const char*> names;
  for (int i = 0; i < kNumPerfParams; ++i) names.push_back(ParamName(i).data());
  ParamVector values = ToVector(PerfParams{});
  if (!reader.Keys(object, path, names, names)) return PerfParams{};
  for (int i = 0; i < kNumPerfParams; ++i) {
    std::string name(ParamName(i));
    reader.Number(object, path, name.c_str(), 0, values[i]);
  }
  return FromVector(values);
}

// ---- ExecutionPlan and Resources ------------------------------------------------------------

json PlanToJson(const ExecutionPlan& plan) { return FieldsToJson(plan, kPlanFields); }

ExecutionPlan PlanFromJson(Reader& reader, const json& object, const std::string& path) {
  const std::vector<const char*> names = FieldKeys(kPlanFields);
  ExecutionPlan plan;
  if (reader.Keys(object, path, names, names)) ReadFields(reader, object, path, kPlanFields, plan);
  return plan;
}

// The measured backward pass: both keys or neither (files written before it: §4.1's k_bwd T_fwd).
constexpr const char* kBackwardKeys[] = {"bwd_s_per_pass", "bwd_s_per_sample"};

void BackwardToJson(const std::optional<PassTime>& backward, json& object) {
  if (!backward) return;
  object[kBackwardKeys[0]] = backward->s_per_pass;
  object[kBackwardKeys[1]] = backward->s_per_sample;
}

void ReadBackward(Reader& reader, const json& object, const std::string& path,
                  std::optional<PassTime>& out) {
  const bool pass = object.contains(kBackwardKeys[0]), sample = object.contains(kBackwardKeys[1]);
  if (!reader.ok() || (!pass && !sample)) return;
  if (pass != sample) {
    reader.Fail(Reader::Join(path, kBackwardKeys[pass ? 1 : 0]),
                std::string("missing: the backward pass needs both ") + kBackwardKeys[0] + " and " +
                    kBackwardKeys[1]);
    return;
  }
  PassTime backward;
  reader.Number(object, path, kBackwardKeys[0], 0, backward.s_per_pass);
  reader.Number(object, path, kBackwardKeys[1], 0, backward.s_per_sample);
  if (reader.ok() && !(backward.s_per_sample > 0)) {
    reader.Fail(Reader::Join(path, kBackwardKeys[1]), "expected a number > 0, got 0");
  }
  if (reader.ok()) out = backward;
}

json ResourcesToJson(const Resources& resources) {
  json object = FieldsToJson(resources, kResourceFields);
  BackwardToJson(resources.backward, object);
  return object;
}

Resources ResourcesFromJson(Reader& reader, const json& object, const std::string& path) {
  const std::vector<const char*> names = FieldKeys(kResourceFields);
  std::vector<const char*> required = names;  // fwd_s_per_pass: absent in older files (0)
  std::erase_if(required,
                [](const char* name) { return std::string_view(name) == "fwd_s_per_pass"; });
  std::vector<const char*> known = names;
  known.insert(known.end(), std::begin(kBackwardKeys), std::end(kBackwardKeys));
  Resources resources;
  if (reader.Keys(object, path, known, required)) {
    ReadFields(reader, object, path, kResourceFields, resources);
    ReadBackward(reader, object, path, resources.backward);
  }
  return resources;
}

// A profiled point's plan, resources and throughput (> 0), the fields points.json's runs and
// fitted.json's fit_points share; the caller checks the object's keys first.
json PointToJson(const ProfiledPoint& point) {
  return json{{"plan", PlanToJson(point.plan)},
              {"resources", ResourcesToJson(point.resources)},
              {"throughput", point.throughput}};
}

ProfiledPoint PointFromJson(Reader& reader, const json& object, const std::string& path) {
  ProfiledPoint point;
  point.plan = PlanFromJson(reader, object.at("plan"), path + ".plan");
  point.resources = ResourcesFromJson(reader, object.at("resources"), path + ".resources");
  reader.Number(object, path, "throughput", 0, point.throughput);
  if (reader.ok() && !(point.throughput > 0)) {
    reader.Fail(path + ".throughput", "expected a number > 0 (samples/s), got 0");
  }
  return point;
}

void BandwidthsFromJson(Reader& reader, const json& root, double& b_intra, double& b_inter,
                        double& b_pcie) {
  reader.Number(root, "", "b_intra", 0, b_intra);
  reader.Number(root, "", "b_inter", 0, b_inter);
  reader.Number(root, "", "b_pcie", 0, b_pcie);
}

}  // namespace

// ---- fitted.json ----------------------------------------------------------------------------

std::string FittedModelToJson(const FittedModel& fitted) {
  json root{{"format", kFittedModelFormat},
            {"model_name", fitted.model_name},
            {"model", ModelToJson(fitted.model)},
            {"params", ParamsToJson(fitted.params)},
            {"b_intra", fitted.b_intra},
            {"b_inter", fitted.b_inter},
            {"b_pcie", fitted.b_pcie},
            {"points", fitted.points},
            {"rmsle", fitted.rmsle}};
  if (fitted.fwd_s_per_pass > 0) root["fwd_s_per_pass"] = fitted.fwd_s_per_pass;
  BackwardToJson(fitted.backward, root);
  if (!fitted.fit_points.empty()) {
    json points = json::array();
    for (const ProfiledPoint& point : fitted.fit_points) points.push_back(PointToJson(point));
    root["fit_points"] = std::move(points);
  }
  return root.dump(2) + "\n";
}

Result<FittedModel> FittedModelFromJson(std::string_view text) {
  json root;
  if (auto parsed = Parse<FittedModel>(text, root); !parsed) return parsed;
  Reader reader;
  FittedModel fitted;
  reader.Keys(root, "",
              {"format", "model_name", "model", "params", "b_intra", "b_inter", "b_pcie", "points",
               "rmsle", "fit_points", "fwd_s_per_pass", kBackwardKeys[0], kBackwardKeys[1]},
              {"format", "model_name", "model", "params", "b_intra", "b_inter", "b_pcie"});
  reader.Format(root, kFittedModelFormat);
  reader.String(root, "", "model_name", fitted.model_name);
  if (reader.ok()) fitted.model = ModelFromJson(reader, root.at("model"), "model", false);
  if (reader.ok()) fitted.params = ParamsFromJson(reader, root.at("params"), "params");
  BandwidthsFromJson(reader, root, fitted.b_intra, fitted.b_inter, fitted.b_pcie);
  reader.Integer(root, "", "points", 0, fitted.points);
  reader.Number(root, "", "rmsle", 0, fitted.rmsle);
  reader.Number(root, "", "fwd_s_per_pass", 0, fitted.fwd_s_per_pass);
  ReadBackward(reader, root, "", fitted.backward);
  if (reader.ok() && root.contains("fit_points")) {
    const json& points = root.at("fit_points");
    if (!points.is_array()) reader.Fail("fit_points", "expected an array");
    for (size_t i = 0; reader.ok() && i < points.size(); ++i) {
      const std::string path = "fit_points[" + std::to_string(i) + "]";
      const std::vector<const char*> names = {"plan", "resources", "throughput"};
      if (!reader.Keys(points[i], path, names, names)) break;
      fitted.fit_points.push_back(PointFromJson(reader, points[i], path));
    }
  }
  if (!reader.ok()) return Result<FittedModel>::Fail(reader.error());
  return Result<FittedModel>::Ok(std::move(fitted));
}

// ---- points.json ----------------------------------------------------------------------------

std::string ProfiledPointsToJson(const ProfiledPoints& points) {
  json runs = json::array();
  for (const ProfiledRun& run : points.runs) {
    json object = PointToJson(run.point);
    object["label"] = run.label;
    object["intra_threads"] = run.intra_threads;
    object["measured_steps"] = run.measured_steps;
    object["median_step_s"] = run.median_step_s;
    runs.push_back(std::move(object));
  }
  json root{{"format", kProfiledPointsFormat},
            {"model_name", points.model_name},
            {"model", ModelToJson(points.model)},
            {"b_intra", points.b_intra},
            {"b_inter", points.b_inter},
            {"b_pcie", points.b_pcie},
            {"runs", std::move(runs)}};
  return root.dump(2) + "\n";
}

Result<ProfiledPoints> ProfiledPointsFromJson(std::string_view text) {
  json root;
  if (auto parsed = Parse<ProfiledPoints>(text, root); !parsed) return parsed;
  Reader reader;
  ProfiledPoints points;
  const std::vector<const char*> top = {"format",  "model_name", "model", "b_intra",
                                        "b_inter", "b_pcie",     "runs"};
  reader.Keys(root, "", top, top);
  reader.Format(root, kProfiledPointsFormat);
  reader.String(root, "", "model_name", points.model_name);
  if (reader.ok()) points.model = ModelFromJson(reader, root.at("model"), "model", true);
  BandwidthsFromJson(reader, root, points.b_intra, points.b_inter, points.b_pcie);
  if (reader.ok() && !root.at("runs").is_array()) reader.Fail("runs", "expected an array");
  std::set<std::string> labels;
  for (size_t i = 0; reader.ok() && i < root.at("runs").size(); ++i) {
    const json& object = root.at("runs").at(i);
    std::string path = "runs[" + std::to_string(i) + "]";
    const std::vector<const char*> names = {"label",        "plan",          "resources",
                                            "throughput",   "intra_threads", "measured_steps",
                                            "median_step_s"};
    ProfiledRun run;
    if (!reader.Keys(object, path, names, names)) break;
    reader.String(object, path, "label", run.label);
    run.point = PointFromJson(reader, object, path);
    reader.Integer(object, path, "intra_threads", 1, run.intra_threads);
    reader.Integer(object, path, "measured_steps", 1, run.measured_steps);
    reader.Number(object, path, "median_step_s", 0, run.median_step_s);
    if (reader.ok() && !labels.insert(run.label).second) {
      reader.Fail(path + ".label", "\"" + run.label + "\" appears twice (labels must be unique)");
    }
    points.runs.push_back(std::move(run));
  }
  if (!reader.ok()) return Result<ProfiledPoints>::Fail(reader.error());
  return Result<ProfiledPoints>::Ok(std::move(points));
}

}  // namespace elastic::perf
