// SPDX-License-Identifier: Apache-2.0
// The firmware's command processor: decode a request frame, drive the core through the HAL,
// encode the response. Freestanding: no heap, no exceptions, no library calls.
#include "tpuemu/fw/firmware.h"

namespace {

struct Cmd {
  const fw_hal* hal;
  fw_reader rd;   // request payload
  fw_writer wr;   // response payload (at out + FW_HEADER_SIZE)
  uint64_t detail0;
  uint64_t detail1;
};

int fail(Cmd* c, unsigned status, uint64_t d0, uint64_t d1) {
  c->detail0 = d0;
  c->detail1 = d1;
  return static_cast<int>(status);
}

uint32_t csr_rd(const Cmd* c, uint32_t addr) { return c->hal->csr_read(c->hal->ctx, addr); }
void csr_wr(const Cmd* c, uint32_t addr, uint32_t v) { c->hal->csr_write(c->hal->ctx, addr, v); }
bool hal_failed(const Cmd* c) { return c->hal->failed != nullptr && c->hal->failed(c->hal->ctx) != 0; }

uint64_t read_counter(const Cmd* c, uint32_t j) {
  uint32_t hi = csr_rd(c, FW_CSR_COUNTER_HI(j));
  uint32_t lo = csr_rd(c, FW_CSR_COUNTER_LO(j));
  uint32_t hi2 = csr_rd(c, FW_CSR_COUNTER_HI(j));
  if (hi2 != hi) {  // the low word wrapped between the reads
    lo = csr_rd(c, FW_CSR_COUNTER_LO(j));
    hi = hi2;
  }
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// Request payload must be exactly n bytes.
bool expect_len(Cmd* c, size_t n, int* st) {
  if (c->rd.len != n) {
    *st = fail(c, FW_ST_BAD_PAYLOAD, c->rd.len, n);
    return false;
  }
  return true;
}

int check_range(Cmd* c, uint64_t addr, uint64_t len) {
  const uint64_t cap = c->hal->mem_capacity(c->hal->ctx);
  if (addr > cap || len > cap - addr) return fail(c, FW_ST_OUT_OF_RANGE, addr, len);
  return static_cast<int>(FW_ST_OK);
}

// SMEM words [word, word+count) must exist: the core wraps SMEM_ADDR around at its size, so a
// transfer past the end would silently reach the first words.
int check_smem_range(Cmd* c, uint32_t word, uint32_t count) {
  const uint64_t words = c->hal->smem_words(c->hal->ctx);
  if (word > words || count > words - word) return fail(c, FW_ST_OUT_OF_RANGE, word, count);
  return static_cast<int>(FW_ST_OK);
}

int hal_status(Cmd* c, int st, uint64_t addr, uint64_t len) {
  if (st == static_cast<int>(FW_ST_OK)) return st;
  if (st != static_cast<int>(FW_ST_OUT_OF_RANGE)) st = static_cast<int>(FW_ST_HAL_ERROR);
  return fail(c, static_cast<unsigned>(st), addr, len);
}

uint32_t run_status_of(uint32_t status) {
  if (status & FW_STATUS_ERROR)
    return FW_STATUS_ERROR_CODE(status) == FW_ERR_DEADLOCK ? FW_RUN_DEADLOCK : FW_RUN_ERROR;
  if (status & FW_STATUS_BUSY) return FW_RUN_BUSY;
  if (status & FW_STATUS_DONE) return FW_RUN_DONE;
  return FW_RUN_IDLE;
}

// The 176-byte run record shared by RUN and GET_STATE (docs/protocol.md).
void put_run_record(Cmd* c, uint32_t run_status, uint32_t status, uint64_t cycles,
                    uint64_t waited) {
  fw_wr_u32(&c->wr, run_status);
  fw_wr_u32(&c->wr, FW_STATUS_ERROR_CODE(status));
  fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_ERROR_INFO));
  fw_wr_u32(&c->wr, status);
  fw_wr_u64(&c->wr, cycles);
  fw_wr_u64(&c->wr, waited);
  fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_QUEUE_STATE));
  fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_HEAD_WAIT));
  fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_PC));
  fw_wr_u32(&c->wr, FW_NUM_SEMS);
  for (uint32_t i = 0; i < FW_NUM_SEMS; ++i) fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_SEM(i)));
}

