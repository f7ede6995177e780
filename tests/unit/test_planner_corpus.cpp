// SPDX-License-Identifier: Apache-2.0
// The planner corpus (tests/data/planner, scripts/gen-planner-corpus.py; docs/allocation.md
// "Corpus"): every feasible instance solved at 1.0x its capacity (peak live bytes) and its
// placement re-validated, every infeasible one proved infeasible by the search, each in three row
// orders with the same result and node count. Small random instances checked by exhaustion catch
// an unsound rule; the raise to a supported height must save nodes where heights are unsupported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tpuemu/plan/planner.h"

namespace tpuemu::plan {
namespace {

const std::string kCorpus = std::string(TPUEMU_TEST_DATA_DIR) + "/planner";

struct Entry {
  std::string file;
  std::uint64_t capacity = 0;
  bool feasible = true;
};

std::vector<Entry> corpus() {
  std::ifstream in(kCorpus + "/corpus.json");
  const auto j = nlohmann::json::parse(in);
  std::vector<Entry> out;
  for (const auto& e : j.at("instances")) {
    out.push_back({e.at("file").get<std::string>(), e.at("capacity").get<std::uint64_t>(), e.at("feasible").get<bool>()});
  }
  return out;
}

// The rows in file order, reversed, and shuffled (seed 7).
std::vector<std::vector<PlanBuffer>> three_orders(std::vector<PlanBuffer> rows) {
  std::vector<std::vector<PlanBuffer>> orders{rows};
  std::reverse(rows.begin(), rows.end());
  orders.push_back(rows);
  std::mt19937_64 rng(7);
  std::shuffle(rows.begin(), rows.end(), rng);
  orders.push_back(rows);
  return orders;
}

TEST(PlannerCorpus, EveryInstanceSolvedOrProvedInfeasibleInEveryRowOrder) {
  const auto entries = corpus();
  ASSERT_GE(entries.size(), 20u);
  int feasible = 0, infeasible = 0;
  for (const Entry& e : entries) {
    SCOPED_TRACE(e.file);
    const auto rows = read_plan_csv(kCorpus + "/" + e.file);
    ASSERT_LE(peak_live_bytes(rows), e.capacity);
    std::optional<std::uint64_t> nodes;
    for (const auto& order : three_orders(rows)) {
      const PlanResult r = plan_buffers(order, {.capacity = e.capacity, .timeout_seconds = 20});
      if (e.feasible) {
        ASSERT_EQ(r.status, PlanStatus::Solved) << r.reason;
        EXPECT_EQ(check_placement(order, r.offsets, e.capacity), std::nullopt);
      } else {
        ASSERT_EQ(r.status, PlanStatus::Infeasible) << "an infeasible instance was 'solved': a pruning rule is unsound";
        EXPECT_EQ(r.reason, "exhaustive search found no placement");
      }
      if (nodes) {
        EXPECT_EQ(r.search_nodes, *nodes) << "the row order changed the search";
      }
      nodes = r.search_nodes;
    }
    (e.feasible ? feasible : infeasible)++;
  }
  EXPECT_GE(feasible, 10);
  EXPECT_GE(infeasible, 5);
}

// Every offset a placement needs, tried: the reference for the search's soundness on small
// instances (offsets in multiples of each buffer's alignment, largest buffers first).
bool brute_force_packable(const std::vector<PlanBuffer>& b, std::uint64_t capacity) {
  std::vector<std::size_t> order(b.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return b[x].size > b[y].size; });
  std::vector<std::uint64_t> at(b.size());
  const auto go = [&](auto&& self, std::size_t k) -> bool {
    if (k == order.size()) return true;
    const PlanBuffer& u = b[order[k]];
    for (std::uint64_t off = 0; off + u.size <= capacity; off += u.alignment) {
      bool free = true;
      for (std::size_t q = 0; q < k && free; ++q) {
        const PlanBuffer& v = b[order[q]];
        free = !(u.lower < v.upper && v.lower < u.upper && off < at[order[q]] + v.size && at[order[q]] < off + u.size);
      }
      if (!free) continue;
      at[order[k]] = off;
      if (self(self, k + 1)) return true;
    }
    return false;
  };
  return go(go, 0);
}

// Soundness of the pruning rules: on 400 random small instances at their peak live bytes (and one
// byte more) the search finds a placement exactly when one exists, with every rule on and with
// each rule off in turn (a rule that cut off the only placements of a feasible instance, or let
// an infeasible one through, fails here). And each rule must fire: switched off, the search needs
// more nodes in all.
struct RuleSet {
  const char* name;
  PlanOptions options;
};
const RuleSet kRuleSets[] = {
    {"all", {}},
    {"gcd raises", {.supported_raise = false}},
    {"no dominance", {.dominance = false}},
    {"no staircase", {.staircase = false}},
    {"no portfolio", {.portfolio = false}},
};

TEST(PlannerRules, SearchAgreesWithExhaustionOnSmallInstances) {
  std::mt19937_64 rng(2024);
  int infeasible = 0, searched = 0;
  std::uint64_t nodes[std::size(kRuleSets)] = {};
  for (int k = 0; k < 400; ++k) {
    std::vector<PlanBuffer> b;
    const int n = 4 + static_cast<int>(rng() % 5);
    const int steps = 3 + static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) {
      const std::int64_t lo = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(steps));
      const std::int64_t hi = lo + 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(steps - lo));
      const std::uint64_t alignments[] = {1, 1, 1, 2, 4};
      b.push_back({.id = "b" + std::to_string(i), .lower = lo, .upper = hi, .size = 1 + rng() % 4,
                   .alignment = alignments[rng() % 5]});
    }
    for (const std::uint64_t extra : {0u, 1u}) {
      const std::uint64_t capacity = peak_live_bytes(b) + extra;
      const bool expected = brute_force_packable(b, capacity);
      for (std::size_t rules = 0; rules < std::size(kRuleSets); ++rules) {
        PlanOptions options = kRuleSets[rules].options;
        options.capacity = capacity;
        const PlanResult r = plan_buffers(b, options);
        ASSERT_NE(r.status, PlanStatus::Timeout);
        ASSERT_EQ(r.status == PlanStatus::Solved, expected)
            << "instance " << k << " capacity " << capacity << " (" << kRuleSets[rules].name << "): " << r.reason;
        if (expected) {
          EXPECT_EQ(check_placement(b, r.offsets, capacity), std::nullopt);
        }
        searched += rules == 0 && r.search_nodes > 0;
        nodes[rules] += r.search_nodes;
      }
      infeasible += !expected;
    }
  }
  EXPECT_GT(infeasible, 40) << "too few infeasible instances to catch an unsound rule";
  EXPECT_GT(searched, 100) << "the greedy pass solved nearly everything: the search was not exercised";
  for (std::size_t rules = 0; rules < std::size(kRuleSets); ++rules) {
    std::printf("search nodes (%s): %llu\n", kRuleSets[rules].name, static_cast<unsigned long long>(nodes[rules]));
  }
  // Must fire: each rule, switched off, costs nodes (the portfolio only matters on restarts,
  // which instances this small never reach: equal).
  for (std::size_t rules = 1; rules + 1 < std::size(kRuleSets); ++rules) {
    EXPECT_LT(nodes[0], nodes[rules]) << kRuleSets[rules].name;
  }
}

}  // namespace
}  // namespace tpuemu::plan
