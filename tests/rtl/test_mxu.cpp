// SPDX-License-Identifier: Apache-2.0
// Unit tests of the weight-stationary systolic MXU (rtl/mxu/mxu_array.sv) at DIM 8 and 16.
//
// Cycle convention: in cycle c the test drives the inputs, reads the (registered) outputs and
// then applies the rising clock edge that ends cycle c. A row "presented in cycle c" is driven
// with in_valid_i in cycle c; its result must be on out_row_o with out_valid_o in cycle
// c + mxu_latency(DIM) and out_valid_o must be low in every cycle that has no such row.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "Vmxu_array_d16.h"
#include "Vmxu_array_d8.h"
#include "verilated.h"

// The two models under test (at global scope so that the test names read MxuTest.X<MxuDim8>).
struct MxuDim8 {
  using M = Vmxu_array_d8;
  static constexpr unsigned kDim = 8;
};
struct MxuDim16 {
  using M = Vmxu_array_d16;
  static constexpr unsigned kDim = 16;
};

namespace {

// Copies n little-endian bytes into a Verilator packed port (QData or VlWide).
template <class Port>
void put_bytes(Port& port, const void* src, std::size_t n) {
  if constexpr (std::is_integral_v<Port>) {
    Port v = 0;
    std::memcpy(&v, src, n);
    port = v;
  } else {
    std::memcpy(port.data(), src, n);
  }
}

template <class Port>
void get_bytes(const Port& port, void* dst, std::size_t n) {
  if constexpr (std::is_integral_v<Port>) {
    std::memcpy(dst, &port, n);
  } else {
    std::memcpy(dst, port.data(), n);
  }
}

template <class Cfg>
class MxuTest : public ::testing::Test {
 protected:
  static constexpr unsigned D = Cfg::kDim;
  // tpu_pkg::mxu_latency(D). The RTL refuses to elaborate when the package disagrees with the
  // array's pipeline, and the tests below check the array's real latency against this value.
  static constexpr unsigned kLatency = 2 * D;

  using Row8 = std::array<std::int8_t, D>;
  using Row32 = std::array<std::int32_t, D>;
  using Mat = std::array<Row8, D>;  // W[k][n]: input lane k, output lane n

  // What the test drives in one cycle.
  struct Op {
    std::optional<std::pair<int, Row8>> wload;  // bank, row
    std::optional<std::pair<int, Row8>> in;     // bank, row
  };

  struct Output {
    std::uint64_t cycle;
    Row32 row;
  };

  MxuTest() : ctx_(std::make_unique<VerilatedContext>()) {
    // A failing assertion sets gotError() instead of aborting, so tests can check it.
    ctx_->fatalOnError(false);
    m_ = std::make_unique<typename Cfg::M>(ctx_.get());
    reset();
  }
  ~MxuTest() override { m_->final(); }

  void reset() {
    m_->clk_i = 0;
    m_->clear_i = 0;
    m_->wload_valid_i = 0;
    m_->in_valid_i = 0;
    m_->rst_ni = 0;
    m_->eval();
    tick();
    tick();
    m_->rst_ni = 1;
    m_->eval();
  }

  void tick() {
    m_->clk_i = 1;
    m_->eval();
    m_->clk_i = 0;
    m_->eval();
    ++cycle_;
  }

  // Runs one cycle: drives op, records the output of this cycle, applies the clock edge.
  void step(const Op& op) {
    m_->wload_valid_i = op.wload.has_value();
    if (op.wload) {
      m_->wload_bank_i = op.wload->first;
      put_bytes(m_->wload_row_i, op.wload->second.data(), D);
    }
    m_->in_valid_i = op.in.has_value();
    if (op.in) {
      m_->in_bank_i = op.in->first;
      put_bytes(m_->in_row_i, op.in->second.data(), D);
    }
    if (op.wload) {  // reference model of the bank: shift the pushed row in at the top
      Mat& w = bank_w_[op.wload->first];
      for (unsigned k = D - 1; k > 0; --k) w[k] = w[k - 1];
      w[0] = op.wload->second;
      if (++pushes_[op.wload->first] >= D) bank_loaded_[op.wload->first] = true;
    }
    m_->eval();
    if (m_->out_valid_o) {
      Output o{cycle_, {}};
      get_bytes(m_->out_row_o, o.row.data(), 4 * D);
      outputs_.push_back(o);
    }
    tick();
  }

  // ---- Reference model (the interface contract) ----------------------------------------------

