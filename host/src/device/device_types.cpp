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
  switch (error_code) {
    case 0: return "none";
    case 1: return "illegal opcode";
    case 2: return "deadlock";
    case 3: return "address out of range";
    case 4: return "semaphore overflow";
    default: return "unknown error";
  }
}

QueueState QueueState::decode(std::uint32_t queue_state, std::uint32_t head_wait) {
  QueueState q;
  q.raw_queue_state = queue_state;
  q.raw_head_wait = head_wait;
  q.dma.entries = queue_state & 0xFF;
  q.mxu.entries = (queue_state >> 8) & 0xFF;
  q.vector.entries = (queue_state >> 16) & 0xFF;
  q.fetch_stopped = ((queue_state >> 24) & 1) != 0;
  q.dma.head_waits = ((queue_state >> 25) & 1) != 0;
  q.mxu.head_waits = ((queue_state >> 26) & 1) != 0;
  q.vector.head_waits = ((queue_state >> 27) & 1) != 0;
  q.dma.wait_sem = head_wait & 0x1F;
  q.mxu.wait_sem = (head_wait >> 8) & 0x1F;
  q.vector.wait_sem = (head_wait >> 16) & 0x1F;
  q.first_wait_count = (head_wait >> 24) & 0xFF;
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
    {&Counters::cycles, "cycles"},
    {&Counters::mxu_busy, "mxu_busy"},
    {&Counters::mxu_stall_semaphore, "mxu_stall_semaphore"},
    {&Counters::mxu_stall_weights, "mxu_stall_weights"},
    {&Counters::mxu_stall_bank_conflict, "mxu_stall_bank_conflict"},
    {&Counters::dma_stall_semaphore, "dma_stall_semaphore"},
    {&Counters::dma_stall_memory, "dma_stall_memory"},
    {&Counters::vector_stall_semaphore, "vector_stall_semaphore"},
    {&Counters::fetch_stall, "fetch_stall"},
    {&Counters::bytes_hbm_to_vmem, "bytes_hbm_to_vmem"},
    {&Counters::bytes_vmem_to_hbm, "bytes_vmem_to_hbm"},
    {&Counters::bytes_hbm_to_smem, "bytes_hbm_to_smem"},
    {&Counters::bytes_smem_to_hbm, "bytes_smem_to_hbm"},
    {&Counters::bytes_acc_to_hbm, "bytes_acc_to_hbm"},
    {&Counters::vmem_bank_conflicts, "vmem_bank_conflicts"},
    {&Counters::instructions_fetched, "instructions_fetched"},
    {&Counters::mem_read_beats, "mem_read_beats"},
    {&Counters::mem_write_beats, "mem_write_beats"},
    {&Counters::vector_busy, "vector_busy"},
    {&Counters::weight_load_busy, "weight_load_busy"},
    {&Counters::mxu_idle_empty, "mxu_idle_empty"},
    {&Counters::vector_stall_bank_conflict, "vector_stall_bank_conflict"},
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
