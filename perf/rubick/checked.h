// Checked<T>: a value or the reason there is none, the error model of perf/rubick.
// The performance model is pure policy code (docs/style.md "Errors"): it never throws for an
// invalid plan, an infeasible allocation or a fit that cannot run; it says why in `error`.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace elastic::perf {

template <typename T>
struct Checked {
  std::optional<T> value;
  std::string error;  // empty when value is set

  static Checked Ok(T v) { return {std::move(v), {}}; }
  static Checked Fail(std::string why) { return {std::nullopt, std::move(why)}; }

  explicit operator bool() const { return value.has_value(); }
  // REQUIRES: *this holds a value.
  const T& operator*() const { return *value; }
  const T* operator->() const { return &*value; }
};

}  // namespace elastic::perf
