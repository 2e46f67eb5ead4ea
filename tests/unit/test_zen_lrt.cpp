// Zen+'s adaptive execution for long-running transactions (papers/zen-plus-journal.txt section
// 4.1.2, storage/engines/zen/lrt.h) on tiny databases: each condition of Figure 6 enters the
// exclusive stage at its threshold and not below it; the privileged transaction works past its
// Met-Cache region in NVM; a long update that would use up the NVM pages completes; a long scan
// reads a consistent snapshot in NVM while transfers run. Plain Zen (the default): a read-only
// transaction's misses fill the Met-Cache, and its exclusive mode reclaims what it held back.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "concurrency_control/cicada.h"
#include "concurrency_control/hekaton.h"
#include "concurrency_control/mvcc.h"
#include "storage/engines/zen/zen.h"
#include "tests/unit/engine_util.h"
#include "tests/unit/zen_db.h"

using namespace nvt;
using namespace nvt::zen;
using nvt::test::DbOptions;
using nvt::test::TempPath;
using nvt::test::balance_of;
using nvt::test::kTuple;
using nvt::test::set_balance;

namespace {

// Zen+ is asked for by name (rundb --zen-plus on); plain Zen is the default.
DbOptions zen_plus() {
  DbOptions o;
  o.zen_plus = true;
  return o;
}

// ZenDb (tests/unit/zen_db.h) loaded with 100 per account, and Zen+'s numbers.
template <class CC>
struct LrtDb : test::ZenDb<CC> {
  using Base = test::ZenDb<CC>;
  using Base::eng;
  LrtDb(const std::string& path, const DbOptions& o) : Base(path, o) { Base::load(100); }
  LrtDb(const std::string& path, const DbOptions& o, bool reopen) : Base(path, o, reopen) {}
  nlohmann::json lrt() { return eng->stats()["lrt"]; }
  uint64_t entries(const char* cond) { return lrt()["entries_by_condition"][cond].template get<uint64_t>(); }
  uint64_t lrt_stat(const char* name) { return lrt()[name].template get<uint64_t>(); }
  uint64_t per_region() {
    return eng->stats()["met_cache"]["accounts"]["entries_per_region"].template get<uint64_t>();
  }
};

// The DRAM budget that leaves each Met-Cache region `entries` entries (at least
// kMinEntriesPerRegion); min_cache_dram: that minimum.
template <class CC>
uint64_t cache_dram(DbOptions o, uint64_t entries) {
  TempPath q("zen-lrt-probe");
  LrtDb<CC> probe(q.str(), o);
  uint64_t rest = probe.dram->used() - probe.eng->stats()["met_cache"]["accounts"]["bytes"].template get<uint64_t>();
  return rest + uint64_t(o.threads) * entries * MetCache<typename CC::Meta>::entry_bytes(kTuple) + 64;
}
template <class CC>
uint64_t min_cache_dram(DbOptions o) { return cache_dram<CC>(o, kMinEntriesPerRegion); }

// Add 1 to accounts [lo, lo + n) in one transaction; false when it aborted.
template <class Mgr>
bool add_range(Mgr& m, uint64_t lo, uint64_t n) {
  m.begin();
  for (uint64_t k = lo; k < lo + n; k++) {
    char* d = m.write(0, k);
    if (!d) { m.abort(); return false; }
    set_balance(d, balance_of(d) + 1);
  }
  return m.commit();
}

// The same, retried as rundb retries: a transaction that becomes privileged after it began
// restarts once, holding G-EX.
template <class Mgr>
bool add_range_retried(Mgr& m, uint64_t lo, uint64_t n) {
  for (int attempt = 0; attempt < 3; attempt++)
    if (add_range(m, lo, n)) return true;
  return false;
}

template <class CC>
class ZenLrtTest : public ::testing::Test {};
using MvMethods = ::testing::Types<cc::Mvcc, cc::Hekaton, cc::Cicada>;
TYPED_TEST_SUITE(ZenLrtTest, MvMethods);

// Condition 1: a read-write transaction that accessed more than alpha of its region becomes
// privileged; one just below does not.
TYPED_TEST(ZenLrtTest, AlphaEntersTheExclusiveStageAboveItsShareOfTheRegion) {
  DbOptions o = zen_plus();
  o.rows = 2000;
  o.lrt_alpha = 0.5;
  o.dram_bytes = min_cache_dram<TypeParam>(o);
  TempPath p("zen-lrt-alpha");
  LrtDb<TypeParam> db(p.str(), o);
  test::CCServices<TypeParam> svc(2);
  const uint64_t limit = db.per_region() / 2;  // alpha x region
  typename LrtDb<TypeParam>::Mgr m(*db.eng, 0);
  ASSERT_TRUE(add_range(m, 0, limit));
  EXPECT_EQ(db.entries("alpha"), 0u) << "alpha x region accesses is not beyond alpha";
  EXPECT_FALSE(add_range(m, 0, limit + 1)) << "privileged after it began: restarts holding G-EX";
  EXPECT_EQ(db.entries("alpha"), 1u);
  ASSERT_TRUE(add_range(m, 0, limit + 1));
  EXPECT_EQ(db.entries("alpha"), 1u) << "the retry runs in the stage it entered";
  EXPECT_EQ(db.entries("beta") + db.entries("gamma") + db.entries("met_cache"), 0u);
  EXPECT_EQ(db.total(), 2000 * 100 + int64_t(2 * limit + 1));
  // Plain Zen: the exclusive mode only.
  o.zen_plus = false;
  TempPath p2("zen-lrt-alpha-off");
  LrtDb<TypeParam> off(p2.str(), o);
  typename LrtDb<TypeParam>::Mgr m2(*off.eng, 0);
  ASSERT_TRUE(add_range_retried(m2, 0, limit + 1));
  EXPECT_FALSE(off.lrt()["adaptive"].template get<bool>());
  EXPECT_EQ(off.lrt_stat("exclusive_entries"), 0u);
}

// Past its region the privileged transaction reads and writes NVM-tuples directly (no borrowed
// entries); what it wrote is read back by others through refills, with its CC history bounded.
TYPED_TEST(ZenLrtTest, PrivilegedTransactionWritesNvmPastItsRegion) {
  DbOptions o = zen_plus();
  o.rows = 2000;
  o.dram_bytes = min_cache_dram<TypeParam>(o);
  TempPath p("zen-lrt-direct");
  LrtDb<TypeParam> db(p.str(), o);
  test::CCServices<TypeParam> svc(2);
  typename LrtDb<TypeParam>::Mgr m0(*db.eng, 0), m1(*db.eng, 1);
  ASSERT_TRUE(add_range_retried(m0, 0, 500));
  EXPECT_EQ(db.entries("alpha"), 1u);
  EXPECT_GE(db.lrt_stat("direct_nvm_writes"), 500 - db.per_region());
  EXPECT_EQ(db.eng->stats()["met_cache"]["accounts"]["evictions"].template get<uint64_t>(), 0u)
      << "no other region was borrowed from";
  EXPECT_GE(db.lrt_stat("stage_reclaimed"), 500u) << "the stage's end reclaims what it superseded";
  for (uint64_t k = 0; k < 500; k += 7) {  // another thread sees every write
    m1.begin();
    const char* d = m1.read(0, k);
    ASSERT_NE(d, nullptr) << k;
    EXPECT_EQ(balance_of(d), 101);
    ASSERT_TRUE(m1.commit());
  }
  ASSERT_TRUE(test::transfer(m1, 300, 302, 1)) << "a refilled tuple the privileged wrote can be written again";
  EXPECT_EQ(db.total(), 2000 * 100 + 500);
  EXPECT_EQ(db.eng->check()["violations"].template get<uint64_t>(), 0u);
}

// Condition 3: tuples accessed by the aborted attempts of one transaction beyond gamma; the
// retry that begins beyond it is privileged from its begin.
TEST(ZenLrt, GammaBoundsTheWastedWorkOfRetries) {
  using CC = cc::Cicada;
  DbOptions o = zen_plus();
  o.rows = 1000;
  o.lrt_gamma = 100;
  TempPath p("zen-lrt-gamma");
  LrtDb<CC> db(p.str(), o);
  test::CCServices<CC> svc(2);
  LrtDb<CC>::Mgr m(*db.eng, 0);
  auto attempt = [&](bool commit) {
    m.begin();
    for (uint64_t k = 0; k < 30; k++) {
      char* d = m.write(0, k);
      if (!d) { m.abort(); return false; }
      set_balance(d, balance_of(d) + 1);
    }
    if (commit) return m.commit();
    m.abort();
    return false;
  };
  for (int i = 0; i < 3; i++) attempt(false);
  ASSERT_TRUE(attempt(true));  // 90 wasted: not beyond gamma
  EXPECT_EQ(db.entries("gamma"), 0u);
  EXPECT_EQ(db.lrt_stat("wasted_tuples"), 90u);
  for (int i = 0; i < 4; i++) attempt(false);  // the commit started the count afresh
  ASSERT_TRUE(attempt(true));  // 120 wasted: privileged from its begin
  EXPECT_EQ(db.entries("gamma"), 1u);
  EXPECT_EQ(db.total(), 1000 * 100 + 60);
}

// Condition 2: a long update holds the reclamation minimum back while transfers fill new NVM
// pages with versions nobody may reclaim; below beta it becomes privileged, completes, and the
// stage's end reclaims every thread's garbage, so the transfers go on.
TEST(ZenLrt, ConcurrentTransfersLetALongUpdateCompleteBelowBeta) {
  using CC = cc::Cicada;
  DbOptions o = zen_plus();
  o.rows = 1000;
  o.lrt_beta = 0.5;  // 5 pages of 26214 slots: 2 loaded, so the third taken triggers it
  TempPath p("zen-lrt-beta");
  LrtDb<CC> db(p.str(), o);
  ASSERT_EQ(db.eng->stats()["nvm_pages"]["total"].get<uint64_t>(), 5u);
  test::CCServices<CC> svc(2);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> moved{0};
  std::thread writer([&] {
    LrtDb<CC>::Mgr m1(*db.eng, 1);
    for (uint64_t i = 0; !stop.load(); i++)
      if (test::transfer(m1, 600 + i % 400, 600 + (i * 7 + 1) % 400, 1)) moved++;
  });
  LrtDb<CC>::Mgr m0(*db.eng, 0);
  bool done = false;
  for (int attempt = 0; attempt < 20 && !done; attempt++) {
    m0.begin();
    done = true;
    for (uint64_t k = 0; k < 600 && done; k++) {
      // Pace the long update by the transfers, until the exclusive stage began.
      while (moved.load() < k * 60 && db.eng->exclusive_sample().first == 0) std::this_thread::yield();
      char* d = m0.write(0, k);
      if (!d) { m0.abort(); done = false; break; }
      set_balance(d, balance_of(d) + 1);
    }
    if (done) done = m0.commit();
  }
  EXPECT_TRUE(done) << "the long update commits";
  uint64_t before = moved.load();
  while (moved.load() < before + 1000) std::this_thread::yield();  // transfers go on
  stop = true;
  writer.join();
  // (stats() reads per-thread counters: after the join. What the stage's end reclaims here
  // depends on timing: the aborting transfers reclaim their own garbage meanwhile.)
  EXPECT_GE(db.entries("beta"), 1u);
  EXPECT_EQ(db.total(), 1000 * 100 + 600);
  EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u);
}

