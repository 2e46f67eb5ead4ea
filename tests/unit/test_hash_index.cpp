// The concurrent hash index: lock-free inserts and lookups from several threads, duplicates,
// removal, iteration, its DRAM budget.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

#include "storage/device/dram_budget.h"
#include "storage/hash_index.h"

using namespace nvt;

namespace {
uint64_t value_of(uint64_t key) { return key * 2 + 1; }  // never 0
}  // namespace

TEST(HashIndex, InsertLookupRemove) {
  dev::DramBudget b(64 << 20);
  HashIndex idx(1000, b, "index.t");
  EXPECT_EQ(b.used(), idx.bytes());
  EXPECT_GE(idx.bytes(), 2000u * 16);
  EXPECT_EQ(idx.lookup(5), HashIndex::kNoValue);
  EXPECT_TRUE(idx.insert(5, 500));
  EXPECT_TRUE(idx.insert(0, 7)) << "key 0 is an ordinary key";
  EXPECT_EQ(idx.lookup(5), 500u);
  EXPECT_EQ(idx.lookup(0), 7u);
  EXPECT_FALSE(idx.insert(5, 501)) << "duplicate insert";
  EXPECT_EQ(idx.lookup(5), 500u) << "a duplicate insert leaves the value unchanged";

  EXPECT_TRUE(idx.update(5, 500, 600));
  EXPECT_FALSE(idx.update(5, 500, 700)) << "update with a stale expected value";
  EXPECT_EQ(idx.lookup(5), 600u);
  idx.set(5, 650);
  EXPECT_EQ(idx.lookup(5), 650u);
  EXPECT_THROW(idx.set(6, 1), std::logic_error);

  EXPECT_TRUE(idx.remove(5));
  EXPECT_EQ(idx.lookup(5), HashIndex::kNoValue);
  EXPECT_FALSE(idx.remove(5)) << "already removed";
  EXPECT_FALSE(idx.remove(12345)) << "never present";
  EXPECT_TRUE(idx.insert(5, 900)) << "a removed key may be inserted again";
  EXPECT_EQ(idx.lookup(5), 900u);
  EXPECT_THROW(idx.insert(HashIndex::kEmptyKey, 1), std::invalid_argument);
}

TEST(HashIndex, ChargesAndReturnsItsBudget) {
  dev::DramBudget b(1 << 20);
  {
    HashIndex idx(1000, b, "index.small");
    EXPECT_EQ(b.breakdown()["index.small"], idx.bytes());
  }
  EXPECT_EQ(b.used(), 0u);
  EXPECT_THROW(HashIndex(1 << 20, b, "index.huge"), dev::BudgetError);
}

TEST(HashIndex, FullIndexThrows) {
  dev::DramBudget b(1 << 20);
  HashIndex idx(4, b, "index.tiny");  // 16 slots
  int inserted = 0;
  EXPECT_THROW(
      {
        for (uint64_t k = 1; k < 100; k++) inserted += idx.insert(k, k);
      },
      std::runtime_error);
  EXPECT_EQ(inserted, 16);
  for (uint64_t k = 1; k <= 16; k++) EXPECT_EQ(idx.lookup(k), k);
  EXPECT_EQ(idx.lookup(1000), HashIndex::kNoValue) << "lookup on a full table terminates";
}

TEST(HashIndex, ForEachVisitsAllLiveEntries) {
  dev::DramBudget b(8 << 20);
  HashIndex idx(5000, b, "index.t");
  for (uint64_t k = 0; k < 5000; k++) ASSERT_TRUE(idx.insert(k * 7, value_of(k)));
  for (uint64_t k = 0; k < 5000; k += 10) ASSERT_TRUE(idx.remove(k * 7));
  std::map<uint64_t, uint64_t> seen;
  idx.for_each([&](uint64_t k, uint64_t v) { EXPECT_TRUE(seen.emplace(k, v).second) << k; });
  EXPECT_EQ(seen.size(), 4500u);
  for (uint64_t k = 0; k < 5000; k++) {
    auto it = seen.find(k * 7);
    if (k % 10 == 0) {
      EXPECT_EQ(it, seen.end()) << "removed key " << k * 7 << " visited";
    } else {
      ASSERT_NE(it, seen.end()) << k * 7;
      EXPECT_EQ(it->second, value_of(k));
    }
  }
}

