// Zen: the NVM-tuple header, Algorithm 2 on hand-built heaps (the paper's Figure 4 included),
// CLOCK replacement and copy-on-write across Met-Cache regions, the reclamation minimum, the
// cache-sizing knapsack, the per-transaction persistence cost (Algorithm 1), exclusive mode for
// long-running transactions, and crash consistency: writes, the engine dropped without stop(),
// recovery in a fresh engine over the reopened image.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
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

using nvt::test::ZenDb;

// Add `delta` to account k in one transaction.
template <class Mgr>
bool add(Mgr& m, uint64_t k, int64_t delta) {
  m.begin();
  char* d = m.write(0, k);
  if (!d) { m.abort(); return false; }
  set_balance(d, balance_of(d) + delta);
  return m.commit();
}

// A heap built by hand: slots of `stride` bytes in 64 B aligned DRAM.
struct Heap {
  static constexpr uint32_t kStride = 32;  // 16 B header + 16 B data
  explicit Heap(size_t n) : n(n), mem(static_cast<char*>(std::aligned_alloc(64, n * kStride))) {
    memset(mem, 0, n * kStride);
  }
  ~Heap() { std::free(mem); }
  NvmTuple* at(size_t i) { return NvmTuple::at(mem + i * kStride); }
  void put(size_t i, bool lp, uint64_t cts, bool deleted, uint64_t id, const char* data) {
    at(i)->id_word = NvmTuple::make_id(0, id, deleted);
    strncpy(at(i)->data(), data, 15);
    at(i)->set_cts(cts, lp);
  }
  template <class F>
  void each(F&& f) {
    for (size_t i = 0; i < n; i++) f(mem + i * kStride);
  }
  size_t n;
  char* mem;
};

}  // namespace

template <class CC>
class ZenTest : public ::testing::Test {};
using CCs = ::testing::Types<cc::NoWait, cc::Silo, cc::Mvcc, cc::Hekaton, cc::Cicada>;
TYPED_TEST_SUITE(ZenTest, CCs);

TEST(ZenNvmTuple, HeaderEncoding) {
  alignas(64) char slot[64] = {};
  NvmTuple* t = NvmTuple::at(slot);
  EXPECT_TRUE(t->empty());
  t->id_word = NvmTuple::make_id(5, 123456789012345ull, false);
  t->set_cts(1000, false);
  EXPECT_EQ(t->cts(), 1000u);
  EXPECT_FALSE(t->lp());
  EXPECT_EQ(t->table(), 5u);
  EXPECT_EQ(t->key(), 123456789012345ull);
  EXPECT_FALSE(t->deleted());
  t->set_cts(1000, true);
  EXPECT_TRUE(t->lp());
  EXPECT_EQ(t->cts(), 1000u);
  uint64_t w0;
  memcpy(&w0, slot, 8);
  EXPECT_EQ(w0, 1000u | (1ull << 63)) << "LP is the most significant bit of the Tx-CTS word";
  t->id_word = NvmTuple::make_id(126, kMaxKey, true);
  EXPECT_TRUE(t->deleted());
  EXPECT_EQ(t->table(), 126u);
  EXPECT_EQ(t->key(), kMaxKey);
  EXPECT_EQ(t->data(), slot + 16);
  EXPECT_THROW(NvmTuple::make_id(0, kMaxKey + 1), std::invalid_argument);
  EXPECT_THROW(NvmTuple::make_id(kMaxTables, 1), std::invalid_argument);
  // Slots are 16 B aligned, so the 16 B header never crosses a 64 B line.
  EXPECT_EQ(slot_bytes(1008), 1024u);
  EXPECT_EQ(slot_bytes(64), 80u);
  for (uint64_t off = 0; off < 4096; off += 16)
    EXPECT_EQ(header_line(slot + off), header_line(slot + off + kHeaderBytes - 1));
}

