// SPDX-License-Identifier: Apache-2.0
// The host layer `config`: HBM timing sets (configs/hbm/<name>.json, docs/hbm.md, with
// the decisions behind the shipped values). Load, validate, derive
// bandwidths and capacities, map byte addresses to DRAM coordinates.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/config/config.h"
#include "tpuemu/spec/contract.h"
#include "tpuemu/spec/hbm_address.h"
#include "tpuemu/spec/hbm_queues.h"

namespace tpuemu {

// Organisation of one stack as the controller sees it. Pseudo channels (or ganged pseudo-channel
// pairs, see docs/hbm.md) are channels. Every value is a power of two.
struct HbmGeometry {
  std::uint32_t channels = 0;
  std::uint32_t bank_groups = 0;      // per channel, <= 4 (2-bit bus field)
  std::uint32_t banks_per_group = 0;  // <= 4 (2-bit bus field)
  std::uint32_t rows = 0;             // per bank, <= 65536 (16-bit bus field)
  std::uint32_t columns = 0;          // bursts per row, <= 256 (8-bit bus field)
  std::uint32_t bus_bytes = 0;        // data bytes per beat (DDR: two beats per tCK)
  std::uint32_t burst_length = 0;     // beats per burst; bus_bytes * burst_length == 64

  bool operator==(const HbmGeometry&) const = default;
};

// All values in tCK (the command clock), names as in docs/hbm.md: the fields of the contract
// (spec/tpuemu.json "hbm"/"timings"), in its order.
struct HbmTimings {
#define TPUEMU_HBM_TIMING_MEMBER(name, doc) std::uint32_t name = 0;
  TPUEMU_SPEC_HBM_TIMINGS(TPUEMU_HBM_TIMING_MEMBER)
#undef TPUEMU_HBM_TIMING_MEMBER

  bool operator==(const HbmTimings&) const = default;
};

// A DRAM coordinate of one burst plus the byte offset inside it.
struct HbmAddress {
  std::uint32_t channel = 0;
  std::uint32_t bank_group = 0;
  std::uint32_t bank = 0;
  std::uint32_t row = 0;
  std::uint32_t column = 0;  // in bursts
  std::uint32_t offset = 0;  // byte within the burst

  bool operator==(const HbmAddress&) const = default;
};

// The order of the address fields, most significant first, as in "ro-ba-bg-ch-co": each of
// ro (row), ba (bank), bg (bank group), ch (channel), co (column) exactly once. The burst offset
// is always the least significant log2(burst bytes) bits.
struct HbmAddressMap {
  // The contract's field codes (spec::hbm::kAddressFields).
  enum class Field : std::uint8_t {
    Row = spec::hbm::field::ro,
    Bank = spec::hbm::field::ba,
    BankGroup = spec::hbm::field::bg,
    Channel = spec::hbm::field::ch,
    Column = spec::hbm::field::co,
  };
  // The contract's first named order.
  static constexpr std::string_view kDefault = spec::hbm::kAddressMaps[0].order;

  std::array<Field, 5> msb_first = msb_first_of(spec::hbm::kAddressMaps[0].lsb_first);

  // A named order's field codes (least significant first), most significant first.
  static constexpr std::array<Field, 5> msb_first_of(const std::array<std::uint8_t, 5>& lsb) {
    std::array<Field, 5> m{};
    for (std::size_t k = 0; k < 5; ++k) m[k] = static_cast<Field>(lsb[4 - k]);
    return m;
  }

  // The field codes, least significant first (spec::hbm::AddressLayout::lsb_first, amap_t.custom).
  constexpr std::array<std::uint8_t, 5> lsb_first_codes() const {
    std::array<std::uint8_t, 5> lsb{};
    for (std::size_t k = 0; k < 5; ++k) lsb[k] = static_cast<std::uint8_t>(msb_first[4 - k]);
    return lsb;
  }

  // Throws Error (no place) on a malformed string; callers add the place.
  static HbmAddressMap parse(std::string_view text);
  std::string to_string() const;

  bool operator==(const HbmAddressMap&) const = default;
};

struct HbmTimingSet {
  std::string name;
  std::string source;         // where the numbers come from
  std::uint32_t tck_ps = 0;   // command clock period
  HbmGeometry geometry;
  HbmTimings timings;
  HbmAddressMap address_map;  // optional in the file; default "ro-ba-bg-ch-co"
  // "controller": the controller's read/write queue sizes and write watermarks per channel;
  // optional in the file, each field defaults to the contract's value (docs/hbm.md "Queues").
  spec::hbm::QueueSizes queues;

