// No violation: compile builds on layout, plan and program, and through them on the rest.
#include "tpuemu/alloc/memory_space.h"
#include "tpuemu/base/error.h"
#include "tpuemu/compile/compile.h"
#include "tpuemu/config/config.h"
#include "tpuemu/layout/layout.h"
#include "tpuemu/plan/planner.h"
#include "tpuemu/program/program.h"
#include "vmem_placement.h"

// No violation: the compile layer opens the root namespace, and a namespace that is no layer's.
namespace tpuemu {
namespace detail {}
}  // namespace tpuemu
namespace tpuemu::isa {}