  static Row32 ref_row(const Row8& in, const Mat& w) {
    Row32 out{};
    for (unsigned n = 0; n < D; ++n) {
      std::uint32_t acc = 0;  // int32 with wrap-around
      for (unsigned k = 0; k < D; ++k) {
        acc += static_cast<std::uint32_t>(static_cast<std::int32_t>(in[k]) * w[k][n]);
      }
      out[n] = static_cast<std::int32_t>(acc);
    }
    return out;
  }

  static std::vector<Row32> ref_gemm(const std::vector<Row8>& x, const Mat& w) {
    std::vector<Row32> out;
    for (const Row8& r : x) out.push_back(ref_row(r, w));
    return out;
  }

  // The ops that load w into bank: W[D-1] is pushed first and W[0] last.
  static std::vector<Op> load_ops(int bank, const Mat& w) {
    std::vector<Op> ops(D);
    for (unsigned i = 0; i < D; ++i) ops[i].wload = {bank, w[D - 1 - i]};
    return ops;
  }

  // Puts rows (all tagged bank) into ops[first], ops[first+1], ... (growing ops as needed).
  static void place_rows(std::vector<Op>& ops, std::size_t first, int bank,
                         const std::vector<Row8>& rows) {
    if (ops.size() < first + rows.size()) ops.resize(first + rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) ops[first + i].in = {bank, rows[i]};
  }

  // Runs ops from the current cycle on and then lets the array drain. Every output is checked
  // against the contract: a push to bank b shifts the row in at the top (row k <- row k-1, see
  // step()), and a row presented in cycle c with bank b gives in . W[b] exactly kLatency cycles
  // later; out_valid_o is low in every other cycle. Returns the output rows in order.
  std::vector<Row32> run(const std::vector<Op>& ops) {
    std::map<std::uint64_t, Row32> expected;  // cycle -> result row
    const std::uint64_t start = cycle_;
    const std::size_t first_output = outputs_.size();
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (op.in) {
        EXPECT_TRUE(bank_loaded_[op.in->first]) << "test bug: bank used before it was loaded";
        expected[cycle_ + kLatency] = ref_row(op.in->second, bank_w_[op.in->first]);
      }
      step(op);
    }
    for (unsigned i = 0; i < kLatency + 4; ++i) step(Op{});

    std::vector<Row32> rows;
    int mismatches = 0;
    for (std::size_t i = first_output; i < outputs_.size(); ++i) {
      const Output& o = outputs_[i];
      auto it = expected.find(o.cycle);
      if (it == expected.end()) {
        if (++mismatches <= 5) ADD_FAILURE() << "unexpected out_valid_o in cycle " << o.cycle - start;
        continue;
      }
      if (o.row != it->second && ++mismatches <= 5) {
        ADD_FAILURE() << "wrong result in cycle " << o.cycle - start << ": " << describe(o.row, it->second);
      }
      expected.erase(it);
      rows.push_back(o.row);
    }
    for (const auto& [c, row] : expected) {
      if (++mismatches <= 5) ADD_FAILURE() << "no out_valid_o in cycle " << c - start;
    }
    EXPECT_EQ(mismatches, 0);
    return rows;
  }

  // Loads `bank` with random weights, presents Dim rows, drops them with drop() while they are
  // in flight: none may leave the array, and rows presented afterwards compute with the weights.
  template <class Drop>
  void check_rows_dropped(int bank, std::uint32_t seed, Drop drop) {
    std::mt19937 rng(seed + D);
    const Mat w = rand_mat(rng);
    std::vector<Op> ops = load_ops(bank, w);
    place_rows(ops, ops.size(), bank, rand_rows(rng, D));
    for (const auto& op : ops) step(op);
    ASSERT_TRUE(outputs_.empty());
    drop();
    for (unsigned i = 0; i < 2 * kLatency; ++i) step({});
    EXPECT_TRUE(outputs_.empty()) << "a dropped row left the array";
    std::vector<Op> again;
    const auto x = rand_rows(rng, D);
    place_rows(again, 0, bank, x);
    EXPECT_EQ(run(again), ref_gemm(x, w));
  }

  static std::string describe(const Row32& got, const Row32& want) {
    std::string s;
    for (unsigned n = 0; n < D; ++n) {
      if (got[n] != want[n]) {
        s += "lane " + std::to_string(n) + " got " + std::to_string(got[n]) + " want " +
             std::to_string(want[n]) + "; ";
      }
    }
    return s;
  }

  // ---- Random data ------------------------------------------------------------------------------

