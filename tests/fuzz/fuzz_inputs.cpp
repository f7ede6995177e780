// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness for the readers of user files (docs/fuzzing.md): JSON documents with positions
// and the preset, timing-set, model (model, mlp and matmul files) and serving-CNN loaders on top,
// allocation traces, the planner's CSV, HBM request traces, the assembler, the HLO text reader, and
// the HLO layout grammar with the sizes it implies (a shape read alone, then its bytes tiled for
// 128 and 8 lanes and untiled), and the core cache's manifest (what is checked before a cached core
// is loaded).
// TPUEMU_FUZZ_TARGET=json|preset|timing|model|cnn|trace|plan|hbm|asm|hlo|layout|manifest picks one
// (scripts/fuzz.sh
// runs each from its seeds in tests/fuzz/corpus/<target>/; docs/fuzzing.md).
// Any tpuemu::Error is the expected answer to bad input; anything else - a crash, a sanitizer
// report, another exception type - is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tpuemu/alloc/alloc_trace.h"
#include "tpuemu/base/error.h"
#include "tpuemu/base/json.h"
#include "tpuemu/compile/model.h"
#include "tpuemu/config/config.h"
#include "tpuemu/config/hbm_config.h"
#include "tpuemu/device/core_cache.h"
#include "tpuemu/hbm_replay/hbm_trace.h"
#include "tpuemu/hlo/hlo_parser.h"
#include "tpuemu/hlo/liveness.h"
#include "tpuemu/plan/planner.h"
#include "tpuemu/program/program.h"
#include "tpuemu/run/serving_trace.h"

namespace {

std::string_view target() {
  static const std::string t = [] {
    const char* env = std::getenv("TPUEMU_FUZZ_TARGET");
    return std::string(env != nullptr ? env : "json");
  }();
  return t;
}

// HBM traces are checked against a timing set's capacity: the shipped hbm2-2000, loaded in
// LLVMFuzzerInitialize so that a missing file stops the run instead of passing as bad input.
const tpuemu::HbmTimingSet* g_hbm_set = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (target() != "hbm") return 0;
  try {
    static const tpuemu::HbmTimingSet set = tpuemu::load_hbm_timing_set("hbm2-2000");
    g_hbm_set = &set;
  } catch (const tpuemu::Error& e) {
    std::fprintf(stderr, "fuzz_inputs: %s\n", e.what());
    std::exit(1);
  }
  return 0;
}

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
    } else if (t == "model") {
      (void)tpuemu::load_model(tpuemu::JsonDocument::parse(text, "fuzz.json"), "fuzz.json");
    } else if (t == "cnn") {
      (void)tpuemu::load_cnn_model(tpuemu::JsonDocument::parse(text, "fuzz.json"), "fuzz.json");
    } else if (t == "trace") {
      (void)tpuemu::alloc::parse_alloc_trace(text, "fuzz.csv");
    } else if (t == "plan") {
      (void)tpuemu::plan::parse_plan_csv(text, "fuzz.csv");
    } else if (t == "hbm") {
      (void)tpuemu::parse_hbm_trace(text, "fuzz.trace", *g_hbm_set);
    } else if (t == "asm") {
      (void)tpuemu::assemble(text, "fuzz.s");
    } else if (t == "hlo") {
      (void)tpuemu::hlo::parse_hlo(text, "fuzz.hlo");
    } else if (t == "layout") {
      const tpuemu::hlo::Shape shape = tpuemu::hlo::parse_shape(text, "fuzz.shape");
      for (const tpuemu::hlo::SizeOptions sizes : {tpuemu::hlo::SizeOptions{.tiled = true, .lanes = 128},
                                                   tpuemu::hlo::SizeOptions{.tiled = true, .lanes = 8},
                                                   tpuemu::hlo::SizeOptions{.tiled = false, .lanes = 128}}) {
        (void)tpuemu::hlo::shape_bytes(shape, sizes);
      }
    } else if (t == "manifest") {
      // The directory's name is the key its manifest must name (the seeds' key).
      (void)tpuemu::parse_core_manifest(text, "cores/00112233aabbccdd");
    } else {
      std::abort();  // unknown target: a usage mistake of the harness
    }
  } catch (const tpuemu::Error&) {
  }
  return 0;
}
