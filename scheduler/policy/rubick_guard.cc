// elastic's backfill-awareness guard: the rigid head's EASY reservation, kept in every dimension
// (devices, CPUs, host memory), so no start, growth, shrink or CPU change delays its start.
#include <algorithm>

#include "scheduler/policy/rubick_engine.h"

namespace elastic::policy::rubick {

// CPUs per device the head's reservation keeps: a job with fixed CPUs needs exactly those; one
// whose CPUs the policy chooses gets the type's even share (what Slurm's --cpus-per-gpu would
// give), within its range and never more than feed its devices, so a reservation always exists
// on an empty node and the head does not start starved of CPUs.
int Engine::HeadCpusPerDevice(const Work& w, const TypeInfo& type) const {
  if (!w.cpu_adaptive) return w.s.cpus_per_device;
  return std::clamp(type.cpus_per_device, w.s.min_cpus_per_device, IdealCpus(w, type));
}

// The head's reservation: the earliest over device types (ties to the faster type), going by
// every running job's end estimate, then the guard over what each job holds at that time.
void Engine::ReserveForHead(size_t i) {
  std::map<std::string, Releases> releases;
  for (const Work& w : work_) {
    if (w.running()) {
      AddReleases(cluster_, w.s.allocation, w.s, EndEstimate(w, w.s.allocation), releases);
    }
  }
  std::optional<HeadReservation> best;
  for (const TypeInfo& type : types_) {
    std::optional<HeadReservation> head =
        ReserveOnType(cluster_, ledger_, releases, work_[i].s, type.name,
                      HeadCpusPerDevice(work_[i], type), now_);
    if (head && EarlierReservation(cluster_, *head, best)) best = head;
  }
  head_ = best;
  if (head_) ActivateGuard(i);
}

Engine::Holds Engine::HeldAtReservation(const Work& w, const Allocation& allocation) const {
  Holds holds;
  if (!head_ || allocation.empty()) return holds;
  if (EndEstimate(w, allocation) <= head_->reservation.start_s + kEpsilon) return holds;
  for (const Slice& slice : allocation) {
    if (cluster_.nodes[slice.node].device_type != head_->reservation.device_type) continue;
    holds.emplace_back(
        slice.node,
        NodeAmounts{slice.devices, static_cast<long>(slice.devices) * w.s.cpus_per_device,
                    slice.devices * w.s.HostMemoryPerDevice()});
  }
  return holds;
}

long Engine::UsableAt(int node) const {
  return Usable(at_reservation_.at(node), head_->cpus_per_device, head_->memory_mb_per_device);
}

// What is free at the reservation: each node's capacity less what jobs still hold then.
void Engine::ActivateGuard(size_t head_job) {
  head_job_ = head_job;
  at_reservation_.clear();
  for (size_t n = 0; n < cluster_.nodes.size(); ++n) {
    const NodeState& node = cluster_.nodes[n];
    if (node.device_type != head_->reservation.device_type) continue;
    at_reservation_[static_cast<int>(n)] = {node.devices, node.cpus, node.memory_mb};
  }
  for (size_t i = 0; i < work_.size(); ++i) {
    held_[i] = HeldAtReservation(work_[i], work_[i].s.allocation);
    for (const auto& [node, amounts] : held_[i]) {
      NodeAmounts& free = at_reservation_.at(node);
      free.devices -= amounts.devices;
      free.cpus -= amounts.cpus;
      free.memory_mb -= amounts.memory_mb;
    }
  }
  usable_ = 0;
  for (const auto& entry : at_reservation_) usable_ += UsableAt(entry.first);
}

// A job's holds at the reservation may change from `before` to `after` if the head can still
// start then, or if the change leaves it no worse off (estimates can be off; giving back is
// always allowed).
bool Engine::GuardAllows(const Holds& before, const Holds& after) const {
  std::map<int, NodeAmounts> changed;
  for (const auto& [node, amounts] : before) {
    NodeAmounts& c = changed.try_emplace(node, at_reservation_.at(node)).first->second;
    c.devices += amounts.devices;
    c.cpus += amounts.cpus;
    c.memory_mb += amounts.memory_mb;
  }
  for (const auto& [node, amounts] : after) {
    NodeAmounts& c = changed.try_emplace(node, at_reservation_.at(node)).first->second;
    c.devices -= amounts.devices;
    c.cpus -= amounts.cpus;
    c.memory_mb -= amounts.memory_mb;
  }
  long usable = usable_;
  for (const auto& [node, amounts] : changed) {
    usable += Usable(amounts, head_->cpus_per_device, head_->memory_mb_per_device) - UsableAt(node);
  }
  return usable >= work_[head_job_].s.requested_devices || usable >= usable_;
}

// Records job i's new holds at the reservation.
void Engine::Hold(size_t i, Holds held) {
  for (int pass = 0; pass < 2; ++pass) {  // 0: give the old holds back, 1: take the new ones
    const Holds& holds = pass == 0 ? held_[i] : held;
    const long sign = pass == 0 ? 1 : -1;
    for (const auto& [node, amounts] : holds) {
      NodeAmounts& free = at_reservation_.at(node);
      usable_ -= UsableAt(node);
      free.devices += sign * amounts.devices;
      free.cpus += sign * amounts.cpus;
      free.memory_mb += sign * amounts.memory_mb;
      usable_ += UsableAt(node);
    }
  }
  held_[i] = std::move(held);
}

}  // namespace elastic::policy::rubick
