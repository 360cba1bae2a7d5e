// Internal to rubick_policy.cc: the working state of one RubickPolicy::Decide call.
//
// The parts: rubick_engine.cc holds the mechanics (model views, the ledger of
// devices/CPUs/memory, undo, and the order decisions are applied in), with rubick_placement.cc
// placing one job (CPU and offload-memory choice, growth in place or re-placed);
// rubick_policy.cc holds Algorithm 1's phases (protection, privileged jobs, rigid-first,
// SortBySlope growth, consolidation) written against them; rubick_reclaim.cc takes resources
// from other jobs for one job (shrink, preempt, CPUs); rubick_compact.cc makes room on the
// fewest nodes for a guaranteed claim; rubick_guard.cc is elastic's guard of the rigid head's
// reservation; rubick_slope_index.h keeps the shrink candidates by slope for rubick_reclaim.cc.
// Not thread-safe; one Engine per Decide call, borrowing its arguments.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/policy/placement.h"
#include "scheduler/policy/policy.h"
#include "scheduler/policy/reservation.h"
#include "scheduler/policy/rubick_slope_index.h"

namespace elastic::policy::rubick {

inline constexpr double kEpsilon = 1e-9;
// CPU steps (one CPU per device of one job) one grant may take: bounds a decision's cost.
inline constexpr int kCpuReclaimSteps = 32;
// elastic's ranking (Engine::Rank): heSRPT's speedup exponent p, for speedups k^p. ½ is the
// square-root speedup of heSRPT's own examples; docs/evaluation.md shows 0.3-0.7 alike.
inline constexpr double kRankExponent = 0.5;
// elastic ranks a growth by the gain per device of the compact placement (CompactSpeed); where
// the free devices are spread over nodes its placement gains less, and a growth placed below
// this share of its ranked gain waits (Consolidate re-places spread jobs). Why 0.9:
// docs/evaluation.md, "elastic grows only where the placement pays".
inline constexpr double kGrowthPlacementFloor = 0.9;
// elastic: a pending job no SLA protects preempts a best-effort job only if that one would still
// run at least this many times as long as the pending job's run and a resize.
inline constexpr double kPreemptLongerFactor = 2.0;

struct TypeInfo {
  std::string name;
  double capability = 1.0;
  int per_node = 1;  // largest node of the type
  int total = 0;
  int cpus_per_device = 0;  // fewest CPUs per device on a node of the type
  // Every node of the type has at most one device and the same capability: any n devices of it
  // have one shape (n nodes), wherever they are.
  bool one_shape = true;
};

// One job's compact-placement speed curve for one (device type, CPUs per device): the model's
// speed on d packed devices, by d (< 0: not computed yet). Engine::CompactSpeed's memo: the model
// is pure and the job's profile does not change within a Decide call, so a value computed once
// is exactly what a second call would return. Lives and dies with its Work (no global cache).
struct SpeedCurve {
  double capability = 0.0;
  int per_node = 0;
  int cpus_per_device = 0;
  std::vector<double> speed;
};

// One job's minRes (MinResDevices) on one device type; Engine::MinRes's memo, for the same
// reason as SpeedCurve: the guaranteed job's floor is asked for at every reclaim step.
struct MinResEntry {
  double capability = 0.0;
  int per_node = 0;
  int devices = 0;
};

// A job as GetLowestSlopeOverMinJob sees it (Engine::ShrinkView), valid while the job's
// `revision` and protection are those it was computed at. The scan runs over every job for each
// device reclaimed, and a victim's state changes only when it is resized.
struct ShrinkView {
  int revision = -1;
  bool protected_sla = false;
  bool candidate = false;          // running, elastic, above its floor and may be resized
  double slope = 0.0;              // ShrinkSlope when a candidate
  TypeFlags holds_type;            // per index into Engine::types_
};

struct Work {
  JobState s;
  const JobState* original = nullptr;  // as Decide received it (borrowed, like the Engine's)
  bool was_running = false;
  bool started = false;        // started in this round
  bool touched = false;        // resized in this round (one resize however many steps)
  bool protected_sla = false;  // guaranteed and within its tenant's quota
  bool cpu_adaptive = false;   // the policy chooses its CPUs per device
  std::string type;            // device type it mainly runs on ("" while pending)
  double work = 0.0;           // reference-GPU-seconds left
  double rank_weight = 1.0;    // elastic: what its slopes are worth (Engine::WeighByWork)
  int version = 0;
  std::string reason;
  // Inline: a job nearly always runs on one type with one CPU count.
  mutable boost::container::small_vector<SpeedCurve, 1> curves;  // CompactSpeed's memo
  mutable boost::container::small_vector<MinResEntry, 1> min_res;  // MinRes's memo
  mutable double owed_speed = -1.0;          // OwedSpeed's memo
  int revision = 0;  // bumped whenever s, touched or type change (SetFit, Rollback, a start)
  mutable ShrinkView shrink;  // ShrinkView's memo
  bool running() const { return !s.allocation.empty(); }
};

// A job's resources on some devices: the allocation, CPUs and offload memory per device, and the
// model's speed with them.
struct Fit {
  Allocation allocation;
  int cpus_per_device = 0;
  std::int64_t offload_mb_per_device = 0;
  double speed = 0.0;
};

// Undo record for a tentative change that may have to be rolled back.
struct Undo {
  size_t job;
  Allocation allocation;
  int cpus_per_device;
  std::int64_t offload_mb_per_device;
  bool touched;
  std::vector<std::pair<int, NodeAmounts>> held;  // Engine::Holds before the change
};

// What one Acquire took from other jobs (for its reason).
struct Reclaimed {
  int devices = 0;    // devices shrunk from jobs above their minimum
  int preempted = 0;  // best-effort jobs preempted
  int cpus = 0;       // CPU steps (one CPU per device of a job) taken
};

struct EngineOptions {
  bool backfill_aware = false;  // elastic: rigid-first, the head's reservation guard
  bool cpus = false;            // Policy::SchedulesCpus
  bool hetero = false;          // elastic: grow a job onto other device types (EasyScale Eq. 1)
  bool rank_by_work = false;    // elastic: slopes weighted by remaining-work order (heSRPT)
  bool preempt_last = false;    // elastic: preempt only when no device type fits without it
  // elastic: a running job's growth is granted only where its placement gains at least this
  // share of the gain per device it was ranked by (0: any gain; rubick_policy.cc, BySlope).
  double growth_placement_floor = 0.0;
  // elastic: a pending job no SLA protects may preempt best-effort jobs that would run far longer.
  bool preempt_longer = false;
};

class Engine {
 public:
  Engine(const ClusterState& cluster, const std::vector<JobState>& jobs, double now_s,
         const PolicyOptions& options, const EngineOptions& engine);
  PolicyOutput Run();

