// SPDX-License-Identifier: Apache-2.0
// The rules of a plan's input (tpuemu/plan/plan_input.h).
#include "tpuemu/plan/plan_input.h"

#include <bit>
#include <cmath>

#include <fmt/format.h>

namespace tpuemu::plan {

std::optional<PlanInputProblem> PlanInputCheck::add(const PlanBuffer& b, const std::string& where) {
  if (b.id.empty()) return PlanInputProblem{PlanField::Id, "empty id"};
  if (b.lower < 0) {
    return PlanInputProblem{PlanField::Lower,
                            fmt::format("{} {} is negative", names_.lower, b.lower)};
  }
  if (b.upper <= b.lower) {
    return PlanInputProblem{PlanField::Upper, fmt::format("{} {} <= {} {}", names_.upper, b.upper,
                                                          names_.lower, b.lower)};
  }
  if (b.size == 0) return PlanInputProblem{PlanField::Size, "size is zero"};
  if (!std::has_single_bit(b.alignment)) {
    return PlanInputProblem{PlanField::Alignment,
                            fmt::format("alignment {} is not a power of two", b.alignment)};
  }
  if (const auto [it, fresh] = seen_.emplace(b.id, where); !fresh) {
    return PlanInputProblem{PlanField::Id,
                            fmt::format("duplicate id '{}' (first {})", b.id, it->second)};
  }
  return std::nullopt;
}

std::optional<std::string> timeout_problem(double seconds) {
  if (!std::isfinite(seconds)) return "is not a finite number of seconds";
  if (seconds < 0 || seconds > kMaxPlanTimeoutSeconds)
    return fmt::format("is not in [0, {:.0f}] seconds", kMaxPlanTimeoutSeconds);
  return std::nullopt;
}

}  // namespace tpuemu::plan