int cmd_ping(Cmd* c) {
  const size_t n = fw_rd_remaining(&c->rd);
  if (n > c->wr.cap) return fail(c, FW_ST_TOO_LARGE, n, c->wr.cap);
  fw_wr_bytes(&c->wr, fw_rd_bytes(&c->rd, n), n);
  return static_cast<int>(FW_ST_OK);
}

int cmd_info(Cmd* c) {
  int st = 0;
  if (!expect_len(c, 0, &st)) return st;
  fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_ID));
  fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_CONFIG));
  fw_wr_u32(&c->wr, FW_VERSION);
  fw_wr_u32(&c->wr, FW_PROTOCOL_VERSION);
  fw_wr_u32(&c->wr, FW_MAX_PAYLOAD);
  fw_wr_u32(&c->wr, FW_MAX_CHUNK);
  fw_wr_u32(&c->wr, FW_NUM_SEMS);
  fw_wr_u32(&c->wr, FW_NUM_COUNTERS);
  fw_wr_u64(&c->wr, c->hal->mem_capacity(c->hal->ctx));
  fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_STATUS));
  fw_wr_u32(&c->wr, FW_RUN_POLL_SLICE);
  fw_wr_u32(&c->wr, c->hal->smem_words(c->hal->ctx));
  return static_cast<int>(FW_ST_OK);
}

// WRITE_MEM and LOAD_PROGRAM: u64 addr, u32 len, len bytes.
int write_mem_common(Cmd* c, uint64_t* addr_out, uint32_t* len_out, const uint8_t** data_out) {
  if (c->rd.len < 12) return fail(c, FW_ST_BAD_PAYLOAD, c->rd.len, 12);
  const uint64_t addr = fw_rd_u64(&c->rd);
  const uint32_t len = fw_rd_u32(&c->rd);
  if (len > FW_MAX_CHUNK) return fail(c, FW_ST_TOO_LARGE, len, FW_MAX_CHUNK);
  if (fw_rd_remaining(&c->rd) != len)
    return fail(c, FW_ST_BAD_PAYLOAD, c->rd.len, 12u + static_cast<uint64_t>(len));
  *addr_out = addr;
  *len_out = len;
  *data_out = fw_rd_bytes(&c->rd, len);
  return static_cast<int>(FW_ST_OK);
}

int cmd_write_mem(Cmd* c) {
  uint64_t addr = 0;
  uint32_t len = 0;
  const uint8_t* data = nullptr;
  int st = write_mem_common(c, &addr, &len, &data);
  if (st != static_cast<int>(FW_ST_OK)) return st;
  st = check_range(c, addr, len);
  if (st != static_cast<int>(FW_ST_OK)) return st;
  if (len > 0) {
    st = hal_status(c, c->hal->mem_write(c->hal->ctx, addr, data, len), addr, len);
    if (st != static_cast<int>(FW_ST_OK)) return st;
  }
  fw_wr_u64(&c->wr, addr);
  fw_wr_u32(&c->wr, len);
  return static_cast<int>(FW_ST_OK);
}

int cmd_read_mem(Cmd* c) {
  int st = 0;
  if (!expect_len(c, 12, &st)) return st;
  const uint64_t addr = fw_rd_u64(&c->rd);
  const uint32_t len = fw_rd_u32(&c->rd);
  if (len > FW_MAX_CHUNK) return fail(c, FW_ST_TOO_LARGE, len, FW_MAX_CHUNK);
  if (c->wr.cap < 12u + static_cast<size_t>(len))
    return fail(c, FW_ST_TOO_LARGE, 12u + static_cast<uint64_t>(len), c->wr.cap);
  st = check_range(c, addr, len);
  if (st != static_cast<int>(FW_ST_OK)) return st;
  fw_wr_u64(&c->wr, addr);
  fw_wr_u32(&c->wr, len);
  uint8_t* dst = fw_wr_reserve(&c->wr, len);
  if (len > 0) return hal_status(c, c->hal->mem_read(c->hal->ctx, addr, dst, len), addr, len);
  return static_cast<int>(FW_ST_OK);
}