// The end of the stage returns whole empty pages to the page manager: a long update of a table
// that fills exactly one page moves every tuple to a new page, so the loaded one is empty once
// the stage reclaims what the update superseded. It goes to the free-page list (its page-table
// entry cleared), which a fresh engine over the image rebuilds; the next page taken is that one,
// zeroed, and each recovery finds every committed update.
TEST(ZenLrt, TheStageReturnsEmptyPagesToThePageManager) {
  using CC = cc::Cicada;
  DbOptions o = zen_plus();
  o.threads = 1;
  o.rows = kPageBytes / slot_bytes(test::kTuple);  // one loaded page, full
  o.lrt_alpha = 0.1;
  TempPath p("zen-lrt-pages");
  auto pages = [](LrtDb<CC>& db, const char* what) { return db.eng->stats()["nvm_pages"][what].get<uint64_t>(); };
  {
    LrtDb<CC> db(p.str(), o);
    test::CCServices<CC> svc(1);
    ASSERT_EQ(pages(db, "used"), 1u);
    LrtDb<CC>::Mgr m(*db.eng, 0);
    ASSERT_TRUE(add_range_retried(m, 0, o.rows));
    EXPECT_EQ(db.entries("alpha"), 1u);
    EXPECT_EQ(db.lrt_stat("stage_pages_freed"), 1u);
    EXPECT_EQ(pages(db, "used"), 1u) << "the loaded page left, the update's page came";
    EXPECT_EQ(pages(db, "freed"), 1u);
    EXPECT_EQ(db.eng->stats()["nvm_pages"]["per_region"][0].get<uint64_t>(), 1u);
    EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u);
  }
  for (int round = 1; round <= 2; round++) {
    LrtDb<CC> db(p.str(), o, /*reopen=*/true);
    RecoveryReport rep = db.eng->recover(1);
    EXPECT_EQ(rep.rows, o.rows);
    EXPECT_EQ(pages(db, "used"), 1u) << round;
    EXPECT_EQ(pages(db, "freed"), 1u) << "the cleared entry below the high-water mark is free";
    EXPECT_EQ(db.total(), int64_t(o.rows) * (100 + round));
    EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u);
    test::CCServices<CC> svc(1);
    LrtDb<CC>::Mgr m(*db.eng, 0);
    ASSERT_TRUE(add_range_retried(m, 0, o.rows));
    EXPECT_EQ(db.lrt_stat("stage_pages_freed"), 1u);
    EXPECT_EQ(pages(db, "freed"), 1u) << "the freed page was reused (zeroed), the other one freed";
    EXPECT_EQ(pages(db, "used"), 1u);
    EXPECT_EQ(db.total(), int64_t(o.rows) * (101 + round));
  }
}