// Four writers insert disjoint key ranges while two readers look keys up: a reader sees either
// nothing or the exact value, and afterwards every key maps to its value.
TEST(HashIndex, ConcurrentInsertAndLookup) {
  const uint64_t per = 50000;
  const int writers = 4, readers = 2;
  dev::DramBudget b(64 << 20);
  HashIndex idx(per * writers, b, "index.t");
  std::atomic<bool> done{false};
  std::atomic<uint64_t> wrong{0}, found{0};
  std::vector<std::thread> ts;
  for (int w = 0; w < writers; w++)
    ts.emplace_back([&, w] {
      for (uint64_t i = 0; i < per; i++) {
        uint64_t k = i * writers + uint64_t(w);  // interleaved, disjoint
        if (!idx.insert(k, value_of(k))) wrong++;
      }
    });
  for (int r = 0; r < readers; r++)
    ts.emplace_back([&, r] {
      uint64_t x = uint64_t(r) + 1;
      while (!done.load()) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t k = (x >> 20) % (per * writers);
        uint64_t v = idx.lookup(k);
        if (v == HashIndex::kNoValue) continue;
        found++;
        if (v != value_of(k)) wrong++;
      }
    });
  for (int w = 0; w < writers; w++) ts[size_t(w)].join();
  done = true;
  for (size_t i = size_t(writers); i < ts.size(); i++) ts[i].join();
  EXPECT_EQ(wrong.load(), 0u);
  for (uint64_t k = 0; k < per * writers; k++) ASSERT_EQ(idx.lookup(k), value_of(k)) << k;
  uint64_t n = 0;
  idx.for_each([&](uint64_t, uint64_t) { n++; });
  EXPECT_EQ(n, per * writers);
  for (uint64_t k = 0; k < 100; k++) EXPECT_FALSE(idx.insert(k, 42)) << "duplicate " << k;
}

// Several threads insert the same keys at once: exactly one insert per key succeeds and the
// index keeps the winner's value. (The window is a few instructions wide: between one inserter
// claiming the key slot and publishing its value, a second one sees the key with no value, as
// if removed, and claims the value too.)
TEST(HashIndex, ConcurrentDuplicateInsertsHaveOneWinner) {
  const uint64_t keys = 20000;
  // 2 threads: each on its own core of a 2-core host. The rounds hit the window by chance; the
  // ASan+UBSan run (as fast as an -O2 one here) does all of them. Under TSan a round takes 15x as
  // long and its race detector sees every unsynchronised pair of accesses in one, so 25 do.
#if defined(__SANITIZE_THREAD__)
  const int threads = 2, rounds = 25;
#else
  const int threads = 2, rounds = 250;
#endif
  uint64_t bad_count = 0, bad_value = 0;
  for (int round = 0; round < rounds && bad_count + bad_value == 0; round++) {
    dev::DramBudget b(8 << 20);
    HashIndex idx(keys, b, "index.t");
    std::vector<std::vector<uint8_t>> won(threads, std::vector<uint8_t>(keys, 0));
    std::atomic<int> ready{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
      ts.emplace_back([&, t] {
        ready++;
        while (ready.load() < threads) {}
        for (uint64_t k = 0; k < keys; k++)
          won[size_t(t)][k] = idx.insert(k, (k << 8) | uint64_t(t + 1));
      });
    for (auto& t : ts) t.join();
    for (uint64_t k = 0; k < keys; k++) {
      int winners = 0, winner = -1;
      for (int t = 0; t < threads; t++)
        if (won[size_t(t)][k]) { winners++; winner = t; }
      if (winners != 1) { bad_count++; continue; }
      if (idx.lookup(k) != ((k << 8) | uint64_t(winner + 1))) bad_value++;
    }
  }
  EXPECT_EQ(bad_count, 0u) << "keys with other than one successful insert";
  EXPECT_EQ(bad_value, 0u) << "keys whose value is not the successful inserter's";
}
