// SPDX-License-Identifier: Apache-2.0
// The Device that speaks the wire protocol (docs/protocol.md) over any Transport.
#include <algorithm>
#include <chrono>
#include <cstdint>

#include <fmt/format.h>

#include "tpuemu/device/device.h"
#include "tpuemu/device/protocol.h"
#include "tpuemu/fw/firmware.h"

namespace tpuemu {

namespace {

using protocol::PayloadReader;
using protocol::PayloadWriter;

RunStatus run_status_from_wire(std::uint32_t v) {
  switch (v) {
    case FW_RUN_DONE: return RunStatus::Done;
    case FW_RUN_ERROR: return RunStatus::Error;
    case FW_RUN_DEADLOCK: return RunStatus::Deadlock;
    case FW_RUN_TIMEOUT: return RunStatus::Timeout;
    case FW_RUN_IDLE: return RunStatus::Idle;
    case FW_RUN_BUSY: return RunStatus::Busy;
    default: throw Error("device", fmt::format("protocol: unknown run status {}", v));
  }
}

// One memory of the device as the protocol reaches it: its name, the unit of its addresses, its
// size in them, and how an address is written (hex for bytes).
struct Extent {
  const char* name;
  const char* unit;
  std::uint64_t size;
  bool hex;
};

// The one check of every range a command names, before a frame is sent: [first, first + count)
// must lie inside the memory (count 0 at its end included). The firmware checks again for clients
// that are not this host.
void check_range(std::string_view operation, const Extent& memory, std::uint64_t first,
                 std::uint64_t count) {
  if (first <= memory.size && count <= memory.size - first) return;
  const auto at = [&](std::uint64_t v) {
    return memory.hex ? fmt::format("0x{:x}", v) : fmt::format("{}", v);
  };
  // An end past 2^64 is written as a sum.
  const std::string end = count > UINT64_MAX - first ? fmt::format("{}+{}", at(first), at(count))
                                                     : at(first + count);
  throw Error("device", fmt::format("{}: {} [{}, {}) are outside {} ({} {})", operation,
                                    memory.unit, at(first), end, memory.name, memory.size,
                                    memory.unit));
}

RunResult decode_run_record(std::span<const std::uint8_t> payload, const char* what) {
  PayloadReader rd(payload, what);
  RunResult r;
  r.status = run_status_from_wire(rd.u32());
  r.error_code = rd.u32();
  r.error_pc = rd.u32();
  r.status_raw = rd.u32();
  r.cycles = rd.u64();
  r.waited_cycles = rd.u64();
  const std::uint32_t queue_state = rd.u32();
  const std::uint32_t head_wait = rd.u32();
  r.pc = rd.u32();
  const std::uint32_t nsem = rd.u32();
  for (std::uint32_t i = 0; i < nsem; ++i) {
    const std::uint32_t v = rd.u32();
    if (i < r.semaphores.size()) r.semaphores[i] = v;
  }
  rd.finish();
  r.queues = QueueState::decode(queue_state, head_wait);
  return r;
}

class FirmwareDevice final : public Device {
 public:
  FirmwareDevice(std::unique_ptr<Transport> transport, const FirmwareDeviceOptions& options)
      : transport_(std::move(transport)) {
    if (!transport_) throw Error("device", "no transport");
    fetch_info();
    if (info_.smem_words == 0) info_.smem_words = options.smem_words;
    chunk_ = info_.max_chunk;
    if (options.max_chunk != 0) chunk_ = std::min<std::size_t>(chunk_, options.max_chunk);
    if (chunk_ == 0) throw Error("device", "firmware reports a transfer limit of 0 bytes");
  }

  using Device::read_hbm;

  const DeviceInfo& info() const override { return info_; }

  std::vector<std::uint8_t> ping(std::span<const std::uint8_t> payload) override {
    return call(FW_CMD_PING, payload);
  }

  // Memory transfers are pipelined: up to transport_->max_in_flight() chunk requests are sent
  // before the first answer is read, so a remote transfer costs one round trip, not one per chunk.
  void write_hbm(std::uint64_t addr, std::span<const std::uint8_t> data) override {
    check_range("write_hbm", hbm(), addr, data.size());
    pipelined(data.size(), [&](std::size_t off, std::size_t n) {
      PayloadWriter& req = scratch_;
      req.clear();
      req.u64(addr + off).u32(static_cast<std::uint32_t>(n)).bytes(data.subspan(off, n));
      return send_request(FW_CMD_WRITE_MEM, req.data());
    }, [&](std::size_t off, std::size_t n, std::uint32_t seq) {
      check_write_answer(FW_CMD_WRITE_MEM, addr + off, n, receive_response(FW_CMD_WRITE_MEM, seq));
    });
  }