int cmd_write_smem(Cmd* c) {
  if (c->rd.len < 8) return fail(c, FW_ST_BAD_PAYLOAD, c->rd.len, 8);
  const uint32_t word = fw_rd_u32(&c->rd);
  const uint32_t count = fw_rd_u32(&c->rd);
  if (count > FW_MAX_CHUNK / 4) return fail(c, FW_ST_TOO_LARGE, count, FW_MAX_CHUNK / 4);
  if (fw_rd_remaining(&c->rd) != 4u * static_cast<size_t>(count))
    return fail(c, FW_ST_BAD_PAYLOAD, c->rd.len, 8u + 4u * static_cast<uint64_t>(count));
  if (static_cast<uint64_t>(word) + count > 0x100000000ull)
    return fail(c, FW_ST_BAD_ARGUMENT, word, count);
  const int st = check_smem_range(c, word, count);
  if (st != static_cast<int>(FW_ST_OK)) return st;
  csr_wr(c, FW_CSR_SMEM_ADDR, word);  // every SMEM_DATA write advances SMEM_ADDR by one
  for (uint32_t i = 0; i < count; ++i) csr_wr(c, FW_CSR_SMEM_DATA, fw_rd_u32(&c->rd));
  fw_wr_u32(&c->wr, word);
  fw_wr_u32(&c->wr, count);
  return static_cast<int>(FW_ST_OK);
}

int cmd_read_smem(Cmd* c) {
  int st = 0;
  if (!expect_len(c, 8, &st)) return st;
  const uint32_t word = fw_rd_u32(&c->rd);
  const uint32_t count = fw_rd_u32(&c->rd);
  if (count > FW_MAX_CHUNK / 4) return fail(c, FW_ST_TOO_LARGE, count, FW_MAX_CHUNK / 4);
  if (c->wr.cap < 8u + 4u * static_cast<size_t>(count))
    return fail(c, FW_ST_TOO_LARGE, 8u + 4u * static_cast<uint64_t>(count), c->wr.cap);
  if (static_cast<uint64_t>(word) + count > 0x100000000ull)
    return fail(c, FW_ST_BAD_ARGUMENT, word, count);
  st = check_smem_range(c, word, count);
  if (st != static_cast<int>(FW_ST_OK)) return st;
  fw_wr_u32(&c->wr, word);
  fw_wr_u32(&c->wr, count);
  for (uint32_t i = 0; i < count; ++i) {
    // Set the address before every read: correct whether or not the read's auto-increment has
    // taken effect yet (it happens on the clock edge after the read).
    csr_wr(c, FW_CSR_SMEM_ADDR, word + i);
    fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_SMEM_DATA));
  }
  return static_cast<int>(FW_ST_OK);
}

int cmd_load_program(Cmd* c) {
  uint64_t addr = 0;
  uint32_t len = 0;
  const uint8_t* data = nullptr;
  int st = write_mem_common(c, &addr, &len, &data);
  if (st != static_cast<int>(FW_ST_OK)) return st;
  if (addr % FW_PROG_ALIGN != 0 || addr > 0xFFFFFFFFull)
    return fail(c, FW_ST_BAD_ARGUMENT, addr, FW_PROG_ALIGN);
  if (len % 32u != 0) return fail(c, FW_ST_BAD_ARGUMENT, len, 32);
  st = check_range(c, addr, len);
  if (st != static_cast<int>(FW_ST_OK)) return st;
  const uint32_t status = csr_rd(c, FW_CSR_STATUS);
  if (status & FW_STATUS_BUSY) return fail(c, FW_ST_BUSY, status, 0);
  if (len > 0) {
    st = hal_status(c, c->hal->mem_write(c->hal->ctx, addr, data, len), addr, len);
    if (st != static_cast<int>(FW_ST_OK)) return st;
  }
  csr_wr(c, FW_CSR_PROG_BASE, static_cast<uint32_t>(addr));
  fw_wr_u64(&c->wr, addr);
  fw_wr_u32(&c->wr, len);
  return static_cast<int>(FW_ST_OK);
}

