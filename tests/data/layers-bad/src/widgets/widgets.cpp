// Violation: a folder that is not a layer of the table.
#include "tpuemu/base/error.h"
