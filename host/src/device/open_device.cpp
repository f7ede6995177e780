// Backend selection by name. Each backend lives in its own folder (rtl/: the Verilated core in
// this process); a backend that was not built is reported as such.
#include <fmt/format.h>

#include "tpuemu/config/config.h"
#include "tpuemu/device/device.h"

#if TPUEMU_DEVICE_HAVE_RTL
#include "rtl/rtl_backend.h"
#endif

namespace tpuemu {

namespace {

void check_config(const Device& dev, const Preset& preset) {
  const std::uint32_t want = preset.config_csr();
  const DeviceInfo& info = dev.info();
  if (info.config != want)
    throw Error("device",
                fmt::format("backend {}: the core reports CONFIG 0x{:08x} (DIM {}, {} VMEM rows, "
                            "{} ACC rows) but preset '{}' expects 0x{:08x}",
                            info.backend, info.config, info.dim, info.vmem_rows, info.acc_rows,
                            preset.name, want));
}

}  // namespace

bool rtl_backend_built() { return TPUEMU_DEVICE_HAVE_RTL != 0; }

std::unique_ptr<Device> open_device(std::string_view backend, const Preset& preset,
                                    const DeviceOptions& options) {
  std::unique_ptr<Device> dev;
  if (backend == "rtl") {
#if TPUEMU_DEVICE_HAVE_RTL
    dev = detail::open_rtl_device(preset, options);
#else
    throw Error("device", "backend rtl is not built into this binary (the Verilated core, CMake "
                          "target tpuemu_sim, was not available when it was configured)");
#endif
  } else if (backend.starts_with("remote://")) {
    throw Error("device", fmt::format("backend {}: the remote backend is not built yet", backend));
  } else if (backend == "tlm") {
    throw Error("device", "backend tlm: the SystemC backend is not built yet");
  } else {
    throw Error("device", fmt::format("unknown backend '{}' (known: rtl, remote://host:port)",
                                      backend));
  }
  if (options.check_config) check_config(*dev, preset);
  return dev;
}

}  // namespace tpuemu