// A long read-only scan of Zen+ is a snapshot reader below every running writer: a miss is read
// in NVM (no Met-Cache entry) with the CC history bound of a refill, and entries written after
// its bound stay cached (keep()). Transfers run across the whole scanned range, on a Met-Cache
// smaller than the table (tuples leave it and come back), with every condition on: every scan
// that commits sums to the bank's total, and scans overlap transfers and read misses in NVM.
TEST(ZenLrt, ConcurrentTransfersLeaveEveryLongScanSnapshotConsistent) {
  using CC = cc::Cicada;
  DbOptions o = zen_plus();
  o.rows = 2000;
  o.threads = 3;
  o.dram_bytes = cache_dram<CC>(o, 400);  // 3 regions of 400 entries: 1200 of 2000 tuples
  TempPath p("zen-lrt-scan");
  LrtDb<CC> db(p.str(), o);
  ASSERT_LT(db.per_region() * 3, o.rows);
  test::CCServices<CC> svc(3);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> moved{0};
  std::vector<std::thread> writers;
  for (int t = 1; t <= 2; t++)
    writers.emplace_back([&, t] {
      LrtDb<CC>::Mgr m(*db.eng, t);
      for (uint64_t i = 0; !stop.load(); i++)  // any two accounts of the scanned 2000
        if (test::transfer(m, (i * 13 + uint64_t(t)) % 2000, (i * 31 + 7 * uint64_t(t) + 1000) % 2000, 1)) moved++;
    });
  LrtDb<CC>::Mgr m0(*db.eng, 0);
  int scans = 0, overlapped = 0, aborts = 0, wrong = 0;
  while (!wrong && (scans < 40 || (overlapped < 10 && scans < 4000))) {
    uint64_t m_before = moved.load();
    m0.begin(true);
    int64_t sum = 0;
    bool ok = true;
    for (uint64_t k = 0; k < 2000 && ok; k++) {
      const char* d = m0.read(0, k);
      if (!d) { ok = false; break; }
      sum += balance_of(d);
      if (k % 500 == 0) std::this_thread::yield();  // let transfers run inside the scan
    }
    if (!ok || !m0.commit()) {
      if (ok) ADD_FAILURE() << "a snapshot reader's commit failed";
      m0.abort();
      aborts++;
      continue;
    }
    if (sum != 2000 * 100) wrong++;
    scans++;
    overlapped += moved.load() > m_before;
  }
  stop = true;
  for (auto& w : writers) w.join();
  EXPECT_EQ(wrong, 0) << "a scan saw a partial transfer (" << scans << " scans, " << aborts << " aborted)";
  EXPECT_GE(overlapped, 10) << "scans with transfers committed inside them";
  // (A scan may abort: on a cache this small its snapshot can be below the evicted-history bound
  // as it begins, and the retry reads at a read-write timestamp; see docs/engines/zen.md.)
  EXPECT_GT(db.lrt_stat("direct_nvm_reads"), 0u) << "misses were read in NVM";
  EXPECT_GT(db.eng->stats()["met_cache"]["accounts"]["evictions"].get<uint64_t>(), 0u) << "tuples left the Met-Cache";
  EXPECT_EQ(db.total(), 2000 * 100);
  EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u);
}