int cmd_run(Cmd* c) {
  int st = 0;
  if (!expect_len(c, 12, &st)) return st;
  const uint32_t flags = fw_rd_u32(&c->rd);
  const uint64_t max_cycles = fw_rd_u64(&c->rd);
  if (flags & ~static_cast<uint32_t>(FW_RUN_RESUME)) return fail(c, FW_ST_BAD_ARGUMENT, flags, 0);
  if (max_cycles == 0) return fail(c, FW_ST_BAD_ARGUMENT, 0, 1);
  uint32_t status = csr_rd(c, FW_CSR_STATUS);
  const bool resume = (flags & FW_RUN_RESUME) != 0;
  if (!resume && (status & FW_STATUS_BUSY)) return fail(c, FW_ST_BUSY, status, 0);
  // START clears the counters: a fresh run counts from zero, a resumed one from where it was.
  const uint64_t cycles0 = resume ? read_counter(c, FW_COUNTER_CYCLES) : 0;
  if (!resume) csr_wr(c, FW_CSR_CTRL, FW_CTRL_START);

  uint64_t budget_used = 0;  // counts whole slices: bounds the loop even if the HAL returns 0
  uint64_t waited = 0;
  uint32_t run_status = FW_RUN_TIMEOUT;
  for (;;) {
    status = csr_rd(c, FW_CSR_STATUS);
    if (status & FW_STATUS_ERROR) {
      run_status = run_status_of(status);
      break;
    }
    if ((status & FW_STATUS_DONE) && !(status & FW_STATUS_BUSY)) {
      run_status = FW_RUN_DONE;
      break;
    }
    if (resume && !(status & FW_STATUS_BUSY)) {  // nothing to wait for
      run_status = run_status_of(status);
      break;
    }
    if (budget_used >= max_cycles) {
      run_status = FW_RUN_TIMEOUT;
      break;
    }
    uint64_t slice = max_cycles - budget_used;
    if (slice > FW_RUN_POLL_SLICE) slice = FW_RUN_POLL_SLICE;
    waited += c->hal->wait_cycles(c->hal->ctx, slice);
    budget_used += slice;
    if (hal_failed(c)) return fail(c, FW_ST_HAL_ERROR, waited, 0);
  }
  put_run_record(c, run_status, status, read_counter(c, FW_COUNTER_CYCLES) - cycles0, waited);
  return static_cast<int>(FW_ST_OK);
}

int cmd_get_state(Cmd* c) {
  int st = 0;
  if (!expect_len(c, 0, &st)) return st;
  const uint32_t status = csr_rd(c, FW_CSR_STATUS);
  put_run_record(c, run_status_of(status), status, read_counter(c, FW_COUNTER_CYCLES), 0);
  return static_cast<int>(FW_ST_OK);
}

int cmd_read_counters(Cmd* c) {
  int st = 0;
  if (!expect_len(c, 0, &st)) return st;
  fw_wr_u32(&c->wr, FW_NUM_COUNTERS);
  for (uint32_t j = 0; j < FW_NUM_COUNTERS; ++j) fw_wr_u64(&c->wr, read_counter(c, j));
  return static_cast<int>(FW_ST_OK);
}

int cmd_set_sem(Cmd* c) {
  int st = 0;
  if (!expect_len(c, 8, &st)) return st;
  const uint32_t index = fw_rd_u32(&c->rd);
  const uint32_t value = fw_rd_u32(&c->rd);
  if (index >= FW_NUM_SEMS) return fail(c, FW_ST_BAD_ARGUMENT, index, FW_NUM_SEMS);
  if (value > 0xFFFFu) return fail(c, FW_ST_BAD_ARGUMENT, value, 0xFFFFu);
  csr_wr(c, FW_CSR_SEM(index), value);
  fw_wr_u32(&c->wr, index);
  fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_SEM(index)));
  return static_cast<int>(FW_ST_OK);
}

int cmd_reset(Cmd* c) {
  int st = 0;
  if (!expect_len(c, 0, &st)) return st;
  csr_wr(c, FW_CSR_CTRL, FW_CTRL_SOFT_RESET);
  fw_wr_u32(&c->wr, csr_rd(c, FW_CSR_STATUS));
  return static_cast<int>(FW_ST_OK);
}

