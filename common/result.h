// Result<T>: a value or the reason there is none, the one return type of every fallible pure call.
//
// Error model: pure code (parsers, the performance model, the planners,
// the policies, the simulator's inputs) never throws for an expected failure such as a malformed
// flag, an infeasible plan or a trace that does not parse. It returns Result<T>::Fail with a
// message for a person, naming the input and what was expected; the caller decides whether that is
// fatal (a CLI prints it, the daemon answers with it, a policy skips the candidate). Exceptions
// stay for broken invariants and for the I/O and LibTorch edges that throw anyway.
//
// Holding both members in the open (rather than a variant) keeps `r.error` readable in a log line
// whatever the outcome: it is empty exactly when `value` is set.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace elastic {

template <typename T>
struct Result {
  std::optional<T> value;
  std::string error;  // empty when value is set

  static Result Ok(T v) { return {std::move(v), {}}; }
  static Result Fail(std::string why) { return {std::nullopt, std::move(why)}; }

  explicit operator bool() const { return value.has_value(); }
  bool ok() const { return value.has_value(); }

  // REQUIRES: *this holds a value. The rvalue overload lets a caller take a move-only value
  // (a policy's unique_ptr) out of a temporary: `auto p = *MakePolicy(name);`.
  T& operator*() & { return *value; }
  const T& operator*() const& { return *value; }
  T&& operator*() && { return *std::move(value); }
  T* operator->() { return &*value; }
  const T* operator->() const { return &*value; }
};

}  // namespace elastic