// Issue 25 item 1: plain Zen, the default, is zen-vldb21's: a read-only transaction is not a
// snapshot reader of the engine's, and its miss fills the Met-Cache (the second read hits);
// Zen+ (asked for by name) reads a snapshot reader's miss in NVM and leaves the Met-Cache as it was.
TEST(ZenLrt, PlainZenReadOnlyMissFillsTheMetCacheWhereZenPlusReadsNvm) {
  using CC = cc::Cicada;
  EXPECT_FALSE(EngineOptions{}.zen_plus) << "Zen+ is asked for by name";
  for (bool plus : {false, true}) {
    DbOptions o;
    if (plus) o.zen_plus = true;
    TempPath p(plus ? "zen-plus-ro" : "zen-ro");
    LrtDb<CC> db(p.str(), o);
    test::CCServices<CC> svc(2);
    LrtDb<CC>::Mgr m(*db.eng, 0);
    EXPECT_EQ(db.eng->snapshot_readers(), plus);
    EXPECT_EQ(db.lrt()["adaptive"].get<bool>(), plus);
    for (int round = 0; round < 2; round++) {
      m.begin(true);
      for (uint64_t k = 0; k < 10; k++) ASSERT_NE(m.read(0, k), nullptr);
      EXPECT_EQ(db.eng->thread(0).snapshot, plus) << (plus ? "Zen+" : "Zen") << ": a snapshot reader";
      ASSERT_TRUE(m.commit());
    }
    auto st = db.eng->stats();
    const uint64_t hits = st["cache_hits"].get<uint64_t>(), nvm = db.lrt_stat("direct_nvm_reads");
    if (plus) {
      EXPECT_EQ(hits, 0u) << "Zen+: misses are read in NVM, not cached";
      EXPECT_EQ(nvm, 20u);
    } else {
      EXPECT_EQ(hits, 10u) << "Zen: the first round's misses filled the Met-Cache";
      EXPECT_EQ(nvm, 0u);
    }
  }
}

