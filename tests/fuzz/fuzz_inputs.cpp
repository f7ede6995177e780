// libFuzzer harness for the readers of user files (issue 9): JSON documents with positions and the
// preset and timing-set loaders on top, allocation traces, the planner's CSV and the assembler.
// TPUEMU_FUZZ_TARGET=json|preset|timing|trace|asm picks one (scripts/fuzz.sh runs each; the trace
// reader is the CSV reader the planner uses too).
// Any tpuemu::Error is the expected answer to bad input; anything else - a crash, a sanitizer
// report, another exception type - is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/error.h"
#include "tpuemu/base/json.h"
#include "tpuemu/config/config.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/program/program.h"

namespace {

std::string_view target() {
  static const std::string t = [] {
    const char* env = std::getenv("TPUEMU_FUZZ_TARGET");
    return std::string(env != nullptr ? env : "json");
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const std::string_view t = target();
    if (t == "json") {
      (void)tpuemu::JsonDocument::parse(text, "fuzz.json");
    } else if (t == "preset") {
      (void)tpuemu::preset_from_json(tpuemu::JsonDocument::parse(text, "fuzz.json"));
    } else if (t == "timing") {
      (void)tpuemu::hbm_timing_set_from_json(tpuemu::JsonDocument::parse(text, "fuzz.json"));
    } else if (t == "trace") {
      (void)tpuemu::alloc::parse_alloc_trace(text, "fuzz.csv");
    } else if (t == "asm") {
      (void)tpuemu::assemble(text, "fuzz.s");
    } else {
      std::abort();  // unknown target: a usage mistake of the harness
    }
  } catch (const tpuemu::Error&) {
  }
  return 0;
}
