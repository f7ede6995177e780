// SPDX-License-Identifier: Apache-2.0
// The parts of the extension module tpuemu._tpuemu, each binding one concern (module.cpp: runs,
// analyses and the device; programs.cpp: the assembler, layouts and compilers).
#pragma once

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace tpuemu::python {

void bind_programs(py::module_& m);

}  // namespace tpuemu::python
