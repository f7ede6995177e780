#include "tpuemu/base/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>

#include <fmt/format.h>

#include "tpuemu/base/error.h"

namespace tpuemu {

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  std::random_device entropy;
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp{:08x}", entropy());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(fmt::format("{}: cannot create: {}", tmp.string(), std::strerror(errno)));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw Error(fmt::format("{}: write failed", tmp.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw Error(fmt::format("{}: cannot rename into place: {}", path.string(), ec.message()));
  }
}

}  // namespace tpuemu