// The NVM-tuple heap region of the paper's Figure 4, scanned in its order (left column, then
// right): transactions 1000 and 1003 committed (LP on (101,1000) and (102,1003)); 1015 and 1016
// did not.
static void put_figure4(Heap& h) {
  h.put(0, true, 1000, false, 101, "X");
  h.put(1, false, 1000, false, 102, "Y");
  h.put(2, false, 1015, false, 103, "Z");
  h.put(3, false, 1000, true, 104, "V");
  h.put(4, false, 1016, false, 101, "X''");
  h.put(5, false, 1016, false, 102, "Bad Y''");
  h.put(6, false, 1003, false, 101, "X'");
  h.put(7, true, 1003, false, 102, "Y'");
}

TEST(ZenRecovery, Figure4) {
  Heap h(8);
  put_figure4(h);
  for (int round = 0; round < 2; round++) {  // a second run (a crash during recovery): same state
    dev::DramBudget dram(1 << 20);
    HashIndex index(16, dram, "index");
    std::vector<char*> freed;
    auto put_free = [&](NvmTuple* t) { freed.push_back(reinterpret_cast<char*>(t)); };
    ScanResult r = scan_region([&](auto&& f) { h.each(f); },
                               [&](NvmTuple* t) { update_index_gc(index, t, put_free); }, put_free);
    EXPECT_EQ(r.ts_commit, 1003u);
    EXPECT_EQ(r.lp_slot, reinterpret_cast<char*>(h.at(7)));
    EXPECT_EQ(index.lookup(101), nvm_value(reinterpret_cast<char*>(h.at(6)))) << "X' is the latest committed X";
    EXPECT_EQ(index.lookup(102), nvm_value(reinterpret_cast<char*>(h.at(7)))) << "Y' is the latest committed Y";
    EXPECT_EQ(index.lookup(103), HashIndex::kNoValue) << "Z of transaction 1015 never committed";
    // V's committed tombstone is its newest version: the scan keeps it in the index, and
    // Zen::recover() invalidates V's older versions before it drops and frees the tombstone.
    EXPECT_EQ(index.lookup(104), nvm_value(reinterpret_cast<char*>(h.at(3)))) << "V's tombstone";
    std::sort(freed.begin(), freed.end());
    std::vector<char*> want;
    for (int i : {0, 1, 2, 4, 5}) want.push_back(reinterpret_cast<char*>(h.at(size_t(i))));
    EXPECT_EQ(freed, want) << "old versions and the uncommitted slots are free";
    for (int i : {2, 4, 5}) EXPECT_TRUE(h.at(size_t(i))->empty()) << "uncommitted slot " << i << " marked empty";
    for (int i : {0, 1, 3, 6, 7}) EXPECT_FALSE(h.at(size_t(i))->empty()) << "committed tuples untouched";
    if (round == 0) {
      EXPECT_EQ(r.pending, 4u) << "Z, X'', Y'' and X' were uncertain when first met";
      EXPECT_EQ(r.discarded, 3u);
    } else {
      EXPECT_EQ(r.pending, 1u) << "only X' (before the LP of 1003) is uncertain now";
      EXPECT_EQ(r.discarded, 0u);
    }
  }
}

// A transaction's tuples without LP are committed exactly when its LP tuple is in the region,
// wherever the LP tuple lies; a later transaction's LP proves every earlier one of the region.
TEST(ZenRecovery, TuplesWithoutLpAreJudgedByTheLpTuple) {
  Heap h(6);
  h.put(0, false, 7, false, 1, "a7");   // txn 7, LP tuple is later in the scan
  h.put(1, false, 9, false, 2, "b9");   // txn 9, committed: txn 12's LP proves it
  h.put(2, true, 7, false, 3, "c7");
  h.put(3, false, 12, false, 4, "d12");
  h.put(4, true, 12, false, 5, "e12");
  h.put(5, false, 13, false, 1, "a13");  // txn 13's LP never reached NVM
  dev::DramBudget dram(1 << 20);
  HashIndex index(16, dram, "index");
  std::vector<char*> freed;
  auto put_free = [&](NvmTuple* t) { freed.push_back(reinterpret_cast<char*>(t)); };
  ScanResult r = scan_region([&](auto&& f) { h.each(f); },
                             [&](NvmTuple* t) { update_index_gc(index, t, put_free); }, put_free);
  EXPECT_EQ(r.ts_commit, 12u);
  EXPECT_EQ(r.max_cts, 13u);
  EXPECT_EQ(index.lookup(1), nvm_value(reinterpret_cast<char*>(h.at(0))));
  EXPECT_EQ(index.lookup(2), nvm_value(reinterpret_cast<char*>(h.at(1))));
  for (uint64_t k = 3; k <= 5; k++) EXPECT_NE(index.lookup(k), HashIndex::kNoValue);
  EXPECT_TRUE(h.at(5)->empty());
  EXPECT_EQ(freed, std::vector<char*>{reinterpret_cast<char*>(h.at(5))});
}