 private:
  // ---- Algorithm 1's phases (rubick_policy.cc) ---------------------------------------------
  void AssignProtection();
  void Privileged();
  std::vector<size_t> PrivilegedOrder() const;
  bool AdmitGuaranteed(size_t i, int& quota_left, bool& within_quota);
  void RigidFirst();
  void BySlope();
  void Consolidate();
  bool StartAtFloor(size_t i, bool below_minimum, const char* why);
  bool StartOnSomeType(size_t i, bool below_minimum, const char* why);
  // `min_gain`: a running job's growth is placed only if the placement adds at least this much
  // speed per device (BySlope's floor; 0: any placement).
  bool Acquire(size_t i, const TypeInfo& type, int devices, double slope, bool below_minimum,
               const char* why, double min_gain = 0.0);
  void NoteVictims(size_t i, const std::vector<Undo>& undo);
  struct Growth {  // phase 2 heap entry: job wants `devices` more of `type` at `slope`
    double slope = 0.0;
    int devices = 0;
    size_t job = 0;
    int version = 0;
    size_t type = 0;  // index into types_
    double gain = 0.0;  // running job: speed per device added that `slope` ranks (Rank's input)
  };
  std::optional<Growth> BestGrowth(size_t i) const;
  void AddOtherTypes(const Work& w, size_t i, std::optional<Growth>& best) const;
  double Rank(const Work& w, double slope) const;
  void WeighByWork();
  double StarvationThreshold(const Work& w) const;

