// SPDX-License-Identifier: Apache-2.0
// The rules of a plan's input, checked once for every front end that takes one: `tpuemu plan`'s
// CSV reader, which places a problem at its field (file:line:column), and Python's plan(), which
// names the argument (docs/allocation.md, "Format (MiniMalloc CSV)").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "tpuemu/plan/planner.h"

namespace tpuemu::plan {

// A buffer's fields, and what a front end calls them (the CSV's header: id, lower, upper or
// MiniMalloc's newer buffer, start, end).
enum class PlanField { Id, Lower, Upper, Size, Alignment };
struct PlanFieldNames {
  std::string_view id = "id";
  std::string_view lower = "lower";
  std::string_view upper = "upper";
};

struct PlanInputProblem {
  PlanField field;
  std::string message;  // "upper 4 <= lower 9", "duplicate id 'a' (first on line 2)"
};

// The buffers of one input, one after another: each has an id that is not empty and not given
// before, 0 <= lower < upper, size > 0 and an alignment that is a power of two.
class PlanInputCheck {
 public:
  explicit PlanInputCheck(PlanFieldNames names = {}) : names_(names) {}
  // The first rule `buffer` breaks, or nullopt. `where` says where it was given ("on line 2",
  // "at buffers[0]"), for the message of a later buffer with the same id.
  std::optional<PlanInputProblem> add(const PlanBuffer& buffer, const std::string& where);

 private:
  PlanFieldNames names_;
  std::map<std::string, std::string, std::less<>> seen_;  // id -> where it was given
};

// The exact search's time limit: a finite number of seconds in [0, kMaxPlanTimeoutSeconds] (0:
// the greedy pass alone). The problem as a clause to follow the value ("is not a finite number of
// seconds"), or nullopt.
inline constexpr double kMaxPlanTimeoutSeconds = 1e6;
std::optional<std::string> timeout_problem(double seconds);

}  // namespace tpuemu::plan