int dispatch(Cmd* c, uint8_t command) {
  switch (command) {
    case FW_CMD_PING: return cmd_ping(c);
    case FW_CMD_INFO: return cmd_info(c);
    case FW_CMD_WRITE_MEM: return cmd_write_mem(c);
    case FW_CMD_READ_MEM: return cmd_read_mem(c);
    case FW_CMD_WRITE_SMEM: return cmd_write_smem(c);
    case FW_CMD_READ_SMEM: return cmd_read_smem(c);
    case FW_CMD_LOAD_PROGRAM: return cmd_load_program(c);
    case FW_CMD_RUN: return cmd_run(c);
    case FW_CMD_GET_STATE: return cmd_get_state(c);
    case FW_CMD_READ_COUNTERS: return cmd_read_counters(c);
    case FW_CMD_SET_SEM: return cmd_set_sem(c);
    case FW_CMD_RESET: return cmd_reset(c);
    default: return fail(c, FW_ST_UNKNOWN_COMMAND, command, 0);
  }
}

}  // namespace

extern "C" int fw_handle_frame(const struct fw_hal* hal, const uint8_t* in, size_t in_len,
                               uint8_t* out, size_t out_cap, size_t* out_len) {
  if (out_len) *out_len = 0;
  if (out == nullptr || out_cap < FW_HEADER_SIZE + FW_ERROR_PAYLOAD_SIZE) return -1;

  size_t payload_cap = out_cap - FW_HEADER_SIZE;
  if (payload_cap > FW_MAX_PAYLOAD) payload_cap = FW_MAX_PAYLOAD;
  Cmd c{};
  c.hal = hal;
  fw_writer_init(&c.wr, out + FW_HEADER_SIZE, payload_cap);

  fw_frame_header h{};
  const uint8_t* payload = nullptr;
  int st = fw_frame_decode(in, in_len, FW_MAX_PAYLOAD, &h, &payload, &c.detail0, &c.detail1);
  // Echo what the header says even when it is broken, so the host can match the answer.
  const uint8_t command = (in != nullptr && in_len >= FW_HEADER_SIZE) ? in[FW_OFF_COMMAND] : 0;
  const uint32_t seq = (in != nullptr && in_len >= FW_HEADER_SIZE) ? fw_get_u32(in + FW_OFF_SEQ) : 0;
  if (st == static_cast<int>(FW_ST_OK) && h.type != FW_TYPE_REQUEST)
    st = fail(&c, FW_ST_BAD_TYPE, h.type, FW_TYPE_REQUEST);
  if (st == static_cast<int>(FW_ST_OK) &&
      (hal == nullptr || hal->csr_read == nullptr || hal->csr_write == nullptr ||
       hal->mem_read == nullptr || hal->mem_write == nullptr || hal->wait_cycles == nullptr ||
       hal->mem_capacity == nullptr || hal->smem_words == nullptr))
    st = fail(&c, FW_ST_HAL_ERROR, 0, 0);
  if (st == static_cast<int>(FW_ST_OK)) {
    fw_reader_init(&c.rd, payload, h.payload_len);
    st = dispatch(&c, command);
    if (st == static_cast<int>(FW_ST_OK) && hal_failed(&c)) st = fail(&c, FW_ST_HAL_ERROR, 0, 0);
    if (st == static_cast<int>(FW_ST_OK) && c.wr.overflow)
      st = fail(&c, FW_ST_TOO_LARGE, c.wr.pos, c.wr.cap);
  }
  if (st != static_cast<int>(FW_ST_OK)) {
    fw_writer_init(&c.wr, out + FW_HEADER_SIZE, FW_ERROR_PAYLOAD_SIZE);
    fw_wr_u64(&c.wr, c.detail0);
    fw_wr_u64(&c.wr, c.detail1);
  }
  const size_t n = fw_frame_finish(out, FW_TYPE_RESPONSE, command, static_cast<uint8_t>(st), seq,
                                   static_cast<uint32_t>(c.wr.pos));
  if (out_len) *out_len = n;
  return 0;
}
