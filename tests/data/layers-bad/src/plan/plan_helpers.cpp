// Violation through a relative path into another layer's folder: plan is below run.
#include "tpuemu/plan/planner.h"
#include "../run/runner_internal.h"

// Violation: the plan layer's names in the alloc layer's namespace (plan builds on alloc, but its
// names are its own).
namespace tpuemu::alloc {
}  // namespace tpuemu::alloc
