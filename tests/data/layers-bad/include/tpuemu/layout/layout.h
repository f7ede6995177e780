// Violation in a public header, with angle brackets: layout is below compile.
#pragma once
#include "tpuemu/base/error.h"
#include <tpuemu/compile/compile.h>
