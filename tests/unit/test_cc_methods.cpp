// Every CC method (single- and multi-version) through the real engines (MMDB, Zen, whose
// Met-Cache holds the CC metadata, and WBL): bank transfers under high contention that conserve
// the total and explain every account (test_cc_isolation.cpp: histories, write skew,
// opposite-order writes). Then a few behaviours particular to one method.
#include "tests/unit/cc_methods.h"

using namespace nvt;
using namespace nvt::test;

TYPED_TEST_SUITE(CCMethods, Methods);

// ---------------------------------------------------------------------------------------------
// Bank: 3 threads x 2000 transfers over 10 accounts. Half the transfers read both accounts first
// and then write them (lock upgrades, read-write conflicts), half write directly.

namespace {
template <class Mgr>
bool transfer(Mgr& m, uint64_t a, uint64_t b, int64_t amount, bool read_first) {
  m.begin();
  if (read_first && (!m.read(0, a) || !m.read(0, b))) { m.abort(); return false; }
  char* x = m.write(0, a);
  if (!x) { m.abort(); return false; }
  char* y = m.write(0, b);
  if (!y) { m.abort(); return false; }
  set_balance(x, balance_of(x) - amount);
  set_balance(y, balance_of(y) + amount);
  bump(x);
  bump(y);
  return m.commit();
}
}  // namespace

TYPED_TEST(CCMethods, BankTransfersConserveTotalAndExplainEveryAccount) {
  const uint64_t rows = 10;
  const int threads = 3, per_thread = 2000;
  const int64_t initial = 1000;
  TempPath p("ccm-bank");
  auto db = this->make_db(p, rows, threads, initial);
  typename TestFixture::Services services(threads);
  db->eng->start();

  // Per thread: the net amount its committed transfers moved into each account, and how many
  // committed transfers touched each account.
  std::vector<std::vector<int64_t>> moved(threads, std::vector<int64_t>(rows));
  std::vector<std::vector<uint64_t>> writes(threads, std::vector<uint64_t>(rows));
  std::vector<uint64_t> aborts(threads);
  std::atomic<int> unfinished{0};
  auto deadline = clk::now() + std::chrono::seconds(20);
  within(std::chrono::seconds(25), "bank", [&] {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
      ts.emplace_back([&, t] {
        typename TestFixture::Mgr m(*db->eng, t);
        Rng r(uint64_t(t) * 7 + 1);
        for (int i = 0; i < per_thread; i++) {
          uint64_t a = r.below(rows), b = r.below(rows - 1);
          if (b >= a) b++;
          int64_t amount = int64_t(r.below(50)) + 1;
          bool read_first = r.below(2);
          if (!until_committed([&] { return transfer(m, a, b, amount, read_first); }, deadline,
                               &aborts[t])) {
            unfinished++;
            return;
          }
          moved[t][a] -= amount;
          moved[t][b] += amount;
          writes[t][a]++;
          writes[t][b]++;
        }
      });
    for (auto& t : ts) t.join();
  });
  db->eng->stop();
  ASSERT_EQ(unfinished.load(), 0) << "transfers still retrying at the deadline (livelock)";

  EXPECT_EQ(db->total(), initial * int64_t(rows));
  auto snap = db->snapshot();
  for (uint64_t k = 0; k < rows; k++) {
    int64_t expect = initial;
    uint64_t w = 0;
    for (int t = 0; t < threads; t++) { expect += moved[t][k]; w += writes[t][k]; }
    const char* img = snap.images[k].data();
    EXPECT_EQ(balance_of(img), expect) << "account " << k;
    EXPECT_EQ(counter_of(img), w) << "account " << k << ": committed writes";
    if constexpr (TestFixture::kVersionCountsWrites) {
      EXPECT_EQ(snap.versions[k], 2 * w) << "account " << k << ": engine versions";
    }
  }
  uint64_t total_aborts = 0;
  for (auto a : aborts) total_aborts += a;
  this->RecordProperty("aborts", int(total_aborts));

  // Nothing stays locked: every account can be written again by one transaction.
  typename TestFixture::Mgr m(*db->eng, 0);
  for (uint64_t k = 0; k < rows; k++) EXPECT_TRUE(transfer(m, k, (k + 1) % rows, 0, true)) << k;
}

