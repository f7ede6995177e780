// Good: docs/allocation.md "Dominance", tpuemu/plan/planner.h; strings in code are not comments.
const char* kText = "issue 12 /work/x";
// Stale: docs/planner.md and tpuemu/alloc/planner.h.
int x = 0;  // as issue 9 asked
/* see design.md section 4 */