// Issue 25 item 4: the stage's counters cover the driver's measured phase only: a stage still on
// when the phase ends counts up to its end, and one entered after it is not counted.
TEST(ZenLrt, StageCountersStopAtTheEndOfTheMeasuredPhase) {
  Lrt l(LrtSettings{true, 0.95, 0.05, 0}, 1000);
  ASSERT_TRUE(l.take(1, LrtCondition::Beta));  // before the phase: not counted
  l.release(1);
  l.begin_measure();
  ASSERT_TRUE(l.take(0, LrtCondition::Alpha));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  l.end_measure();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the privileged runs on
  l.release(0);
  ASSERT_TRUE(l.take(1, LrtCondition::Garbage));  // after the phase: not counted
  l.release(1);
  auto st = l.stats();
  EXPECT_GE(st["exclusive_s"].get<double>(), 0.02);
  EXPECT_LT(st["exclusive_s"].get<double>(), 0.25) << "time after the measured phase counted";
  EXPECT_EQ(st["exclusive_entries"].get<uint64_t>(), 1u);
  EXPECT_EQ(st["entries_by_condition"]["alpha"].get<uint64_t>(), 1u);
  EXPECT_EQ(st["entries_by_condition"]["garbage"].get<uint64_t>(), 0u);
  EXPECT_EQ(l.entries(), 1u);
}