// ---------------------------------------------------------------------------------------------
// Serializability: record, for every committed transaction, the version of each account it read
// and the version it wrote; the conflict graph over those must be acyclic.

namespace {
template <class CC>
struct Small {
  TempPath p{"ccm-small"};
  std::unique_ptr<nvt::test::TestDb<CC>> db = CCMethods<nvt::test::Pair<mmdb::Mmdb, CC>>::make_db(p, 8, 2, 100);
  nvt::test::CCServices<CC> services{2};
  typename nvt::test::TestDb<CC>::Mgr m0{*db->eng, 0}, m1{*db->eng, 1};
};
}  // namespace

TEST(WaitDie, TimestampKeptAcrossRetriesOnly) {
  cc::WaitDie c;
  cc::WaitDie::Txn x;
  c.begin(x);
  uint64_t ts = x.ts;
  c.abort(x, nullptr, 0);
  c.begin(x);
  EXPECT_EQ(x.ts, ts) << "a retry keeps its age";
  c.finish(x, nullptr, 0);
  c.begin(x);
  EXPECT_GT(x.ts, ts) << "a new transaction is younger";
}

TEST(WaitDie, YoungerDiesOlderWaits) {
  Small<cc::WaitDie> s;
  s.m0.begin();  // older
  s.m1.begin();  // younger
  ASSERT_NE(s.m0.write(0, 1), nullptr);
  EXPECT_EQ(s.m1.read(0, 1), nullptr) << "younger requester dies";
  EXPECT_EQ(s.m1.cause(), AbortCause::ReadConflict);
  s.m1.abort();
  s.m0.abort();

  // The older requester waits for the younger holder and then reads what it committed. The
  // holder commits only once it sees the requester waiting for it (the requester's slot names
  // it in waits_for) or the requester returned without waiting: a holder that simply committed
  // first would let the read pass without any wait.
  s.m0.begin();
  using Reg = cc::WaitDie::Registry;
  std::atomic<bool> held{false}, returned{false};
  std::atomic<uint64_t> seen_waiting{0};
  within(std::chrono::seconds(30), "older requester waits", [&] {
    std::thread young([&] {
      s.m1.begin();
      char* img = s.m1.write(0, 2);
      ASSERT_NE(img, nullptr);
      set_balance(img, 7);
      held = true;
      while (!returned.load()) {
        uint64_t w = 0;
        for (int i = 0; i < cc::lock2pl::kMaxSlots && !w; i++) w = Reg::slot[i].waits_for.load();
        if (w) { seen_waiting = w; break; }
        std::this_thread::yield();
      }
      EXPECT_TRUE(s.m1.commit());
    });
    while (!held) std::this_thread::yield();
    const char* img = s.m0.read(0, 2);
    returned = true;
    young.join();
    ASSERT_NE(img, nullptr) << "older requester died instead of waiting";
    EXPECT_NE(seen_waiting.load(), 0u) << "the older requester read without waiting";
    EXPECT_EQ(balance_of(img), 7);
    EXPECT_TRUE(s.m0.commit());
  });
}

TEST(DlDetect, WaitIsBoundedWithoutDeadlock) {
  Small<cc::DlDetect> s;
  s.m0.begin();
  ASSERT_NE(s.m0.write(0, 1), nullptr);
  s.m1.begin();
  auto t0 = clk::now();
  EXPECT_EQ(s.m1.write(0, 1), nullptr) << "the holder never lets go: the waiter times out";
  EXPECT_GE(clk::now() - t0, cc::DlDetect::timeout);
  EXPECT_EQ(s.m1.cause(), AbortCause::WriteConflict) << "a timeout is no proven deadlock";
  s.m1.abort();
  EXPECT_TRUE(s.m0.commit());
}

