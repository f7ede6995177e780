// SPDX-License-Identifier: Apache-2.0
// The model of a test case named by its workload: "MxKxN" (a requantized matmul, seed 7) or the
// name of a shipped model in examples/ (TPUEMU_EXAMPLES_DIR).
#pragma once

#include <string>

#include "tpuemu/compile/model.h"
#include "tpuemu/compile/workload.h"

namespace tpuemu::test {

inline Model case_model(const std::string& workload) {
  const bool is_model = workload.find('x') == std::string::npos;
  return is_model ? load_model(std::string(TPUEMU_EXAMPLES_DIR) + "/" + workload + ".json")
                  : model_from_workload(parse_matmul_shape(workload, true, 7));
}

}  // namespace tpuemu::test
