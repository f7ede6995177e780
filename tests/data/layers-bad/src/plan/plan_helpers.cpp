// Violation through a relative path into another layer's folder: plan is below run.
#include "tpuemu/plan/planner.h"
#include "../run/runner_internal.h"