  void read_hbm(std::uint64_t addr, std::span<std::uint8_t> data) override {
    check_range("read_hbm", hbm(), addr, data.size());
    pipelined(data.size(), [&](std::size_t off, std::size_t n) {
      PayloadWriter req;
      req.u64(addr + off).u32(static_cast<std::uint32_t>(n));
      return send_request(FW_CMD_READ_MEM, req.data());
    }, [&](std::size_t off, std::size_t n, std::uint32_t seq) {
      const auto resp = receive_response_view(FW_CMD_READ_MEM, seq);
      PayloadReader rd(resp, "READ_MEM response");
      const std::uint64_t got_addr = rd.u64();
      const std::uint32_t got_len = rd.u32();
      if (got_addr != addr + off || got_len != n)
        throw Error("device", fmt::format("READ_MEM: asked for {} bytes at 0x{:x}, got {} at 0x{:x}",
                                          n, addr + off, got_len, got_addr));
      const auto bytes = rd.bytes(n);
      rd.finish();
      std::copy(bytes.begin(), bytes.end(), data.begin() + static_cast<std::ptrdiff_t>(off));
    });
  }

  void write_smem(std::uint32_t word, std::span<const std::uint32_t> words) override {
    check_range("write_smem", smem(), word, words.size());
    const std::size_t max_words = chunk_ / 4;
    for (std::size_t off = 0; off < words.size(); off += max_words) {
      const std::size_t n = std::min(max_words, words.size() - off);
      PayloadWriter req;
      req.u32(static_cast<std::uint32_t>(word + off)).u32(static_cast<std::uint32_t>(n));
      for (std::size_t i = 0; i < n; ++i) req.u32(words[off + i]);
      call(FW_CMD_WRITE_SMEM, req.data());
    }
  }

  void read_smem(std::uint32_t word, std::span<std::uint32_t> words) override {
    check_range("read_smem", smem(), word, words.size());
    const std::size_t max_words = chunk_ / 4;
    for (std::size_t off = 0; off < words.size(); off += max_words) {
      const std::size_t n = std::min(max_words, words.size() - off);
      PayloadWriter req;
      req.u32(static_cast<std::uint32_t>(word + off)).u32(static_cast<std::uint32_t>(n));
      const auto resp = call(FW_CMD_READ_SMEM, req.data());
      PayloadReader rd(resp, "READ_SMEM response");
      const std::uint32_t got_word = rd.u32();
      const std::uint32_t got_count = rd.u32();
      if (got_word != word + off || got_count != n)
        throw Error("device", fmt::format("READ_SMEM: asked for {} words at {}, got {} at {}", n,
                                          word + off, got_count, got_word));
      for (std::size_t i = 0; i < n; ++i) words[off + i] = rd.u32();
      rd.finish();
    }
  }

  void load_program(std::uint64_t addr, std::span<const std::uint8_t> program) override {
    if (addr % FW_PROG_ALIGN != 0)
      throw Error("device", fmt::format("load_program: address 0x{:x} is not {}-byte aligned",
                                        addr, FW_PROG_ALIGN));
    if (program.size() % 32 != 0)
      throw Error("device",
                  fmt::format("load_program: {} bytes is not a whole number of 32-byte "
                              "instructions", program.size()));
    check_range("load_program", hbm(), addr, program.size());
    if (program.size() <= chunk_) {
      write_chunk(FW_CMD_LOAD_PROGRAM, addr, program);
    } else {
      write_hbm(addr, program);
      write_chunk(FW_CMD_LOAD_PROGRAM, addr, {});
    }
  }

  void set_semaphore(std::uint32_t index, std::uint32_t value) override {
    check_range("set_semaphore", {"SEM", "semaphores", info_.num_semaphores, false}, index, 1);
    PayloadWriter req;
    req.u32(index).u32(value);
    call(FW_CMD_SET_SEM, req.data());
  }

  RunResult run(const RunOptions& options) override {
    if (options.max_cycles == 0) throw Error("device", "run: max_cycles must be > 0");
    if (options.record_timeline && !transport_->begin_timeline()) {
      throw Error("device", fmt::format("{}: this backend cannot record a timeline", transport_->name()));
    }
    RunResult r;
    try {
      r = run_in_slices(options);
    } catch (...) {
      if (options.record_timeline) {
        try {
          RunResult discard;
          transport_->end_timeline(discard);
        } catch (const Error&) {
          // the run's own error is the one to report (a lost connection fails both)
        }
      }
      throw;
    }
    if (options.record_timeline) transport_->end_timeline(r);
    if (options.throw_on_failure && !r.ok()) throw RunError(std::move(r));
    return r;
  }