  // ---- taking resources from others (rubick_reclaim.cc) -----------------------------------
  void ReclaimDevices(size_t i, const TypeInfo& type, int devices, double slope,
                      bool below_minimum, std::vector<Undo>& undo, Reclaimed& tally);
  std::optional<size_t> LowestSlopeOverMin(const std::string& type, size_t grower,
                                           const std::vector<size_t>& refused) const;
  std::optional<size_t> LowestSlopePreemptable(const std::string& type, size_t grower,
                                               const std::vector<size_t>& refused,
                                               double min_time_left = 0.0) const;
  bool TakeFrom(size_t victim, const std::string& type, bool preempt, std::vector<Undo>& undo,
                Reclaimed& tally);
  double ShrinkSlope(const Work& w) const;
  const ShrinkView& ShrinkViewOf(const Work& w) const;
  double LowestShrinkSlope(const TypeInfo& type) const;
  void RefreshSlopes() const;
  void UpdateSlope(size_t i) const;
  double PreemptSlope(const Work& w) const;
  std::optional<Fit> PlaceReclaimingCpus(size_t i, const TypeInfo& type, int devices,
                                         double slope, bool below_minimum,
                                         std::vector<Undo>& undo, Reclaimed& tally);
  std::optional<size_t> LowestCpuSlopeOverMin(const std::string& type, size_t grower,
                                              const std::vector<size_t>& refused) const;
  double CpuShrinkSlope(const Work& w) const;
  bool Preemptable(const Work& w) const;
  bool MayPreemptLonger(const Work& w) const;
  void PreemptLonger(size_t i, const TypeInfo& type, int devices, std::vector<Undo>& undo,
                     Reclaimed& tally);

  // ---- room on few nodes for a guaranteed claim (rubick_compact.cc) ------------------------
  using RoomPlan = std::vector<std::pair<int, int>>;  // (node, devices wanted free there)
  std::optional<RoomPlan> PlanCompactRoom(size_t i, const TypeInfo& type, int devices,
                                          bool may_preempt) const;
  bool MakeCompactRoom(size_t i, const TypeInfo& type, int devices, std::vector<Undo>& undo);
  void Repack(size_t i);
  double OwedSpeed(const Work& w) const;
  std::vector<int> ReclaimablePerNode(size_t i, bool may_preempt) const;
  std::optional<size_t> VictimOn(size_t i, int node, bool may_preempt,
                                 const std::vector<size_t>& refused, bool& preempt) const;

  // ---- model views (rubick_engine.cc) ------------------------------------------------------
  const TypeInfo& Type(const std::string& name) const;
  size_t TypeIndex(const std::string& name) const;
  int IdealCpus(const Work& w, const TypeInfo& type) const;
  double CompactSpeed(const Work& w, const TypeInfo& type, int devices) const;
  double Speed(const Work& w, const Allocation& allocation) const;
  double Speed(const JobState& job, const Allocation& allocation) const;
  double RemainingWork(const Work& w) const;
  int MinRes(const Work& w, const TypeInfo& type) const;
  int Floor(const Work& w, const TypeInfo& type) const;
  int Floor(const Work& w) const { return Floor(w, Type(w.type)); }
  bool PenaltyAllows(const Work& w) const;
  bool MayResize(const Work& w) const;
  double EndEstimate(const Work& w, const Allocation& allocation) const;

  // ---- placement (rubick_placement.cc) -----------------------------------------------------
  std::optional<Fit> PlaceGrowth(const Work& w, const std::string& type, int devices);
  std::optional<Fit> Replace(const Work& w, const std::string& type, int count);
  bool PlacementIsMoot(const Work& w, const std::string& type) const;
  std::vector<std::pair<int, std::int64_t>> ResourceChoices(const Work& w, const TypeInfo& type,
                                                            int count) const;
  Fit Current(const Work& w) const;