  // Derived.
  std::uint32_t burst_bytes() const { return geometry.bus_bytes * geometry.burst_length; }
  std::uint32_t tBURST() const { return geometry.burst_length / 2; }  // DDR data bus cycles
  std::uint32_t banks_per_channel() const {
    return geometry.bank_groups * geometry.banks_per_group;
  }
  std::uint64_t page_bytes() const { return std::uint64_t{geometry.columns} * burst_bytes(); }
  std::uint64_t channel_capacity_bytes() const {
    return std::uint64_t{banks_per_channel()} * geometry.rows * page_bytes();
  }
  std::uint64_t capacity_bytes() const { return channel_capacity_bytes() * geometry.channels; }
  // What the core can reach: addresses are 32 bit, so at most 4 GiB of the stack.
  std::uint64_t addressable_bytes() const;
  // Data bus peak: bus_bytes per beat, two beats per tCK.
  std::uint64_t peak_bytes_per_tck_per_channel() const { return 2ull * geometry.bus_bytes; }
  std::uint64_t peak_bytes_per_tck() const {
    return peak_bytes_per_tck_per_channel() * geometry.channels;
  }
  double peak_gbps_per_channel() const;  // GB/s (1e9 bytes per second)
  double peak_gbps() const;
  double tck_ns() const { return tck_ps / 1000.0; }
  // The same clock in GHz (1000 / tck_ps).
  double clock_ghz() const { return 1000.0 / tck_ps; }

  // Byte address -> DRAM coordinate under address_map, and back. Throws Error for an address at
  // or beyond capacity_bytes() (decode) or a coordinate out of range (encode).
  HbmAddress decode(std::uint64_t byte_address) const;
  std::uint64_t encode(const HbmAddress& address) const;

  bool operator==(const HbmTimingSet&) const = default;
};

// Parses and validates a timing set from an already parsed document. Throws Error
// "file:line:column: /pointer: cause" for a missing, unknown, mistyped, out-of-range or
// inconsistent field, e.g. "hbm2-bad.json:12:5: /timing/tRC: 40 < tRAS + tRP = 48".
HbmTimingSet hbm_timing_set_from_json(const JsonDocument& doc);
HbmTimingSet load_hbm_timing_set_file(const std::filesystem::path& path);

// Directories searched for a timing set by name: the sibling "hbm" directory of every preset
// directory (default_preset_dirs(): $TPUEMU_CONFIG_DIR/../hbm, <exe dir>/../configs/hbm,
// <exe dir>/configs/hbm, the source tree's configs/hbm).
std::vector<std::filesystem::path> default_hbm_dirs();

// Like load_preset: a name_or_path containing '/' or ending in ".json" is a file; anything else
// is looked up as <dir>/<name>.json (first match wins) and must carry that name.
HbmTimingSet load_hbm_timing_set(std::string_view name_or_path,
                                 std::span<const std::filesystem::path> search_dirs);
HbmTimingSet load_hbm_timing_set(std::string_view name_or_path);  // default_hbm_dirs()

std::vector<std::string> list_hbm_timing_sets(std::span<const std::filesystem::path> search_dirs);
std::vector<std::string> list_hbm_timing_sets();

// In the file format (hbm_timing_set_from_json(to_json(s)) == s).
nlohmann::json to_json(const HbmTimingSet& set);
// A few human-readable lines: organisation, capacity, peak bandwidth, key timings in tCK and ns.
std::string describe(const HbmTimingSet& set);

// The peak bandwidth of the core's memory port as the preset's memory runs it, in bytes per core
// cycle: what the roofline's memory bound and the report's "% of the memory-port peak" divide
// by. "simple": the preset's bytes_per_cycle. "hbm": one beat (dim bytes) per core cycle or the
// timing set's data-bus peak (peak_bytes_per_tck() x tCK per core cycle), whichever is lower.
struct MemoryPortPeak {
  double bytes_per_cycle = 0;
  std::string basis;  // how it was found, e.g. "hbm2-2000: 256.0 B/tCK x 1.000 tCK/cycle, capped at one 16 B beat"
};
MemoryPortPeak memory_port_peak(const Preset& preset, const HbmTimingSet& set);  // hbm.model "hbm"
// Loads the preset's timing set (load_hbm_timing_set) for hbm.model "hbm".
MemoryPortPeak memory_port_peak(const Preset& preset);

}  // namespace tpuemu