// A region scanned in shares (here each slot its own share, scanned last to first, as threads
// may take them) decides every tuple as the single pass does: the region's ts-commit is the
// largest of its shares', and what a share could not decide waits for it.
TEST(ZenRecovery, ShareByShareScanDecidesAsOnePass) {
  Heap h(8);
  put_figure4(h);  // Figure 4's region
  dev::DramBudget dram(1 << 20);
  HashIndex index(16, dram, "index");
  std::vector<char*> freed;
  auto put_free = [&](NvmTuple* t) { freed.push_back(reinterpret_cast<char*>(t)); };
  auto index_gc = [&](NvmTuple* t) { update_index_gc(index, t, put_free); };
  std::vector<ScanShare> shares(8);
  for (size_t i = 8; i-- > 0;) scan_share(shares[i], [&](auto&& f) { f(reinterpret_cast<char*>(h.at(i))); }, index_gc, put_free);
  ScanResult m = merge_shares(shares);
  EXPECT_EQ(m.ts_commit, 1003u);
  EXPECT_EQ(m.lp_slot, reinterpret_cast<char*>(h.at(7)));
  for (auto& s : shares) resolve_pending(s, m.ts_commit, index_gc, put_free);
  m = merge_shares(shares);
  EXPECT_EQ(m.committed, 5u);
  EXPECT_EQ(m.discarded, 3u);
  EXPECT_EQ(index.lookup(101), nvm_value(reinterpret_cast<char*>(h.at(6))));
  EXPECT_EQ(index.lookup(102), nvm_value(reinterpret_cast<char*>(h.at(7))));
  EXPECT_EQ(index.lookup(103), HashIndex::kNoValue);
  std::sort(freed.begin(), freed.end());
  std::vector<char*> want;
  for (int i : {0, 1, 2, 4, 5}) want.push_back(reinterpret_cast<char*>(h.at(size_t(i))));
  EXPECT_EQ(freed, want);
}

TEST(ZenMetCache, ClockSkipsActiveAndClockedEntries) {
  using Cache = MetCache<cc::NoWait::Meta>;
  dev::DramBudget dram(1 << 20);
  Cache c(64, 4, 2, dram, "metcache");
  uint64_t hand = 0;
  std::vector<Cache::Entry*> unlinked;
  auto unlink = [&](Cache::Entry* e) { unlinked.push_back(e); };
  // Free entries first, in order.
  for (uint64_t i = 0; i < 4; i++) {
    Cache::Entry* e = c.victim(0, hand, unlink);
    ASSERT_EQ(e, c.at(0, i));
    e->state.store(1 | kClock);  // filled and pinned by its transaction
  }
  EXPECT_EQ(c.region_of(c.at(1, 2)), 1);
  EXPECT_EQ(c.victim(0, hand, unlink), nullptr) << "every entry active: region exhausted";
  Cache::unpin(c.at(0, 2));
  Cache::unpin(c.at(0, 3));
  EXPECT_TRUE(Cache::pin(c.at(0, 3)));  // used again: stays clocked, active
  Cache::Entry* v = c.victim(0, hand, unlink);
  EXPECT_EQ(v, c.at(0, 2)) << "the unpinned entry once its clock bit was cleared";
  EXPECT_EQ(unlinked, std::vector<Cache::Entry*>{c.at(0, 2)}) << "its index entry repointed at NVM";
  EXPECT_EQ(v->state.load(), kFree | 1) << "free and claimed by the caller";
  EXPECT_FALSE(Cache::pin(v)) << "a victim cannot be pinned";
  // A dead copy is reclaimed without touching the index.
  c.at(0, 3)->state.store(kCopy);
  hand = 3;
  EXPECT_EQ(c.victim(0, hand, unlink), c.at(0, 3));
  EXPECT_EQ(unlinked.size(), 1u);
  EXPECT_EQ(c.evictions.load(), 2u);
}