  // Uniform int8 with the extremes -128 and 127 made frequent.
  static std::int8_t rand8(std::mt19937& rng) {
    const std::uint32_t r = rng();
    switch (r % 8) {
      case 0: return -128;
      case 1: return 127;
      default: return static_cast<std::int8_t>(r >> 8);
    }
  }
  static Row8 rand_row(std::mt19937& rng) {
    Row8 r{};
    for (auto& v : r) v = rand8(rng);
    return r;
  }
  static Mat rand_mat(std::mt19937& rng) {
    Mat w{};
    for (auto& r : w) r = rand_row(rng);
    return w;
  }
  static std::vector<Row8> rand_rows(std::mt19937& rng, std::size_t n) {
    std::vector<Row8> rows(n);
    for (auto& r : rows) r = rand_row(rng);
    return rows;
  }
  static Row8 fill_row(std::int8_t v) {
    Row8 r{};
    r.fill(v);
    return r;
  }
  static Mat fill_mat(std::int8_t v) {
    Mat w{};
    w.fill(fill_row(v));
    return w;
  }

  std::uint64_t cycle_ = 0;
  std::vector<Output> outputs_;
  std::array<Mat, 2> bank_w_{};
  std::array<bool, 2> bank_loaded_{};
  std::array<unsigned, 2> pushes_{};
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<typename Cfg::M> m_;
};

using Configs = ::testing::Types<MxuDim8, MxuDim16>;
TYPED_TEST_SUITE(MxuTest, Configs);

// Random int8 matrices (fixed seeds, -128 and 127 frequent) and the extreme corner cases,
// each through both banks, bit-exact against a reference GEMM.
TYPED_TEST(MxuTest, RandomGemmBitExact) {
  using T = TestFixture;
  constexpr unsigned D = T::D;
  std::mt19937 rng(0x5eed0001u + D);
  struct Case {
    typename T::Mat w;
    std::vector<typename T::Row8> x;
  };
  std::vector<Case> cases;
  for (int i = 0; i < 4; ++i) cases.push_back({T::rand_mat(rng), T::rand_rows(rng, 3 * D)});
  // Extremes: the largest positive (-128 * -128 * D), the most negative (-128 * 127 * D) sums,
  // and an identity matrix (result = input, sign-extended).
  cases.push_back({T::fill_mat(-128), {T::fill_row(-128), T::fill_row(127), T::fill_row(0)}});
  cases.push_back({T::fill_mat(127), {T::fill_row(-128), T::fill_row(127), T::fill_row(-1)}});
  typename T::Mat eye{};
  for (unsigned k = 0; k < D; ++k) eye[k][k] = 1;
  cases.push_back({eye, T::rand_rows(rng, D)});

  int bank = 0;
  for (const Case& c : cases) {
    for (int b = 0; b < 2; ++b, bank ^= 1) {
      std::vector<typename T::Op> ops = T::load_ops(bank, c.w);
      T::place_rows(ops, ops.size(), bank, c.x);  // rows start the cycle after the last push
      const auto got = this->run(ops);
      EXPECT_EQ(got, T::ref_gemm(c.x, c.w));
    }
  }
  // Sanity of the extreme case: -128 * -128 * D = 16384 * D in every lane.
  EXPECT_EQ(T::ref_row(T::fill_row(-128), T::fill_mat(-128))[0], 16384 * static_cast<int>(D));
  EXPECT_FALSE(this->ctx_->gotError());
}

// Many rows back to back, one per cycle, each with a random bank: one result per cycle, in order.
TYPED_TEST(MxuTest, BackToBackMixedBanks) {
  using T = TestFixture;
  constexpr unsigned D = T::D;
  std::mt19937 rng(0x5eed0002u + D);
  const typename T::Mat w0 = T::rand_mat(rng), w1 = T::rand_mat(rng);
  std::vector<typename T::Op> ops = T::load_ops(0, w0);
  const auto l1 = T::load_ops(1, w1);
  ops.insert(ops.end(), l1.begin(), l1.end());

  constexpr std::size_t kRows = 2000;
  std::vector<typename T::Row8> x = T::rand_rows(rng, kRows);
  std::vector<int> banks(kRows);
  const std::size_t first = ops.size();
  ops.resize(first + kRows);
  for (std::size_t i = 0; i < kRows; ++i) {
    banks[i] = static_cast<int>(rng() & 1);
    ops[first + i].in = {banks[i], x[i]};
  }
  const std::size_t out_before = this->outputs_.size();
  const auto got = this->run(ops);
  ASSERT_EQ(got.size(), kRows);
  for (std::size_t i = 0; i < kRows; ++i) {
    EXPECT_EQ(got[i], T::ref_row(x[i], banks[i] ? w1 : w0)) << "row " << i;
  }
  // No bubbles: the results leave on consecutive cycles.
  for (std::size_t i = out_before + 1; i < this->outputs_.size(); ++i) {
    EXPECT_EQ(this->outputs_[i].cycle, this->outputs_[i - 1].cycle + 1);
  }
  EXPECT_FALSE(this->ctx_->gotError());
}

