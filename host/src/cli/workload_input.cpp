// SPDX-License-Identifier: Apache-2.0
#include "workload_input.h"

#include <utility>

#include "tpuemu/hlo/hlo_parser.h"

namespace tpuemu::cli {

WorkloadInput read_workload_input(const std::string& path) {
  WorkloadInput in;
  in.path = path;
  in.source = path == "-" ? std::string("standard input") : path;
  in.text = read_input_file(path, kWorkloadInput);
  in.hlo = hlo::looks_like_hlo_text(in.text) || (path.size() > 4 && path.ends_with(".hlo"));
  return in;
}

hlo::Module WorkloadInput::hlo_module() const {
  check_input_limits(text, source, hlo::kHloInput);
  return hlo::parse_hlo(text, source);
}

hlo::Module WorkloadInput::take_hlo_module() {
  check_input_limits(text, source, hlo::kHloInput);
  return hlo::parse_hlo(std::move(text), source);
}

JsonDocument WorkloadInput::json() const {
  check_input_limits(text, source, kJsonInput);
  return JsonDocument::parse(text, source);
}

}  // namespace tpuemu::cli
