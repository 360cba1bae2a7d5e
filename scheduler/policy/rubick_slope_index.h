// Internal to the rubick engine: the jobs that could give a device back (GetLowestSlopeOverMinJob's
// candidates, Rubick Algorithm 1 line 13) per device type, ordered by shrink slope, so that each
// device reclaimed reads the lowest instead of scanning every running job. Not thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <vector>

#include <boost/container/small_vector.hpp>

namespace elastic::policy::rubick {

// Per device type (by index): whether a job holds devices of it. Inline for up to eight types:
// one per job, rebuilt whenever the job changes.
using TypeFlags = boost::container::small_vector<bool, 8>;

class SlopeIndex {
 public:
  explicit SlopeIndex(std::size_t types = 0) : by_type_(types) {}

  // `job` is a candidate at `slope` for each type it holds (holds_type, by type index), instead
  // of what it was; among equal slopes the lower `tie` comes first. A NaN slope or tie is kept
  // aside: it orders with nothing (see has_nan).
  void Set(std::size_t job, double slope, double tie, const TypeFlags& holds_type);
  // `job` is no candidate (any more).
  void Erase(std::size_t job);
  // The lowest slope of a candidate holding `type`; +infinity when none does.
  double Lowest(std::size_t type) const;
  // Candidates holding `type`, `skip`ped ones left out, whose slopes run up from the lowest with
  // no gap over 2 x eps, in job order. A scan in job order for the lowest slope that lets a job
  // within eps of the best so far replace it (ties) can only pick one of these, and picks the
  // same one when it scans only these: any other is more than eps above each of them.
  std::vector<std::size_t> LowestChain(std::size_t type, double eps,
                                       const std::function<bool(std::size_t)>& skip) const;
  // LowestChain's first job in (tie, job) order when the chain's slopes are one finite value,
  // found without walking the chain (a scan whose ties go to the lower tie key, then the lower
  // job, picks it); nullopt when the chain is empty or holds several slopes (scan it then).
  std::optional<std::size_t> LowestOfOneSlope(std::size_t type, double eps,
                                              const std::function<bool(std::size_t)>& skip) const;
  // Some candidate's slope or tie is NaN: the order above does not hold; scan instead.
  bool has_nan() const { return nan_ > 0; }

 private:
  struct Entry {
    bool in = false;
    bool nan = false;
    double slope = 0.0;
    double tie = 0.0;
    TypeFlags holds_type;
  };
  struct Key {
    double slope;
    double tie;
    std::size_t job;
    bool operator<(const Key& o) const {
      if (slope != o.slope) return slope < o.slope;
      if (tie != o.tie) return tie < o.tie;
      return job < o.job;
    }
  };
  std::vector<std::set<Key>> by_type_;
  std::vector<Entry> entries_;  // by job
  int nan_ = 0;
};

}  // namespace elastic::policy::rubick
