// comp, sync and comm of DeepPool §4.1 (model documented in cost_model.h).
#include "perf/burst/cost_model.h"

#include <algorithm>

namespace elastic::burst {

double ComputeAtBatch(const Layer& layer, int per_worker_batch) {
  const std::vector<ComputePoint>& table = layer.compute;
  if (per_worker_batch <= table.front().batch) return table.front().seconds;
  if (per_worker_batch >= table.back().batch) {
    return table.back().seconds * per_worker_batch / table.back().batch;
  }
  auto upper = std::lower_bound(
      table.begin(), table.end(), per_worker_batch,
      [](const ComputePoint& point, int batch) { return point.batch < batch; });
  if (upper->batch == per_worker_batch) return upper->seconds;
  auto lower = upper - 1;
  double fraction =
      double(per_worker_batch - lower->batch) / double(upper->batch - lower->batch);
  return lower->seconds + fraction * (upper->seconds - lower->seconds);
}

double LayerCompute(const Layer& layer, int global_batch, int gpus) {
  int per_worker = (global_batch + gpus - 1) / gpus;
  return ComputeAtBatch(layer, per_worker);
}

double SyncTime(const NetworkModel& net, double param_bytes, int gpus) {
  if (gpus <= 1 || param_bytes <= 0.0) return 0.0;
  double volume = 2.0 * (gpus - 1) / gpus * param_bytes;
  return volume / net.bandwidth_bytes_per_s + net.latency_s;
}

double SeparateTransitionTime(const NetworkModel& net, double batch_bytes, int from, int to) {
  return ReshardTime(net, batch_bytes, 1.0 / std::min(from, to));
}

}  // namespace elastic::burst