// A lookup that finds its key indexed at an entry nobody will ever fill again (the defect the
// next test guards against) fails naming the key instead of spinning forever.
struct StuckIndex {
  static constexpr uint64_t kNoValue = ~0ull;
  uint64_t v;
  uint64_t lookup(uint64_t) const { return v; }
};
TEST(ZenMetCache, LookupOfAKeyStuckAtAFreeEntryFails) {
  using Cache = MetCache<cc::NoWait::Meta>;
  dev::DramBudget dram(1 << 20);
  Cache c(64, 4, 1, dram, "metcache");
  StuckIndex index{reinterpret_cast<uint64_t>(c.at(0, 1))};
  auto keep = Cache::stuck_after;
  Cache::stuck_after = std::chrono::milliseconds(50);
  uint64_t v = 0;
  try {
    Cache::pin_indexed(index, 42, v);
    ADD_FAILURE() << "pinned a free entry";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("key 42 "), std::string::npos) << e.what();
  }
  Cache::stuck_after = keep;
}

// WBL evicts in other threads' regions: two walkers of one region (its owner and a borrower)
// must never both take an entry. The owner used to take a free entry without a CAS, and an
// eviction left the entry free for it to take while the evicting thread filled it: the entry,
// filled twice, stayed indexed under the first key, and a lookup of that key spun forever.
TEST(ZenMetCache, TwoWalkersOfOneRegionNeverTakeTheSameEntry) {
  using Cache = MetCache<cc::NoWait::Meta>;
  constexpr uint64_t kEntries = 16;
  dev::DramBudget dram(1 << 20);
  Cache c(64, kEntries, 2, dram, "metcache");
  std::atomic<int> holder[kEntries] = {};
  std::atomic<uint64_t> shared_takes{0}, taken{0};
  auto walk = [&](int me) {
    uint64_t hand = 0;
    for (int i = 0; i < 100000; i++) {
      Cache::Entry* e = c.victim(0, hand, [](Cache::Entry*) {});
      if (!e) continue;
      taken++;
      uint64_t slot = uint64_t(reinterpret_cast<char*>(e) - reinterpret_cast<char*>(c.at(0, 0))) / Cache::entry_bytes(64);
      if (holder[slot].exchange(me) != 0) shared_takes++;
      for (int k = 0; k < 20; k++) _mm_pause();
      holder[slot].store(0);
      // Given back free (a lost insert race) or live and unpinned (evicted by a later walk).
      e->state.store(i % 2 ? kFree : kClock, std::memory_order_release);
    }
  };
  std::thread other(walk, 2);
  walk(1);
  other.join();
  EXPECT_GT(taken.load(), 1000u);
  EXPECT_EQ(shared_takes.load(), 0u) << "an entry was taken by both walkers at once";
}

TEST(ZenMetCache, GreedyKnapsackOnFrequencyPerByte) {
  // Three tables: A small and hot, B large, C small and cold. M holds the minimums and some.
  std::vector<CacheDemand> d = {
      {4.0, 100 * 100, 100, 10, 100},      // A: f/S = 4/10000
      {4.0, 10000 * 100, 100, 10, 10000},  // B: f/S = 4/1000000
      {0.1, 100 * 100, 100, 10, 100},      // C: f/S = 0.1/10000
  };
  auto c = plan_cache(100 * (30 + 90 + 90 + 50), d);
  EXPECT_EQ(c[0], 100u) << "the densest table is cached whole first";
  EXPECT_EQ(c[2], 100u) << "then the next densest";
  EXPECT_EQ(c[1], 60u) << "the rest goes to the large table";
  EXPECT_THROW(plan_cache(100 * 29, d), dev::BudgetError);
}

