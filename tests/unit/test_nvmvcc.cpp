// NVMVCC with its two snapshot-isolation methods, MCSI and PGSI (papers/mcsi.txt): bank
// transfers under contention with audits that must read a consistent snapshot, write skew that
// SI lets commit, first-updater-wins conflicts, snapshot reads that never see a concurrent
// commit, recovery that keeps exactly the committed state, and MCSI's status words.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "concurrency_control/mcsi.h"
#include "concurrency_control/pgsi.h"
#include "storage/engines/nvmvcc/nvmvcc.h"
#include "tests/unit/engine_util.h"

using namespace nvt;
using nvt::test::balance_of;
using nvt::test::set_balance;
using nvt::test::TempPath;

static_assert(nvmvcc::NvMvcc<cc::Mcsi>::supports<cc::Mcsi>);
static_assert(nvmvcc::NvMvcc<cc::Pgsi>::supports<cc::Pgsi>);
static_assert(!nvmvcc::NvMvcc<cc::Mcsi>::supports<cc::NoWait>);
static_assert(!mmdb::Mmdb<cc::NoWait>::supports<cc::Mcsi>);
static_assert(!mmdb::Mmdb<cc::NoWait>::supports<cc::Pgsi>);
static_assert(mmdb::Mmdb<cc::NoWait>::supports<cc::Silo>);

template <class CC>
class Nvmvcc : public ::testing::Test {
 public:
  using Db = nvt::test::TestDb<CC, nvmvcc::NvMvcc>;
  using Mgr = typename Db::Mgr;

  static std::unique_ptr<Db> make_db(const TempPath& p, uint64_t rows, int threads,
                                     int64_t balance, bool reopen = false) {
    nvt::test::DbOptions o;
    o.rows = rows;
    o.threads = threads;
    auto db = std::make_unique<Db>(p.str(), o, reopen);
    if (!reopen) db->load(balance);
    return db;
  }
};
using SiMethods = ::testing::Types<cc::Mcsi, cc::Pgsi>;
TYPED_TEST_SUITE(Nvmvcc, SiMethods);

// 3 transfer threads x 1500 transfers over 10 accounts, while a fourth audits: every audit
// reads one snapshot, so it sees each transfer's two writes both or neither.
TYPED_TEST(Nvmvcc, BankTransfersConserveTotalAndAuditsSeeConsistentSnapshots) {
  const uint64_t rows = 10;
  const int writers = 3, per_thread = 1500;
  const int64_t initial = 1000, total = initial * int64_t(rows);
  TempPath p("nvmvcc-bank");
  auto db = this->make_db(p, rows, writers + 1, initial);
  nvt::test::CCServices<TypeParam> services(writers + 1);
  std::atomic<int> done{0};
  std::atomic<uint64_t> commits{0}, aborts{0}, audits{0}, bad_audits{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < writers; t++)
    ts.emplace_back([&, t] {
      typename TestFixture::Mgr m(*db->eng, t);
      Rng r(uint64_t(t) * 11 + 3);
      for (int i = 0; i < per_thread; i++) {
        uint64_t a = r.below(rows), b = r.below(rows - 1);
        if (b >= a) b++;
        int64_t amount = int64_t(r.below(50)) + 1;
        while (!nvt::test::transfer(m, a, b, amount)) aborts++;
        commits++;
      }
      done++;
    });
  ts.emplace_back([&] {
    typename TestFixture::Mgr m(*db->eng, writers);
    // At least one audit even when the writers finish first (a loaded host may run them
    // before this thread is scheduled at all).
    do {
      int64_t sum = 0;
      ASSERT_TRUE(nvt::test::audit(m, rows, &sum));  // read-only SI transactions never abort
      audits++;
      if (sum != total) bad_audits++;
    } while (done.load() < writers);
  });
  for (auto& t : ts) t.join();
  EXPECT_EQ(commits.load(), uint64_t(writers * per_thread));
  EXPECT_GT(audits.load(), 0u);
  EXPECT_EQ(bad_audits.load(), 0u);
  EXPECT_EQ(db->total(), total);
  EXPECT_EQ(db->eng->check()["violations"].template get<uint64_t>(), 0u);
  auto st = db->eng->stats();
  EXPECT_GT(st["versions_pruned"].template get<uint64_t>(), 0u) << st.dump();
}