// The older transaction closes the cycle (it asks for what the younger, already waiting for it,
// holds): it must keep waiting, and the younger one, the victim, aborts. Before victims were
// chosen the closer aborted too, and two such transactions could abort each other on every retry.
TEST(DlDetect, OnlyTheYoungestOfACycleAborts) {
  using Reg = cc::DlDetect::Registry;
  // A waiter that is not scheduled for 10 ms (ASan on a busy host) would end the other's wait
  // by timeout, which proves nothing about victims: only the cycle may end these waits.
  struct LongTimeout {
    std::chrono::microseconds was = cc::DlDetect::timeout;
    LongTimeout() { cc::DlDetect::timeout = std::chrono::seconds(20); }
    ~LongTimeout() { cc::DlDetect::timeout = was; }
  } long_timeout;
  Small<cc::DlDetect> s;
  s.m0.begin();  // older
  s.m1.begin();  // younger
  ASSERT_NE(s.m0.write(0, 1), nullptr);
  ASSERT_NE(s.m1.write(0, 2), nullptr);
  std::atomic<bool> younger_got{true};
  std::thread young([&] {
    younger_got = s.m1.write(0, 1) != nullptr;  // waits for the older one
    if (!younger_got) s.m1.abort();
  });
  // Close the cycle while the younger one waits (each waiter publishes its edges).
  auto waiting = [] {
    for (int i = 0; i < cc::lock2pl::kMaxSlots; i++)
      if (Reg::slot[i].waits_for.load()) return true;
    return false;
  };
  for (int i = 0; i < 100000 && !waiting(); i++) std::this_thread::yield();
  const char* img = s.m0.write(0, 2);
  young.join();
  EXPECT_FALSE(younger_got.load()) << "the younger transaction got a lock the older one holds";
  ASSERT_NE(img, nullptr) << "the older transaction aborted: a cycle must cost one victim only";
  EXPECT_TRUE(s.m0.commit());
}

TEST(Occ, ReadFailsAgainstWriterThatFinishedDuringItsLife) {
  Small<cc::Occ> s;
  s.m0.begin();
  ASSERT_NE(s.m0.read(0, 3), nullptr);
  ASSERT_NE(s.m0.read(0, 4), nullptr);
  EXPECT_TRUE(transfer(s.m1, 3, 5, 10, false));
  EXPECT_FALSE(s.m0.commit());
  EXPECT_EQ(s.m0.cause(), AbortCause::Validation);
  // Started after that writer finished: nothing to validate against.
  s.m0.begin();
  ASSERT_NE(s.m0.read(0, 3), nullptr);
  EXPECT_TRUE(transfer(s.m1, 6, 7, 10, false)) << "disjoint writer";
  EXPECT_TRUE(s.m0.commit());
}

TEST(TicToc, ReadOnlyCommitsBeforeALaterWriter) {
  Small<cc::TicToc> s;
  // Silo and OCC abort this reader; TicToc orders it before the writer (its timestamp is the
  // wts it read), which is the point of computing timestamps lazily.
  s.m0.begin();
  const char* img = s.m0.read(0, 3);
  ASSERT_NE(img, nullptr);
  EXPECT_TRUE(transfer(s.m1, 3, 4, 10, false));
  EXPECT_EQ(balance_of(img), 100) << "a private copy";
  EXPECT_TRUE(s.m0.commit());
  // A reader that also writes must validate its read at a timestamp after that writer.
  s.m0.begin();
  ASSERT_NE(s.m0.read(0, 5), nullptr);
  ASSERT_NE(s.m0.write(0, 6), nullptr);
  EXPECT_TRUE(transfer(s.m1, 5, 4, 1, false));
  EXPECT_FALSE(s.m0.commit());
  EXPECT_EQ(s.m0.cause(), AbortCause::Validation);
}

TEST(HStore, PartitionsLockedInOrderOrAbort) {
  Small<cc::HStore> s;
  ASSERT_EQ(cc::HStore::partitions, 2u) << "one per thread";
  s.m0.begin();
  ASSERT_NE(s.m0.read(0, 0), nullptr);   // partition 0
  ASSERT_NE(s.m0.write(0, 2), nullptr);  // partition 0 again: already held
  s.m1.begin();
  ASSERT_NE(s.m1.read(0, 1), nullptr);  // partition 1
  EXPECT_EQ(s.m1.read(0, 4), nullptr) << "partition 0 is below one it holds: no wait, abort";
  EXPECT_EQ(s.m1.cause(), AbortCause::ReadConflict);
  s.m1.abort();
  EXPECT_NE(s.m0.read(0, 3), nullptr) << "partition 1 is free again";
  EXPECT_TRUE(s.m0.commit());
}