// Double buffering: while rows stream on bank 0, bank 1 is loaded (every push cycle also presents
// a bank-0 row); bank-1 rows follow right after the last push without a gap; bank 0 is reloaded
// as soon as the controller's rule allows (mxu_latency cycles after its last row) while bank-1
// rows still stream, and bank-0 rows with the new weights follow. All results must be right.
TYPED_TEST(MxuTest, WeightLoadOverlapsStream) {
  using T = TestFixture;
  constexpr unsigned D = T::D;
  constexpr unsigned L = T::kLatency;
  std::mt19937 rng(0x5eed0003u + D);
  const typename T::Mat w0a = T::rand_mat(rng), w1 = T::rand_mat(rng), w0b = T::rand_mat(rng);

  std::vector<typename T::Op> ops = T::load_ops(0, w0a);
  // Phase A: 2D rows on bank 0; bank 1 is loaded during the second half.
  const std::size_t a0 = ops.size();
  const auto xa = T::rand_rows(rng, 2 * D);
  T::place_rows(ops, a0, 0, xa);
  const std::size_t l1 = a0 + D;
  const auto load1 = T::load_ops(1, w1);
  for (unsigned i = 0; i < D; ++i) ops[l1 + i].wload = load1[i].wload;
  // Phase B: L + 2D rows on bank 1, starting the cycle after the last push of bank 1. Bank 0 is
  // reloaded from L cycles after the last bank-0 row on.
  const std::size_t b0 = l1 + D;
  const auto xb = T::rand_rows(rng, L + 2 * D);
  T::place_rows(ops, b0, 1, xb);
  const std::size_t last_a = a0 + xa.size() - 1;
  const std::size_t l0 = last_a + L;
  const auto load0 = T::load_ops(0, w0b);
  for (unsigned i = 0; i < D; ++i) ops[l0 + i].wload = load0[i].wload;
  // Phase C: rows on bank 0 with the new weights, right after bank-1 rows (and after its load).
  const std::size_t c0 = b0 + xb.size();
  ASSERT_GT(c0, l0 + D - 1);
  const auto xc = T::rand_rows(rng, 2 * D);
  T::place_rows(ops, c0, 0, xc);

  // The schedule really overlaps: each push cycle of a load also presents a row of the other
  // bank, and the stream is gap-free from the first row of phase A to the last of phase C.
  for (std::size_t i = a0; i < ops.size(); ++i) {
    ASSERT_TRUE(ops[i].in.has_value()) << "gap in cycle " << i;
    if (ops[i].wload) {
      ASSERT_NE(ops[i].wload->first, ops[i].in->first) << "cycle " << i;
    }
  }
  std::size_t overlapped_pushes = 0;
  for (const auto& op : ops) overlapped_pushes += op.wload && op.in;
  EXPECT_EQ(overlapped_pushes, 2 * D);

  const auto got = this->run(ops);
  std::vector<typename T::Row32> want = T::ref_gemm(xa, w0a);
  for (const auto& r : T::ref_gemm(xb, w1)) want.push_back(r);
  for (const auto& r : T::ref_gemm(xc, w0b)) want.push_back(r);
  EXPECT_EQ(got, want);
  EXPECT_FALSE(this->ctx_->gotError());
}

// Bubbles in the input stream: random gaps (short ones and ones longer than the latency, which
// let the array drain completely) with random banks; each result exactly on time.
TYPED_TEST(MxuTest, StreamWithBubbles) {
  using T = TestFixture;
  constexpr unsigned D = T::D;
  std::mt19937 rng(0x5eed0004u + D);
  const typename T::Mat w0 = T::rand_mat(rng), w1 = T::rand_mat(rng);
  std::vector<typename T::Op> ops = T::load_ops(0, w0);
  const auto l1 = T::load_ops(1, w1);
  ops.insert(ops.end(), l1.begin(), l1.end());

  std::size_t rows = 0;
  while (rows < 1000) {
    const std::uint32_t r = rng() % 100;
    if (r < 45) {
      ops.push_back({});  // one-cycle bubble
    } else if (r < 48) {
      ops.resize(ops.size() + 1 + rng() % (3 * T::kLatency));  // long gap
    } else {
      typename T::Op op;
      op.in = {static_cast<int>(rng() & 1), T::rand_row(rng)};
      ops.push_back(op);
      ++rows;
    }
  }
  const auto got = this->run(ops);
  EXPECT_EQ(got.size(), rows);
  EXPECT_FALSE(this->ctx_->gotError());
}

