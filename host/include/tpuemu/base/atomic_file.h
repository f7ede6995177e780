// Output files appear whole or not at all: written to a temporary file next to the target, then
// renamed over it. A failed run leaves no partial output behind.
#pragma once

#include <filesystem>
#include <string_view>

namespace tpuemu {

// Throws Error naming the path on any I/O failure; the temporary file is removed.
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

}  // namespace tpuemu