TEST(ZenAllocator, FreedSlotsAreReusedAndTheNewestLpSlotIsHeld) {
  TempPath p("zen-alloc");
  dev::NvmImage nvm(test::device_options(p.str(), 64ull << 20));
  nvm.publish();
  PageManager pm(nvm, 4);
  HeapRegion r(0, pm, {80}, nullptr);
  char* a = r.take(0);
  char* b = r.take(0);
  EXPECT_EQ(pm.used(), 1u);
  EXPECT_EQ(b, a + 80);
  EXPECT_EQ(pm.region_of(a), 0u);
  r.put(0, a);
  EXPECT_EQ(r.take(0), a) << "a freed slot is reused before fresh ones";
  r.set_lp(0, b);
  r.put(0, b);
  EXPECT_NE(r.take(0), b) << "the region's newest LP tuple is not reused...";
  r.set_lp(0, a);
  EXPECT_EQ(r.take(0), b) << "...until a newer LP tuple exists";
  // The page table is durable: a fresh manager over the same image finds the page.
  PageManager again(nvm, 4);
  EXPECT_EQ(again.used(), 1u);
  EXPECT_TRUE(again.owner(0).used);
  EXPECT_EQ(again.owner(0).region, 0u);
}

TYPED_TEST(ZenTest, ReclaimsOnlyBelowTheMinimumActiveTimestamp) {
  using Db = ZenDb<TypeParam>;
  TempPath p("zen-gc");
  DbOptions o;
  o.rows = 200;
  Db db(p.str(), o);
  db.load(100);
  test::CCServices<TypeParam> svc(2);
  typename Db::Mgr m0(*db.eng, 0), m1(*db.eng, 1);
  // Thread 1 starts a transaction and keeps it open: nothing superseded after it began may go.
  m1.begin();
  ASSERT_NE(m1.read(0, 150), nullptr);
  for (int i = 0; i < 40; i++) ASSERT_TRUE(add(m0, uint64_t(i % 10), 1));
  EXPECT_EQ(db.stat("nvm_tuples_reclaimed"), 0u);
  EXPECT_EQ(db.stat("garbage_pending"), 40u);
  ASSERT_TRUE(m1.commit());
  // The minimum moves: the next transactions reclaim (all but the last, not yet fenced, commit's).
  ASSERT_TRUE(add(m0, 11, 1));
  EXPECT_EQ(db.stat("nvm_tuples_reclaimed"), 40u);
  EXPECT_EQ(db.stat("garbage_pending"), 1u);
  // Reclaimed slots are reused: thousands of updates stay within the pages already there.
  uint64_t pages = db.eng->stats()["nvm_pages"]["used"].template get<uint64_t>();
  for (int i = 0; i < 3000; i++) ASSERT_TRUE(add(m0, uint64_t(i % 50), 1));
  EXPECT_EQ(db.eng->stats()["nvm_pages"]["used"].template get<uint64_t>(), pages);
  EXPECT_EQ(db.total(), 200 * 100 + 40 + 1 + 3000);
}

TYPED_TEST(ZenTest, OneFencePerReadWriteCommitNoneReadOnlyOneNvmTupleWritePerWrite) {
  using Db = ZenDb<TypeParam>;
  TempPath p("zen-fence");
  DbOptions o;
  o.rows = 1000;
  Db db(p.str(), o);
  db.load(100);
  test::CCServices<TypeParam> svc(2);
  typename Db::Mgr m(*db.eng, 0);
  ASSERT_TRUE(add(m, 999, 1));  // warm: nothing below is a first-time cost
  for (int writes : {1, 3, 8}) {
    dev::Counters c0 = dev::my_counters();
    m.begin();
    for (int i = 0; i < writes; i++) {
      char* d = m.write(0, uint64_t(10 * writes + i));
      ASSERT_NE(d, nullptr);
      set_balance(d, balance_of(d) + 1);
    }
    ASSERT_NE(m.read(0, 500), nullptr);
    ASSERT_TRUE(m.commit());
    dev::Counters c = dev::my_counters() - c0;
    EXPECT_EQ(c.sfence, 1u) << writes << " writes";
    // 80 B slots span two lines: each tuple's lines flushed once, the LP header line once more
    // after the fence minus the LP tuple's own header line before it.
    EXPECT_EQ(c.clwb, uint64_t(2 * writes)) << writes << " writes: one NVM-tuple write per tuple write";
  }
  dev::Counters c0 = dev::my_counters();
  m.begin();
  for (uint64_t k = 0; k < 20; k++) ASSERT_NE(m.read(0, k * 7), nullptr);
  ASSERT_TRUE(m.commit());
  dev::Counters c = dev::my_counters() - c0;
  EXPECT_EQ(c.sfence, 0u);
  EXPECT_EQ(c.clwb, 0u);
  EXPECT_EQ(c.nvm_write_bytes, 0u) << "reads never write NVM";
}