// Issue 25 item 5: plain Zen's exclusive mode (zen-vldb21 section 3.3.4) as designed. Thread 0's
// last commit awaits its fence, so nothing newer may be reclaimed, while thread 1 builds a
// garbage backlog well past the threshold (no transaction runs that the trigger could make the
// long one). Once thread 0 runs one, the trigger makes it the long one; it goes on alone and
// commits (it is not aborted); the end of the stage reclaims the backlog, and the same backlog
// never enters the stage again while both threads run on.
TEST(ZenLrt, PlainZenGarbageTriggerReclaimsItsBacklogAndDoesNotReenter) {
  using CC = cc::Cicada;
  DbOptions o;
  o.zen_plus = false;
  o.rows = 30000;  // heap room for the backlog: 7 pages of 26214 slots
  TempPath p("zen-ex-garbage");
  LrtDb<CC> db(p.str(), o);
  test::CCServices<CC> svc(2);
  LrtDb<CC>::Mgr m0(*db.eng, 0), m1(*db.eng, 1);
  auto pending = [&] { return db.eng->stats()["garbage_pending"].get<uint64_t>(); };
  ASSERT_TRUE(add_range(m0, 0, 1));  // its LP line is flushed, not fenced
  const uint64_t backlog = kGarbageThreshold + kGarbageThreshold / 4;
  for (uint64_t n = 0; n < backlog; n++) ASSERT_TRUE(add_range(m1, 100 + n % 1000, 1));
  EXPECT_GE(pending(), backlog);
  EXPECT_EQ(db.lrt_stat("exclusive_entries"), 0u) << "no running transaction to make the long one";
  m0.begin();
  for (uint64_t k = 0; k < 10; k++) ASSERT_NE(m0.read(0, k), nullptr);
  ASSERT_TRUE(add_range(m1, 100, 1));  // its queue past the threshold: thread 0 gets G-EX
  EXPECT_EQ(db.entries("garbage"), 1u);
  EXPECT_FALSE(add_range(m1, 101, 1)) << "G-EX is thread 0's";
  for (uint64_t k = 10; k < 20; k++) ASSERT_NE(m0.read(0, k), nullptr) << "the long transaction runs on, alone";
  ASSERT_TRUE(m0.commit());
  EXPECT_LT(pending(), 100u) << "the end of the stage reclaimed the backlog";
  EXPECT_GE(db.lrt_stat("stage_reclaimed"), backlog);
  for (uint64_t i = 0; i < 200; i++) {  // a running transaction the trigger could pick each time
    m0.begin();
    ASSERT_NE(m0.read(0, 5000 + i), nullptr);
    ASSERT_TRUE(add_range(m1, 100 + i, 1));
    ASSERT_TRUE(m0.commit());
  }
  EXPECT_EQ(db.lrt_stat("exclusive_entries"), 1u) << "the same backlog entered the stage again";
  EXPECT_EQ(db.total(), int64_t(30000 * 100 + 1 + backlog + 1 + 200));
  EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u);
}

}  // namespace
