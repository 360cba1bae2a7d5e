// Where --elastic-class=background jobs may run on a live Slurm cluster and which must give way:
// DeepPool §5's foreground/background multiplexing at cluster level. A background job only fills
// a node that a foreground elastic job already holds, never a node that Slurm's plan or elastic
// growth could use, and leaves as soon as the foreground job leaves or the node is needed.
// Pure: Slurm's view and elasticd's foreground jobs in; the background partition's node list and
// the background jobs to requeue out. No Slurm, clocks or I/O (the daemon applies the plan
// through scheduler/slurm/background_calls.h). Thread-safety: pure function of its arguments.
//
// Why a partition node list and a requeue (verified on Slurm 22.05.8, docs/admin.md
// "Background jobs"): Slurm cannot express "only where a job of class X runs", but it confines
// a partition's jobs to the partition's nodes, and `Nodes=` of a partition can be changed
// while jobs run there (running jobs keep their nodes). Slurm 22.05 never shares a core between
// jobs of different partitions (a background job in an OverSubscribe=FORCE partition was not
// even started beside a normal-partition job on free cores), so co-location is the cores (CPU)
// or GRES shards (GPU) a foreground job leaves free on its node; `max_per_node` caps how many
// background jobs share one foreground node. A requeue frees the node completely and puts the
// job back in the queue (a suspended job's stopped processes would keep their memory on the
// node); a background job, preemptible by definition, accepts that.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/policy/slurm_view.h"

namespace elastic::policy {

struct BackgroundOptions {
  // The Slurm partition background jobs run in (overlapping the foreground one). "" = off.
  std::string partition;
  // Most running background jobs on one foreground node (DeepPool §5 co-locates one background
  // job with a foreground job's device); more are requeued, newest first.
  int max_per_node = 1;
};

// A running foreground elastic job (any class but background) as elasticd knows it.
struct ForegroundJob {
  std::uint32_t job_id = 0;
  std::vector<std::string> nodes;    // what it holds now
  std::vector<std::string> leaving;  // nodes an in-flight or new shrink order releases
};

// Why a background job gives way, most urgent first (the order of BackgroundPlan::give_way).
enum class GiveWayCause {
  kNeededByPendingJob,  // on a node of a waiting job's planned start, no foreground job there
  kNoForegroundJob,     // the foreground job ended or is leaving: growth may want the node
  kOverFactor,          // more than max_per_node background jobs on one foreground node
};

struct GiveWay {
  std::uint32_t job_id = 0;
  std::string node;  // the node that made it give way
  GiveWayCause cause = GiveWayCause::kNoForegroundJob;
  std::string reason;
};

struct BackgroundPlan {
  // The background partition's Nodes= after this cycle, sorted: foreground nodes that are not
  // being left, not in a waiting job's planned start, available, and below max_per_node.
  std::vector<std::string> partition_nodes;
  // Whether partition_nodes differs from the partition's node list in the view (write only then).
  bool partition_changed = false;
  // Running background jobs to requeue: by cause as listed above, then the latest started first
  // (least work lost), then job id.
  std::vector<GiveWay> give_way;
};

// REQUIRES: options.max_per_node >= 1. With options.partition empty, returns an empty plan
// (partition_changed false). Foreground jobs not running in `view`, or running in the
// background partition, are ignored (a background job never hosts another).
BackgroundPlan PlanBackground(const SlurmView& view, const std::vector<ForegroundJob>& foreground,
                              const BackgroundOptions& options);

const char* ToString(GiveWayCause cause);

}  // namespace elastic::policy