TYPED_TEST(ZenTest, WriteToAnotherRegionsEntryCopiesItIntoTheWritersRegion) {
  using Db = ZenDb<TypeParam>;
  TempPath p("zen-copy");
  DbOptions o;
  o.rows = 100;
  Db db(p.str(), o);
  db.load(100);
  test::CCServices<TypeParam> svc(2);
  typename Db::Mgr m0(*db.eng, 0), m1(*db.eng, 1);
  // Thread 0 caches account 5 in its region.
  m0.begin();
  ASSERT_NE(m0.read(0, 5), nullptr);
  ASSERT_TRUE(m0.commit());
  // Thread 1 writes it: the entry is copied into region 1 (copy bit on the old one).
  ASSERT_TRUE(add(m1, 5, 7));
  EXPECT_EQ(db.stat("cross_region_copies"), 1u);
  EXPECT_EQ(db.stat("cross_region_in_place"), 0u);
  // Both threads see the new image through the new entry; the old one can no longer be pinned.
  for (auto* m : {&m0, &m1}) {
    m->begin();
    const char* d = m->read(0, 5);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(balance_of(d), 107);
    ASSERT_TRUE(m->commit());
  }
  EXPECT_EQ(db.stat("cache_hits"), 3u) << "the write and both reads hit";
  // Thread 1 owns it now: another write by thread 1 stays in place, no copy.
  ASSERT_TRUE(add(m1, 5, 1));
  EXPECT_EQ(db.stat("cross_region_copies"), 1u);
  // Thread 0 writes it back into its region, with the CC-Meta (its lock) moved along.
  ASSERT_TRUE(add(m0, 5, 1));
  EXPECT_EQ(db.stat("cross_region_copies"), 2u);
  ASSERT_TRUE(add(m1, 5, 1));  // the moved CC-Meta was released: the tuple is writable
  EXPECT_EQ(db.stat("cross_region_copies"), 3u);
  char img[kTuple];
  uint64_t v;
  ASSERT_TRUE(db.eng->read_current(0, 5, img, v));
  EXPECT_EQ(balance_of(img), 110);
}

// Silo lets a reader keep its reference while a writer commits: then the writer must not copy
// (the reader validates against the entry it read), it installs in place and the reader aborts.
TEST(ZenCopy, EntryPinnedByAnotherTransactionIsUpdatedInPlace) {
  using Db = ZenDb<cc::Silo>;
  TempPath p("zen-inplace");
  DbOptions o;
  o.rows = 100;
  Db db(p.str(), o);
  db.load(100);
  test::CCServices<cc::Silo> svc(2);
  Db::Mgr m0(*db.eng, 0), m1(*db.eng, 1);
  m0.begin();
  ASSERT_NE(m0.read(0, 5), nullptr);
  ASSERT_NE(m0.write(0, 6), nullptr);
  ASSERT_TRUE(add(m1, 5, 7));
  EXPECT_EQ(db.stat("cross_region_copies"), 0u);
  EXPECT_EQ(db.stat("cross_region_in_place"), 1u);
  EXPECT_FALSE(m0.commit()) << "the reader's validation sees the write";
  m0.begin();
  const char* d = m0.read(0, 5);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(balance_of(d), 107);
  ASSERT_TRUE(m0.commit());
}

