// SPDX-License-Identifier: Apache-2.0
// Value types of the Device interface: decoding and human-readable descriptions.
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "tpuemu/device/device.h"

namespace tpuemu {

std::string DeviceInfo::firmware_version_string() const {
  return fmt::format("{}.{}.{}", firmware_version >> 16, (firmware_version >> 8) & 0xFF,
                     firmware_version & 0xFF);
}

std::string_view to_string(RunStatus status) {
  switch (status) {
    case RunStatus::Done: return "done";
    case RunStatus::Error: return "error";
    case RunStatus::Deadlock: return "deadlock";
    case RunStatus::Timeout: return "watchdog timeout";
    case RunStatus::Idle: return "idle";
    case RunStatus::Busy: return "busy";
  }
  return "unknown";
}

std::string_view error_code_name(std::uint32_t error_code) {
  for (const spec::ErrorCodeInfo& e : spec::kErrorCodes) {
    if (static_cast<std::uint32_t>(e.value) == error_code) return e.value == spec::ErrorCode::None ? e.name : e.doc;
  }
  return "unknown error";
}

QueueState QueueState::decode(std::uint32_t queue_state, std::uint32_t head_wait) {
  namespace qs = spec::csr::queue_state;
  namespace hw = spec::csr::head_wait;
  QueueState q;
  q.raw_queue_state = queue_state;
  q.raw_head_wait = head_wait;
  q.dma.entries = qs::dma_entries.get(queue_state);
  q.mxu.entries = qs::mxu_entries.get(queue_state);
  q.vector.entries = qs::vec_entries.get(queue_state);
  q.fetch_stopped = qs::fetch_stopped.get(queue_state) != 0;
  q.dma.head_waits = qs::dma_waits.get(queue_state) != 0;
  q.mxu.head_waits = qs::mxu_waits.get(queue_state) != 0;
  q.vector.head_waits = qs::vec_waits.get(queue_state) != 0;
  q.dma.wait_sem = hw::dma_sem.get(head_wait);
  q.mxu.wait_sem = hw::mxu_sem.get(head_wait);
  q.vector.wait_sem = hw::vec_sem.get(head_wait);
  q.first_wait_count = hw::wait_cnt.get(head_wait);
  return q;
}

namespace {

std::string describe_queues(const RunResult& r) {
  const QueueState& q = r.queues;
  std::string out;
  bool first_waiter = true;
  const std::pair<const char*, const QueueInfo*> queues[] = {
      {"DMA", &q.dma}, {"MXU", &q.mxu}, {"vector", &q.vector}};
  for (const auto& [name, info] : queues) {
    if (!out.empty()) out += ", ";
    if (info->entries == 0 && !info->head_waits) {
      out += fmt::format("{} queue empty", name);
      continue;
    }
    out += fmt::format("{} queue ({} entr{})", name, info->entries,
                       info->entries == 1 ? "y" : "ies");
    if (info->head_waits) {
      const std::uint32_t sem = info->wait_sem % r.semaphores.size();
      if (first_waiter)
        out += fmt::format(" head waits s{}>={} (sem={})", sem, q.first_wait_count,
                           r.semaphores[sem]);
      else
        out += fmt::format(" head waits s{} (sem={})", sem, r.semaphores[sem]);
      first_waiter = false;
    }
  }
  if (q.fetch_stopped)
    out += fmt::format(", fetch stopped at pc {}", r.pc);
  else
    out += fmt::format(", fetch at pc {}", r.pc);
  return out;
}

}  // namespace

std::string RunResult::describe() const {
  switch (status) {
    case RunStatus::Done: return fmt::format("done in {} cycles", cycles);
    case RunStatus::Error:
      return fmt::format("error {} ({}) at pc {}: {}", error_code, error_code_name(error_code),
                         error_pc, describe_queues(*this));
    case RunStatus::Deadlock:
      return fmt::format("deadlock: {}", describe_queues(*this));
    case RunStatus::Timeout:
      return fmt::format("watchdog timeout: still busy after {} cycles: {}", waited_cycles,
                         describe_queues(*this));
    case RunStatus::Idle: return "idle";
    case RunStatus::Busy: return fmt::format("busy: {}", describe_queues(*this));
  }
  return "unknown";
}

RunError::RunError(RunResult result)
    : Error("device", "run failed: " + result.describe()), result_(std::move(result)) {}

namespace {

using CounterField = std::uint64_t Counters::*;
struct CounterEntry {
  CounterField field;
  std::string_view name;
};
constexpr CounterEntry kCounterTable[Counters::kCount] = {
#define TPUEMU_COUNTER_ENTRY(index, counter_name, doc) {&Counters::counter_name, #counter_name},
    TPUEMU_SPEC_COUNTERS(TPUEMU_COUNTER_ENTRY)
#undef TPUEMU_COUNTER_ENTRY
};

void check_counter_index(std::size_t j) {
  if (j >= Counters::kCount)
    throw std::out_of_range(fmt::format("counter index {} >= {}", j, Counters::kCount));
}

}  // namespace

std::uint64_t& Counters::at(std::size_t j) {
  check_counter_index(j);
  return this->*kCounterTable[j].field;
}

std::uint64_t Counters::at(std::size_t j) const {
  check_counter_index(j);
  return this->*kCounterTable[j].field;
}

std::string_view Counters::name(std::size_t j) {
  check_counter_index(j);
  return kCounterTable[j].name;
}

std::array<std::uint64_t, Counters::kCount> Counters::to_array() const {
  std::array<std::uint64_t, kCount> a{};
  for (std::size_t j = 0; j < kCount; ++j) a[j] = at(j);
  return a;
}

Counters Counters::from_array(std::span<const std::uint64_t> values) {
  Counters c;
  for (std::size_t j = 0; j < kCount && j < values.size(); ++j) c.at(j) = values[j];
  return c;
}

std::vector<std::uint8_t> Device::read_hbm(std::uint64_t addr, std::size_t size) {
  std::vector<std::uint8_t> out(size);
  read_hbm(addr, std::span<std::uint8_t>(out));
  return out;
}

}  // namespace tpuemu