// The latency is exactly mxu_latency(DIM) = 2*DIM: out_valid_o is low in every other cycle.
TYPED_TEST(MxuTest, ExactLatency) {
  using T = TestFixture;
  constexpr unsigned D = T::D;
  std::mt19937 rng(0x5eed0005u + D);
  const typename T::Mat w = T::rand_mat(rng);
  for (const auto& op : T::load_ops(0, w)) this->step(op);
  for (int i = 0; i < 5; ++i) this->step({});
  ASSERT_TRUE(this->outputs_.empty());

  const auto x = T::rand_row(rng);
  typename T::Op op;
  op.in = {0, x};
  const std::uint64_t presented = this->cycle_;
  this->step(op);
  for (unsigned i = 0; i < 3 * T::kLatency; ++i) this->step({});
  ASSERT_EQ(this->outputs_.size(), 1u);
  EXPECT_EQ(this->outputs_[0].cycle - presented, T::kLatency);
  EXPECT_EQ(this->outputs_[0].row, T::ref_row(x, w));
}

// Reset drops the rows in flight: no out_valid_o afterwards; the weights are kept (they have no
// reset) and the array works again right away.
TYPED_TEST(MxuTest, ResetFlushesRowsInFlight) {
  this->check_rows_dropped(1, 0x5eed0006u, [this] { this->reset(); });
}

// A soft reset (clear_i for one cycle) does the same: the rows in flight are dropped, the weights
// kept.
TYPED_TEST(MxuTest, ClearDropsRowsInFlightAndKeepsWeights) {
  this->check_rows_dropped(0, 0x5eed0009u, [this] {
    this->m_->clear_i = 1;
    this->step({});
    this->m_->clear_i = 0;
  });
}

// The tightest legal reload: a row presented in cycle t reads its last weight in cycle t+2*DIM-1,
// so bank b may be pushed from that cycle on (the controller waits longer). The result of the
// last old row must still be right, and the new weights apply to the next rows.
TYPED_TEST(MxuTest, ReloadRightAfterLastRead) {
  using T = TestFixture;
  constexpr unsigned D = T::D;
  std::mt19937 rng(0x5eed0007u + D);
  const typename T::Mat wa = T::rand_mat(rng), wb = T::rand_mat(rng);
  std::vector<typename T::Op> ops = T::load_ops(0, wa);
  const std::size_t t = ops.size();
  const auto xa = T::rand_rows(rng, 1);
  T::place_rows(ops, t, 0, xa);
  const std::size_t l = t + 2 * D - 1;
  ops.resize(l);
  for (const auto& op : T::load_ops(0, wb)) ops.push_back(op);
  const auto xb = T::rand_rows(rng, D);
  T::place_rows(ops, ops.size(), 0, xb);

  std::vector<typename T::Row32> want = T::ref_gemm(xa, wa);
  for (const auto& r : T::ref_gemm(xb, wb)) want.push_back(r);
  EXPECT_EQ(this->run(ops), want);
  EXPECT_FALSE(this->ctx_->gotError());
}

// The protocol assertion (simulation only) fires on a push to a bank one cycle too early, while
// a row tagged with that bank still reads its weights.
TYPED_TEST(MxuTest, AssertionCatchesEarlyReload) {
  using T = TestFixture;
  constexpr unsigned D = T::D;
  std::mt19937 rng(0x5eed0008u + D);
  const typename T::Mat w = T::rand_mat(rng);
  std::vector<typename T::Op> ops = T::load_ops(0, w);
  typename T::Op row;
  row.in = {0, T::rand_row(rng)};
  ops.push_back(row);
  for (unsigned i = 0; i < 2 * D - 3; ++i) ops.push_back({});
  for (const auto& op : ops) this->step(op);
  EXPECT_FALSE(this->ctx_->gotError());
  typename T::Op early;
  early.wload = {0, T::rand_row(rng)};
  this->step(early);  // 2*DIM-2 cycles after the row: too early
  EXPECT_TRUE(this->ctx_->gotError());
}

}  // namespace