// A transaction that touches more tuples than its Met-Cache region holds is long-running: it
// gets G-EX, waits for the others to abort, and runs alone, borrowing their regions' entries.
TYPED_TEST(ZenTest, LongTransactionRunsInExclusiveMode) {
  using Db = ZenDb<TypeParam>;
  TempPath p("zen-gex");
  DbOptions o;
  o.rows = 2000;
  uint64_t rest;
  {  // The DRAM that is not Met-Cache, to leave the cache at its minimum.
    TempPath q("zen-gex-probe");
    Db probe(q.str(), o);
    rest = probe.dram->used() - probe.eng->stats()["met_cache"]["accounts"]["bytes"].template get<uint64_t>();
  }
  o.dram_bytes = rest + 2 * kMinEntriesPerRegion * MetCache<typename TypeParam::Meta>::entry_bytes(kTuple) + 64;
  Db db(p.str(), o);
  ASSERT_EQ(db.eng->stats()["met_cache"]["accounts"]["entries_per_region"].template get<uint64_t>(),
            kMinEntriesPerRegion);
  db.load(100);
  test::CCServices<TypeParam> svc(2);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> small{0};
  std::thread other([&] {  // short transactions on thread 1 all along
    typename Db::Mgr m1(*db.eng, 1);
    for (uint64_t i = 0; !stop.load(); i++)
      if (add(m1, 1500 + i % 100, 1)) small++;
  });
  while (small.load() < 10) std::this_thread::yield();
  typename Db::Mgr m0(*db.eng, 0);
  bool done = false;
  for (int attempt = 0; attempt < 100 && !done; attempt++) {
    m0.begin();
    done = true;
    for (uint64_t k = 0; k < 100 && done; k++) {
      char* d = m0.write(0, k);
      if (!d) { m0.abort(); done = false; break; }
      set_balance(d, balance_of(d) + 1);
    }
    if (done) done = m0.commit();
  }
  EXPECT_TRUE(done) << "the long transaction commits";
  EXPECT_GE(db.stat("exclusive_mode_entries"), 1u);
  int64_t before = small.load();
  while (small.load() < before + 10) std::this_thread::yield();  // G-EX cleared: others run again
  stop = true;
  other.join();
  EXPECT_EQ(db.total(), 2000 * 100 + 100 + small.load());
}

