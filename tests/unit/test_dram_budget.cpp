// The DRAM budget: allocations within it succeed and are counted by owner; going over it is an
// error naming what asked; freeing gives the budget back.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "storage/device/dram_budget.h"

using namespace nvt;

TEST(DramBudget, AllocWithinBudgetCounts) {
  dev::DramBudget b(1 << 20);
  EXPECT_EQ(b.budget(), 1u << 20);
  EXPECT_EQ(b.used(), 0u);
  void* p = b.alloc(4000, "index.t");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << "64 B aligned";
  for (int i = 0; i < 4000; i++) ASSERT_EQ(static_cast<char*>(p)[i], 0) << "zeroed at " << i;
  void* q = b.alloc(100000, "rows.t");
  EXPECT_EQ(b.used(), 104000u);
  EXPECT_EQ(b.left(), (1u << 20) - 104000u);
  auto br = b.breakdown();
  EXPECT_EQ(br["index.t"], 4000u);
  EXPECT_EQ(br["rows.t"], 100000u);
  b.free(p, 4000, "index.t");
  b.free(q, 100000, "rows.t");
}

TEST(DramBudget, OverBudgetThrowsNamingWhatAsked) {
  dev::DramBudget b(1 << 20);
  void* p = b.alloc(800 << 10, "index.usertable");
  try {
    b.alloc(300 << 10, "rows.usertable");
    FAIL() << "allocation over the budget must throw";
  } catch (const dev::BudgetError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("rows.usertable"), std::string::npos) << msg;
  }
  EXPECT_EQ(b.used(), 800u << 10) << "a failed allocation charges nothing";
  EXPECT_THROW(b.charge(300 << 10, "private"), dev::BudgetError);
  EXPECT_EQ(b.used(), 800u << 10);
  b.charge(224 << 10, "private");  // exactly what is left fits
  EXPECT_EQ(b.left(), 0u);
  EXPECT_THROW(b.charge(1, "one more byte"), dev::BudgetError);
  b.free(p, 800 << 10, "index.usertable");
}

TEST(DramBudget, FreeReturnsBudget) {
  dev::DramBudget b(1 << 20);
  void* p = b.alloc(900 << 10, "cache");
  EXPECT_THROW(b.alloc(200 << 10, "other"), dev::BudgetError);
  b.free(p, 900 << 10, "cache");
  EXPECT_EQ(b.used(), 0u);
  EXPECT_EQ(b.breakdown()["cache"], 0u);
  void* q = nullptr;
  EXPECT_NO_THROW(q = b.alloc(200 << 10, "other"));
  EXPECT_NO_THROW(b.free(q, 200 << 10, "other"));
}

TEST(DramBudget, ConcurrentChargesNeverExceedBudget) {
  const uint64_t budget = 1000 * 4096;
  dev::DramBudget b(budget);
  std::vector<std::thread> ts;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; t++)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 1000; i++) {
        try {
          b.charge(4096, "t" + std::to_string(t));
          ok[size_t(t)]++;
        } catch (const dev::BudgetError&) {
        }
      }
    });
  for (auto& t : ts) t.join();
  int total = ok[0] + ok[1] + ok[2] + ok[3];
  EXPECT_LE(uint64_t(total) * 4096, budget);
  EXPECT_EQ(b.used(), uint64_t(total) * 4096);
  EXPECT_GE(total, 990) << "charges failing spuriously while there is room";
}

// The one DRAM rule: data entries together stay under the data cap (database / P) while
// overhead uses the rest of the budget; a cache sized from data_left() never passes the cap.
TEST(DramBudget, DataStaysUnderTheDataCapAndOverheadIsListedApart) {
  dev::DramBudget b(1 << 20, 256 << 10);
  b.charge(600 << 10, "index.t");
  EXPECT_EQ(b.data_left(), 256u << 10) << "overhead does not shrink the data cap while the budget has room";
  void* cache = b.alloc(b.data_left(), "met_cache", dev::DramUse::Data);
  EXPECT_EQ(b.data_used(), 256u << 10);
  EXPECT_EQ(b.data_left(), 0u);
  EXPECT_GT(b.left(), 0u) << "the allowance stays unspent rather than turned into cache";
  try {
    b.charge(1, "more_cache", dev::DramUse::Data);
    FAIL() << "data over the cap must throw";
  } catch (const dev::BudgetError& e) {
    EXPECT_NE(std::string(e.what()).find("more_cache"), std::string::npos) << e.what();
  }
  EXPECT_EQ(b.data_used(), 256u << 10) << "a refused charge leaves nothing behind";
  EXPECT_NO_THROW(b.charge(100 << 10, "log_buffers"));
  auto kinds = b.kinds();
  EXPECT_EQ(kinds["met_cache"], dev::DramUse::Data);
  EXPECT_EQ(kinds["index.t"], dev::DramUse::Overhead);
  EXPECT_THROW(b.charge(1, "index.t", dev::DramUse::Data), std::logic_error) << "one kind per entry";
  b.free(cache, 256 << 10, "met_cache");
  EXPECT_EQ(b.data_used(), 0u);
  b.uncharge(600 << 10, "index.t");
  EXPECT_EQ(b.used(), 100u << 10);
}

TEST(DramBudget, DataLeftIsBoundedByTheWholeBudgetToo) {
  dev::DramBudget b(1 << 20, 1 << 20);
  b.charge(900 << 10, "index.t");
  EXPECT_EQ(b.data_left(), 124u << 10);
}