// Write skew: x + y >= 0 is checked by each transaction on its snapshot, each withdraws from a
// different account; SI (either method) commits both and breaks the constraint.
TYPED_TEST(Nvmvcc, WriteSkewCommits) {
  TempPath p("nvmvcc-skew");
  auto db = this->make_db(p, 4, 2, 100);
  nvt::test::CCServices<TypeParam> services(2);
  typename TestFixture::Mgr t1(*db->eng, 0), t2(*db->eng, 1);
  t1.begin();
  t2.begin();
  ASSERT_TRUE(t1.read(0, 0) && t1.read(0, 1));
  ASSERT_TRUE(t2.read(0, 0) && t2.read(0, 1));
  EXPECT_GE(balance_of(t1.read(0, 0)) + balance_of(t1.read(0, 1)) - 150, 0);
  EXPECT_GE(balance_of(t2.read(0, 0)) + balance_of(t2.read(0, 1)) - 150, 0);
  char* x = t1.write(0, 0);
  ASSERT_TRUE(x);
  set_balance(x, balance_of(x) - 150);
  char* y = t2.write(0, 1);
  ASSERT_TRUE(y);
  set_balance(y, balance_of(y) - 150);
  EXPECT_TRUE(t1.commit());
  EXPECT_TRUE(t2.commit());
  EXPECT_EQ(db->total(), 4 * 100 - 300);  // x + y = -100: the anomaly SI allows
}

// First updater wins: a running version at the head, or a committed one newer than the
// snapshot, makes a later updater abort; an aborted one is passed over.
TYPED_TEST(Nvmvcc, FirstUpdaterWins) {
  TempPath p("nvmvcc-fuw");
  auto db = this->make_db(p, 4, 3, 100);
  nvt::test::CCServices<TypeParam> services(3);
  typename TestFixture::Mgr t1(*db->eng, 0), t2(*db->eng, 1), t3(*db->eng, 2);
  // (b) running: t2 aborts, t1 commits.
  t1.begin();
  ASSERT_TRUE(t1.write(0, 0));
  t2.begin();
  EXPECT_EQ(t2.write(0, 0), nullptr);
  EXPECT_EQ(t2.cause(), AbortCause::WriteConflict);
  t2.abort();
  set_balance(t1.write(0, 0), 1);
  EXPECT_TRUE(t1.commit());
  // (a) committed after the snapshot: t3 took its snapshot (read of key 1) before t1 committed.
  t3.begin();
  ASSERT_TRUE(t3.read(0, 1));
  t1.begin();
  char* w = t1.write(0, 0);
  ASSERT_TRUE(w);
  set_balance(w, 2);
  ASSERT_TRUE(t1.commit());
  EXPECT_EQ(t3.write(0, 0), nullptr);
  EXPECT_EQ(t3.cause(), AbortCause::WriteConflict);
  t3.abort();
  // (c) an aborted updater does not block the next one.
  t1.begin();
  ASSERT_TRUE(t1.write(0, 0));
  t1.user_abort();
  t2.begin();
  char* v = t2.write(0, 0);
  ASSERT_TRUE(v);
  EXPECT_EQ(balance_of(v), 2);  // the aborted version's image is not what t2 starts from
  set_balance(v, 3);
  ASSERT_TRUE(t2.commit());
  char img[nvt::test::kTuple];
  uint64_t ver = 0;
  ASSERT_TRUE(db->eng->read_current(0, 0, img, ver));
  EXPECT_EQ(balance_of(img), 3);
  EXPECT_EQ(ver, 3u);  // three committed versions after the loaded one
}

// A snapshot taken before a commit never shows it, even for keys first read afterwards; a
// snapshot taken after shows all of it.
TYPED_TEST(Nvmvcc, SnapshotReadsNeverSeeConcurrentCommit) {
  TempPath p("nvmvcc-snap");
  auto db = this->make_db(p, 8, 3, 100);
  nvt::test::CCServices<TypeParam> services(3);
  typename TestFixture::Mgr reader(*db->eng, 0), writer(*db->eng, 1), later(*db->eng, 2);
  reader.begin();
  ASSERT_EQ(balance_of(reader.read(0, 5)), 100);  // the snapshot is taken here
  for (int round = 1; round <= 3; round++) {
    writer.begin();
    for (uint64_t k : {0, 1, 5}) {
      char* w = writer.write(0, k);
      ASSERT_TRUE(w);
      set_balance(w, 100 + round);
    }
    ASSERT_TRUE(writer.commit());
  }
  for (uint64_t k : {0, 1, 5}) EXPECT_EQ(balance_of(reader.read(0, k)), 100) << k;
  EXPECT_TRUE(reader.commit());
  later.begin();
  for (uint64_t k : {0, 1, 5}) EXPECT_EQ(balance_of(later.read(0, k)), 103) << k;
  EXPECT_TRUE(later.commit());
}