// Concurrent bank transfers, then the engine dropped without stop() (every store kept, as after
// kill -9) and recovered by a fresh engine over the reopened image: every committed write is
// there, no transfer is half there, the heap accounts for every slot; a second recovery of the
// recovered image gives the same state.
TYPED_TEST(ZenTest, CrashAfterConcurrentTransfersRecoversEveryCommit) {
  using Db = ZenDb<TypeParam>;
  TempPath p("zen-crash");
  DbOptions o;
  o.rows = 3000;
  o.threads = 2;
  // A Met-Cache smaller than the table: evictions, copies. (2 MB left it just the table's size,
  // which evicted only because every copy evicted a live entry, issue 18 item 7.)
  o.dram_bytes = (7ull << 20) / 4;
  // Power-failure mode: only fenced flushes reach the image that recovery sees, so a missing
  // flush or fence loses a commit (a plain drop keeps every store).
  o.power_fail = true;
  const int64_t kStart = 1000;
  std::map<uint64_t, uint64_t> acked;  // key -> newest committed version
  std::map<uint64_t, std::pair<std::string, uint64_t>> before;
  {
    Db db(p.str(), o);
    db.load(kStart);
    test::CCServices<TypeParam> svc(2);
    std::vector<std::map<uint64_t, uint64_t>> mine(2);
    std::vector<std::thread> ts;
    for (int t = 0; t < 2; t++)
      ts.emplace_back([&, t] {
        typename Db::Mgr m(*db.eng, t);
        Rng r(uint64_t(t) + 1);
        Zipf z(o.rows, 0.8);
        for (int i = 0; i < 4000; i++) {
          uint64_t a = z.next(r), b = z.next(r);
          if (a == b) continue;
          if (!test::transfer(m, a, b, int64_t(r.below(50)))) continue;
          for (auto& x : m.accesses())
            if (x.type == AccessType::Write) mine[size_t(t)][x.key] = std::max(mine[size_t(t)][x.key], x.version);
        }
        // A commit is durable at its thread's next fence: acknowledge them all (as rundb does
        // before writing an acknowledgement).
        db.eng->sync(m.engine_thread());
      });
    for (auto& t : ts) t.join();
    for (auto& mm : mine)
      for (auto& [k, v] : mm) acked[k] = std::max(acked[k], v);
    EXPECT_GT(db.stat("cross_region_copies"), 0u);
    EXPECT_GT(db.eng->stats()["met_cache"]["accounts"]["evictions"].template get<uint64_t>(), 0u);
    before = db.snapshot();
    // Power fails now, in a child (the crash ends its process): the persistent image, what
    // hardware could have kept, replaces the image file. Nothing runs here until it is done.
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) dev::g_power_fail->crash("in CrashAfterConcurrentTransfers");
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == dev::kCrashExit) << status;
    test::drop_as_crash(db.eng);  // dropped as a crash drops it: no stop(), no destructor
  }
  DbOptions plain = o;
  plain.power_fail = false;  // the recoveries below end in plain drops
  for (int round = 1; round <= 2; round++) {
    Db db(p.str(), plain, /*reopen=*/true);
    RecoveryReport rep = db.eng->recover(2);
    EXPECT_EQ(rep.rows, o.rows);
    auto inv = db.eng->check();
    EXPECT_EQ(inv["violations"].template get<uint64_t>(), 0u) << inv.dump();
    EXPECT_EQ(db.total(), int64_t(o.rows) * kStart) << "a transfer is all there or not at all";
    auto after = db.snapshot();
    EXPECT_EQ(after, before) << "round " << round << ": the committed state, exactly";
    char img[kTuple];
    for (auto& [k, v] : acked) {
      uint64_t got = 0;
      ASSERT_TRUE(db.eng->read_current(0, k, img, got));
      EXPECT_EQ(got, v) << "key " << k;
    }
    // The recovered database runs transactions; new Tx-CTS are above every recovered one.
    test::CCServices<TypeParam> svc(2);
    typename Db::Mgr m(*db.eng, 0);
    if (round == 2) {
      ASSERT_TRUE(test::transfer(m, 1, 2, 5));
      uint64_t v = 0, newest = 0;
      ASSERT_TRUE(db.eng->read_current(0, 1, img, v));
      for (auto& kv : acked) newest = std::max(newest, kv.second);
      EXPECT_GT(v, newest) << "a new Tx-CTS above every recovered one";
    }
    test::drop_as_crash(db.eng);
  }
}

// A transaction whose persist was cut before its LP: none of its tuples survive recovery.
TYPED_TEST(ZenTest, TransactionWithoutLpIsDiscardedWhole) {
  using Db = ZenDb<TypeParam>;
  TempPath p("zen-nolp");
  DbOptions o;
  o.rows = 100;
  o.threads = 1;
  std::map<uint64_t, std::pair<std::string, uint64_t>> before;
  {
    Db db(p.str(), o);
    db.load(100);
    test::CCServices<TypeParam> svc(1);
    typename Db::Mgr m(*db.eng, 0);
    ASSERT_TRUE(test::transfer(m, 1, 2, 10));
    before = db.snapshot();
    ASSERT_TRUE(test::transfer(m, 3, 4, 10));
    // Undo the LP of the last commit, as if the power failed before its header line was written
    // back: find the tuple carrying LP with the newest Tx-CTS.
    uint64_t v;
    char img[kTuple];
    ASSERT_TRUE(db.eng->read_current(0, 3, img, v));
    uint64_t hits = 0;
    for (char* q = db.nvm->region("zen.heap", 0, dev::RegionKind::Persistent).base;
         hits < 2 && q < db.nvm->region("zen.heap", 0, dev::RegionKind::Persistent).base + kPageBytes; q += slot_bytes(kTuple)) {
      NvmTuple* t = NvmTuple::at(q);
      if (t->cts() == v) { t->set_cts(v, false); hits++; }
    }
    ASSERT_EQ(hits, 2u);
    test::drop_as_crash(db.eng);
  }
  Db db(p.str(), o, true);
  db.eng->recover(1);
  EXPECT_EQ(db.snapshot(), before);
  EXPECT_EQ(db.eng->check()["violations"].template get<uint64_t>(), 0u);
}