  // ---- ledger, guard, undo -------------------------------------------------------------------
  // ---- elastic's guard for the rigid head's reservation (rubick_guard.cc) ------------------
  // Devices, CPUs and memory a job holds past the reservation, per node of the head's type.
  using Holds = std::vector<std::pair<int, NodeAmounts>>;
  Holds HeldAtReservation(const Work& w, const Allocation& allocation) const;
  void ActivateGuard(size_t head_job);
  bool GuardAllows(const Holds& before, const Holds& after) const;
  void Hold(size_t i, Holds held);
  long UsableAt(int node) const;
  int HeadCpusPerDevice(const Work& w, const TypeInfo& type) const;
  void ReserveForHead(size_t i);
  void Move(const JobState& from, const JobState& to);
  bool SetFit(size_t i, const Fit& next, std::vector<Undo>& undo);
  void Rollback(std::vector<Undo>& undo);
  void NoteResize(size_t i);
  static Allocation WithoutOne(const Allocation& allocation, const ClusterState& cluster,
                               const std::string& type);
  const std::string& MainType(const Allocation& allocation) const;  // "" for none
  std::vector<size_t> ApplicableOrder(std::vector<size_t> changed) const;
  bool Changed(const Work& w) const;
  void Note(size_t i, const std::string& text);
  bool Notes(size_t i) const;

  void TrackRunning(size_t i);
  void SetProtected(Work& w, bool on);
  long TotalDevices() const;
  const std::vector<size_t>& Queue() const { return queue_; }

  const ClusterState& cluster_;
  double now_;
  const PolicyOptions& options_;
  EngineOptions engine_;
  FreeLedger ledger_;
  std::map<std::string, int> free_;  // free devices per type, kept in step with ledger_
  std::vector<TypeInfo> types_;      // fastest first
  std::vector<int> node_type_;       // by node: its index in types_ (-1: none)
  std::vector<Work> work_;
  // Pending jobs (as they were when Decide was called) in queue order (QueueOrder), as indices.
  std::vector<size_t> queue_;
  // Running elastic jobs by index: the only jobs any reclaim step can take from, so its scans
  // (LowestSlope) visit these in index order instead of every job of a long queue.
  std::vector<size_t> running_elastic_;  // sorted
  // Bumped whenever any job's ShrinkView may change (SetFit, Rollback, a start, protection).
  long epoch_ = 0;
  // Per type: the epoch at which no job at all could give a device of it back (LowestSlopeOverMin
  // found none); until the next change every such scan finds none again. A long queue asks for
  // each pending job in turn while the cluster is full.
  mutable std::vector<long> no_shrink_at_;
  // Running elastic jobs that could give a device back, by type and ShrinkSlope (the scans of
  // LowestShrinkSlope and LowestSlopeOverMin, one per device reclaimed, read it instead), brought
  // up to date with the jobs changed since (`slopes_dirty_`: TrackRunning, SetProtected, a start)
  // when next read.
  mutable SlopeIndex slopes_;
  mutable bool slopes_built_ = false;
  mutable std::vector<size_t> slopes_dirty_;
  // Jobs SetFit or Rollback changed, each with its device count before the first change (BySlope
  // re-ranks the jobs whose size a grant changed).
  std::vector<std::pair<size_t, int>> resized_;
  std::map<std::string, int> quota_left_;
  std::optional<HeadReservation> head_;  // elastic: the rigid head's reservation
  size_t head_job_ = 0;
  // Per node of the head's type: devices, CPUs and memory free at the reservation time.
  std::map<int, NodeAmounts> at_reservation_;
  long usable_ = 0;           // devices the head could use at the reservation (Usable, summed)
  std::vector<Holds> held_;   // per job: what it still holds at the reservation
  bool preempt_allowed_ = true;
  // Runs `attempt` with preemption off, then restores it: "every type without preemption first".
  template <typename Attempt>
  bool WithoutPreemption(Attempt attempt) {
    const bool allowed = preempt_allowed_;
    preempt_allowed_ = false;
    const bool done = attempt();
    preempt_allowed_ = allowed;
    return done;
  }  // off while a guaranteed job tries every type without it
};

}  // namespace elastic::policy::rubick
