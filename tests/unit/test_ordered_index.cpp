// The ordered index: recovery's rebuild on several threads (key ranges, one set each) answers
// every range, forward and reverse, like one set, and inserts and removals after it land in the
// right range.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "storage/device/dram_budget.h"
#include "storage/ordered_index.h"

using namespace nvt;

namespace {
// The reference's answer to range(lo, hi, limit, reverse).
std::vector<uint64_t> expected(const std::set<uint64_t>& ref, uint64_t lo, uint64_t hi, size_t limit, bool reverse) {
  std::vector<uint64_t> out;
  if (lo > hi) return out;
  if (!reverse) {
    for (auto it = ref.lower_bound(lo); it != ref.end() && *it <= hi && out.size() < limit; ++it) out.push_back(*it);
  } else {
    for (auto it = ref.upper_bound(hi); it != ref.begin() && out.size() < limit;) {
      if (*--it < lo) break;
      out.push_back(*it);
    }
  }
  return out;
}
}  // namespace

TEST(OrderedIndex, ConcurrentRebuildAnswersLikeOneSet) {
  for (int threads : {1, 2, 3, 8}) {
    dev::DramBudget b(64 << 20);
    OrderedIndex idx(20000, b, "ordered_index.t");
    idx.insert(999999);  // replaced by the rebuild
    std::mt19937_64 rng{uint64_t(threads)};
    std::vector<uint64_t> keys(20000);
    for (auto& k : keys) k = rng() % 100000;  // duplicates across shares too
    std::set<uint64_t> ref(keys.begin(), keys.end());
    idx.rebuild(threads, [&](int w, int n, auto&& add) {
      for (size_t i = size_t(w); i < keys.size(); i += size_t(n)) add(keys[i]);
    });
    ASSERT_EQ(idx.size(), ref.size()) << threads << " threads";
    std::vector<uint64_t> all;
    idx.for_each([&](uint64_t k) { all.push_back(k); });
    EXPECT_EQ(all, std::vector<uint64_t>(ref.begin(), ref.end()));
    for (int q = 0; q < 2000; q++) {
      uint64_t lo = rng() % 101000, hi = lo + rng() % 30000;
      size_t limit = 1 + rng() % 5000;
      bool reverse = q % 2;
      std::vector<uint64_t> got;
      idx.range(lo, hi, limit, got, reverse);
      ASSERT_EQ(got, expected(ref, lo, hi, limit, reverse)) << "[" << lo << ", " << hi << "] limit " << limit;
    }
    for (int q = 0; q < 5000; q++) {  // inserts and removals after the rebuild
      uint64_t k = rng() % 110000;
      if (q % 3) { EXPECT_EQ(idx.insert(k), ref.insert(k).second); }
      else { EXPECT_EQ(idx.remove(k), ref.erase(k) != 0); }
      EXPECT_EQ(idx.contains(k), ref.count(k) != 0);
    }
    std::vector<uint64_t> got;
    idx.range(0, ~0ull, ~size_t(0), got);
    EXPECT_EQ(got, std::vector<uint64_t>(ref.begin(), ref.end()));
  }
}

TEST(OrderedIndex, RebuildOfNoKeysIsEmpty) {
  dev::DramBudget b(1 << 20);
  OrderedIndex idx(100, b, "ordered_index.t");
  idx.insert(5);
  idx.rebuild(4, [](int, int, auto&&) {});
  EXPECT_EQ(idx.size(), 0u);
  EXPECT_TRUE(idx.insert(7));
  std::vector<uint64_t> got;
  idx.range(0, 10, 10, got, true);
  EXPECT_EQ(got, std::vector<uint64_t>{7});
}