  // One RUN of options.max_cycles, or with a stop token RUN ... RESUME slices whose length adapts
  // to about kSliceSeconds of wall time each, the cycles of all of them summed. The length learnt
  // carries over to the next run: a model's launches do not each start small again.
  RunResult run_in_slices(const RunOptions& options) {
    const auto run_once = [&](bool resume, std::uint64_t cycles) {
      PayloadWriter req;
      req.u32(resume ? FW_RUN_RESUME : 0u).u64(cycles);
      return decode_run_record(call(FW_CMD_RUN, req.data()), "RUN response");
    };
    if (!options.stop) return run_once(options.resume, options.max_cycles);
    constexpr double kSliceSeconds = 0.1;
    std::uint64_t& slice = run_slice_cycles_;
    std::uint64_t cycles = 0, waited = 0;
    bool resume = options.resume;
    for (std::uint64_t budget = options.max_cycles;;) {
      options.stop.throw_if_requested("a run on the device");
      const std::uint64_t this_slice = std::min(slice, budget);
      const auto began = std::chrono::steady_clock::now();
      RunResult r = run_once(resume, this_slice);
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      resume = true;
      budget -= this_slice;
      cycles += r.cycles;
      waited += r.waited_cycles;
      if (r.status != RunStatus::Timeout || budget == 0) {
        r.cycles = cycles;
        r.waited_cycles = waited;
        return r;
      }
      if (took < kSliceSeconds / 2 && slice < (std::uint64_t{1} << 40)) slice *= 2;
      if (took > kSliceSeconds * 2 && slice > 1024) slice /= 2;
    }
  }

  RunResult state() override {
    return decode_run_record(call(FW_CMD_GET_STATE, {}), "GET_STATE response");
  }

  Counters counters() override {
    const auto resp = call(FW_CMD_READ_COUNTERS, {});
    PayloadReader rd(resp, "READ_COUNTERS response");
    const std::uint32_t n = rd.u32();
    if (n > 4096) throw Error("device", fmt::format("READ_COUNTERS: implausible count {}", n));
    std::vector<std::uint64_t> values(n);
    for (auto& v : values) v = rd.u64();
    rd.finish();
    return Counters::from_array(values);
  }

  void reset() override { call(FW_CMD_RESET, {}); }
  std::optional<MemoryStatistics> memory_statistics() const override {
    return transport_->memory_statistics();
  }

 private:
  void fetch_info() {
    const auto resp = call(FW_CMD_INFO, {});
    PayloadReader rd(resp, "INFO response");
    info_.backend = transport_->name();
    info_.cycles_approximate = transport_->cycles_approximate();
    info_.id = rd.u32();
    info_.config = rd.u32();
    info_.firmware_version = rd.u32();
    info_.protocol_version = rd.u32();
    info_.max_payload = rd.u32();
    info_.max_chunk = rd.u32();
    info_.num_semaphores = rd.u32();
    info_.num_counters = rd.u32();
    info_.hbm_capacity = rd.u64();
    info_.status = rd.u32();
    info_.poll_slice = rd.u32();
    if (rd.remaining() != 0) info_.smem_words = rd.u32();  // firmware 1.1 on
    rd.finish();
    namespace config = spec::csr::config;
    info_.dim = config::dim.get(info_.config);
    const std::uint32_t log_vmem = config::log2_vmem_rows.get(info_.config);
    const std::uint32_t log_acc = config::log2_acc_rows.get(info_.config);
    info_.vmem_rows = log_vmem < 32 ? (1u << log_vmem) : 0;
    info_.acc_rows = log_acc < 32 ? (1u << log_acc) : 0;
    if (info_.id != FW_ID_VALUE)
      throw Error("device", fmt::format("{}: ID CSR reads 0x{:08x}, expected 0x{:08x} (\"TPUE\")",
                                        info_.backend, info_.id, FW_ID_VALUE));
    // Never send more than either side accepts.
    info_.max_chunk = static_cast<std::uint32_t>(
        std::min<std::size_t>(info_.max_chunk, protocol::kMaxChunk));
  }

  Extent hbm() const { return {"HBM", "bytes", info_.hbm_capacity, true}; }
  Extent smem() const { return {"SMEM", "words", info_.smem_words, false}; }

  void write_chunk(std::uint8_t command, std::uint64_t addr, std::span<const std::uint8_t> data) {
    PayloadWriter& req = scratch_;
    req.clear();
    req.u64(addr).u32(static_cast<std::uint32_t>(data.size())).bytes(data);
    check_write_answer(command, addr, data.size(), call(command, req.data()));
  }