// Recovery in-process from the image: committed transfers are all there, a transaction that
// had linked its versions but not committed leaves no trace, and the engine runs on after.
TYPED_TEST(Nvmvcc, RecoveryRestoresExactlyTheCommittedState) {
  TempPath p("nvmvcc-recover");
  const uint64_t rows = 50;
  typename TestFixture::Db::Snapshot before;
  {
    auto db = this->make_db(p, rows, 2, 1000);
    nvt::test::CCServices<TypeParam> services(2);
    {
      typename TestFixture::Mgr m(*db->eng, 0);
      Rng r(5);
      for (int i = 0; i < 400; i++) {
        uint64_t a = r.below(rows), b = (a + 1 + r.below(rows - 1)) % rows;
        ASSERT_TRUE(nvt::test::transfer(m, a, b, int64_t(r.below(30)) + 1));
      }
      before = db->snapshot();
      // In flight at the crash: versions linked at the heads of keys 3 and 4, never committed.
      typename TestFixture::Mgr inflight(*db->eng, 1);
      inflight.begin();
      char* x = inflight.write(0, 3);
      char* y = inflight.write(0, 4);
      ASSERT_TRUE(x && y);
      set_balance(x, 999999);
      set_balance(y, -999999);
      std::vector<Access> acc = inflight.accesses();
      db->eng->persist(inflight.engine_thread(), acc.data(), acc.size());  // payloads durable
    }
    nvt::test::drop_as_crash(db->eng);
  }
  auto db = this->make_db(p, rows, 2, 0, /*reopen=*/true);
  RecoveryReport rep = db->eng->recover(2);
  EXPECT_EQ(rep.rows, rows);
  EXPECT_EQ(rep.replayed, 0u);  // no log
  EXPECT_EQ(db->eng->stats()["recovery_dropped_versions"].template get<uint64_t>(), 2u);
  EXPECT_EQ(db->eng->check()["violations"].template get<uint64_t>(), 0u) << db->eng->check().dump();
  auto after = db->snapshot();
  EXPECT_EQ(after.images, before.images);
  EXPECT_EQ(after.versions, before.versions);
  EXPECT_EQ(db->total(), int64_t(rows) * 1000);
  nvt::test::CCServices<TypeParam> services(2);
  typename TestFixture::Mgr m(*db->eng, 1);
  ASSERT_TRUE(nvt::test::transfer(m, 3, 4, 7));
  EXPECT_EQ(db->total(), int64_t(rows) * 1000);
}

// Algorithm 1: a reader that finds the dirty bit helps persist the word and gets the status.
TEST(McsiStatusWord, SetAndGetWithDirtyBitHelping) {
  TempPath p("mcsi-word");
  nvt::test::DbOptions o;
  o.rows = 4;
  nvt::test::TestDb<cc::Mcsi, nvmvcc::NvMvcc> db(p.str(), o);
  uint64_t txid = (uint64_t(1) << cc::Mcsi::kTsBits) | 40;
  cc::Mcsi::set_status(txid, nvmvcc::kCommitted);
  EXPECT_EQ(cc::Mcsi::stored_status(txid), nvmvcc::kCommitted);
  int off;
  auto& w = cc::Mcsi::word_of(txid, off);
  EXPECT_EQ(w.load() & cc::Mcsi::kDirty, 0u);
  uint64_t helped = cc::Mcsi::st->helped.load();
  w.store(w.load() | cc::Mcsi::kDirty);  // a writer between its store and its flush
  EXPECT_EQ(cc::Mcsi::stored_status(txid), nvmvcc::kCommitted);
  EXPECT_EQ(cc::Mcsi::st->helped.load(), helped + 1);
  // Neighbours in the same word keep their own status.
  cc::Mcsi::set_status(txid + 1, nvmvcc::kAborted);
  EXPECT_EQ(cc::Mcsi::stored_status(txid), nvmvcc::kCommitted);
  EXPECT_EQ(cc::Mcsi::stored_status(txid + 1), nvmvcc::kAborted);
}

// Pruning never takes a version an open snapshot still needs: a reader holds an old snapshot
// while a writer commits hundreds of versions of the keys it has not read yet (enough for many
// horizon computations); the reader still sees the loaded images, and once it has finished the
// old versions are pruned.
TYPED_TEST(Nvmvcc, PruningKeepsWhatAnOpenSnapshotNeeds) {
  TempPath p("nvmvcc-prune");
  auto db = this->make_db(p, 8, 2, 100);
  nvt::test::CCServices<TypeParam> services(2);
  typename TestFixture::Mgr reader(*db->eng, 0), writer(*db->eng, 1);
  reader.begin();
  ASSERT_EQ(balance_of(reader.read(0, 7)), 100);  // the snapshot
  auto write_round = [&](int i) {
    writer.begin();
    for (uint64_t k : {1, 2}) {
      char* w = writer.write(0, k);
      ASSERT_TRUE(w);
      set_balance(w, 1000 + i);
    }
    ASSERT_TRUE(writer.commit());
  };
  for (int i = 0; i < 500; i++) write_round(i);
  uint64_t pruned_while_open = db->eng->stats()["versions_pruned"].template get<uint64_t>();
  EXPECT_EQ(balance_of(reader.read(0, 1)), 100);
  EXPECT_EQ(balance_of(reader.read(0, 2)), 100);
  EXPECT_TRUE(reader.commit());
  for (int i = 500; i < 1000; i++) write_round(i);
  EXPECT_GT(db->eng->stats()["versions_pruned"].template get<uint64_t>(), pruned_while_open + 500);
  EXPECT_EQ(db->eng->check()["violations"].template get<uint64_t>(), 0u);
  reader.begin();
  EXPECT_EQ(balance_of(reader.read(0, 1)), 1999);
  EXPECT_TRUE(reader.commit());
}
