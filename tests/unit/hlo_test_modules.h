// SPDX-License-Identifier: Apache-2.0
// The HLO modules the hlo tests run over: every module shipped (examples/hlo) and every test
// module (tests/data/hlo and its folders), except tests/data/hlo/bad, the modules the reader
// must refuse. TPUEMU_TEST_DATA_DIR is tests/data (tests/CMakeLists.txt).
#pragma once

#include <algorithm>
#include <filesystem>
#include <vector>

namespace tpuemu::test {

inline const std::filesystem::path kHloTestData = std::filesystem::path(TPUEMU_TEST_DATA_DIR);

inline std::vector<std::filesystem::path> every_valid_hlo_module() {
  namespace fs = std::filesystem;
  const fs::path examples = kHloTestData.parent_path().parent_path() / "examples" / "hlo";
  std::vector<fs::path> files;
  for (const fs::path& dir : {examples, kHloTestData / "hlo"}) {
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator();
         ++it) {
      if (it->is_directory() && it->path() == kHloTestData / "hlo" / "bad") {
        it.disable_recursion_pending();
      } else if (it->is_regular_file() && it->path().extension() == ".hlo") {
        files.push_back(it->path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tpuemu::test