  static void check_write_answer(std::uint8_t command, std::uint64_t addr, std::size_t len,
                                 std::span<const std::uint8_t> resp) {
    PayloadReader rd(resp, protocol::command_name(command) + " response");
    const std::uint64_t got_addr = rd.u64();
    const std::uint32_t got_len = rd.u32();
    rd.finish();
    if (got_addr != addr || got_len != len)
      throw Error("device", fmt::format("{}: wrote {} bytes at 0x{:x}, device says {} at 0x{:x}",
                                        protocol::command_name(command), len, addr, got_len, got_addr));
  }

  // Splits `size` bytes into chunks; send(off, n) sends one chunk's request and returns its seq,
  // receive(off, n, seq) takes its answer, at most max_in_flight() requests ahead. After an error
  // the answers still in flight are drained, so the stream stays in step for the next request.
  template <class Send, class Receive>
  void pipelined(std::size_t size, Send send, Receive receive) {
    struct Pending {
      std::size_t off, n;
      std::uint32_t seq;
    };
    const std::size_t window = std::max<std::size_t>(1, transport_->max_in_flight());
    std::vector<Pending> pending;  // a ring would do; the window is small
    std::size_t next = 0;
    auto drain = [&] {
      for (std::size_t i = 0; i < pending.size(); ++i) {
        try {
          (void)transport_->receive();
        } catch (const Error&) {
          break;  // the transport itself failed: nothing more to drain
        }
      }
      pending.clear();
    };
    while (next < size || !pending.empty()) {
      while (next < size && pending.size() < window) {
        const std::size_t n = std::min(chunk_, size - next);
        pending.push_back({next, n, send(next, n)});
        next += n;
      }
      const Pending head = pending.front();
      pending.erase(pending.begin());
      try {
        receive(head.off, head.n, head.seq);
      } catch (...) {
        drain();
        throw;
      }
    }
  }

  // One request/response round trip; returns the response payload of a successful command.
  std::vector<std::uint8_t> call(std::uint8_t command, std::span<const std::uint8_t> payload) {
    return receive_response(command, send_request(command, payload));
  }

  std::uint32_t send_request(std::uint8_t command, std::span<const std::uint8_t> payload) {
    const std::uint32_t seq = next_seq_++;
    protocol::encode_frame_into(request_, FW_TYPE_REQUEST, command, FW_ST_OK, seq, payload);
    transport_->send(request_);
    return seq;
  }

  std::vector<std::uint8_t> receive_response(std::uint8_t command, std::uint32_t seq) {
    const auto payload = receive_response_view(command, seq);
    return {payload.begin(), payload.end()};
  }

  // The payload of a successful response, valid until the transport's next send or receive.
  std::span<const std::uint8_t> receive_response_view(std::uint8_t command, std::uint32_t seq) {
    const std::span<const std::uint8_t> raw = transport_->receive_view();
    const auto cmd = [command] { return protocol::command_name(command); };
    protocol::FrameView resp;
    try {
      resp = protocol::decode_frame_view(raw);
    } catch (const Error& e) {
      throw Error("device", fmt::format("{}: bad response: {}", cmd(), e.what()));
    }
    if (resp.type != FW_TYPE_RESPONSE || resp.seq != seq || resp.command != command)
      throw Error("device",
                  fmt::format("{}: response does not match the request (type {}, command {}, "
                              "seq {}; expected a response to seq {})",
                              cmd(), resp.type, protocol::command_name(resp.command), resp.seq, seq));
    if (resp.status != FW_ST_OK)
      throw Error("device", fmt::format("{} failed: {}", cmd(),
                                        protocol::describe_status(
                                            resp.status,
                                            protocol::decode_error_detail(resp.payload),
                                            command)));
    return resp.payload;
  }

  std::unique_ptr<Transport> transport_;
  DeviceInfo info_;
  // The slice of a stoppable run (run_in_slices). 4096 cycles take about 0.3 s on the slowest core
  // (DIM 128 on the RTL); faster backends double it each slice until one takes about 0.1 s.
  std::uint64_t run_slice_cycles_ = std::uint64_t{1} << 12;
  std::size_t chunk_ = 0;
  std::uint32_t next_seq_ = 1;
  std::vector<std::uint8_t> request_;
  PayloadWriter scratch_;
};

}  // namespace

std::unique_ptr<Device> make_firmware_device(std::unique_ptr<Transport> transport,
                                             const FirmwareDeviceOptions& options) {
  return std::make_unique<FirmwareDevice>(std::move(transport), options);
}

}  // namespace tpuemu
