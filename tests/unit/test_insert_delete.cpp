// Inserts, deletes and ordered scans through the transaction manager on every engine (nvmvcc
// with MCSI and PGSI too): the contract (duplicates, reads of deleted tuples, rolled-back
// inserts, reinserts), recovery of inserted and deleted tuples in a fresh engine over the
// reopened image (twice, so a recovered image recovers again), and the ordered index under
// concurrent inserts and scans. Snapshot isolation on nvmvcc: what earlier and later snapshots
// see of inserts and deletes, scans of a snapshot, insert conflicts, an uncommitted insert
// after a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "concurrency_control/mcsi.h"
#include "concurrency_control/pgsi.h"
#include "storage/engines/nvmvcc/nvmvcc.h"
#include "storage/engines/zen/zen.h"
#include "storage/ordered_index.h"
#include "tests/unit/engine_util.h"

using namespace nvt;
using nvt::test::DbOptions;
using nvt::test::TempPath;
using nvt::test::balance_of;
using nvt::test::kTuple;
using nvt::test::set_balance;

namespace {

// Accounts with an ordered index; even keys 0..2*(kLoaded-1) loaded, room for inserts.
constexpr uint64_t kLoaded = 50;
constexpr uint64_t kCapacity = 400;

template <class P>
struct Db : test::PairDb<P> {
  using test::PairDb<P>::eng;
  explicit Db(const std::string& path, bool reopen = false)
      : test::PairDb<P>(path, {{0, "accounts", test::account_schema(), kCapacity, true}}, "unit-test insert-delete",
                        {}, reopen) {}
  void load() {
    char img[kTuple];
    for (uint64_t i = 0; i < kLoaded; i++) {
      test::initial_image(img, 2 * i, 100);
      eng->load(eng->thread(0), 0, 2 * i, img);
    }
    eng->after_load();
  }
  bool present(uint64_t k, int64_t* bal = nullptr) {
    char img[kTuple];
    uint64_t v;
    if (!eng->read_current(0, k, img, v)) return false;
    if (bal) *bal = balance_of(img);
    return true;
  }
};

template <class Mgr>
bool insert(Mgr& m, uint64_t k, int64_t bal) {
  m.begin();
  char* p = m.insert(0, k);
  if (!p) { m.abort(); return false; }
  set_balance(p, bal);
  return m.commit();
}
template <class Mgr>
bool remove(Mgr& m, uint64_t k) {
  m.begin();
  if (!m.remove(0, k)) { m.abort(); return false; }
  return m.commit();
}
template <class Mgr>
std::vector<uint64_t> scan(Mgr& m, uint64_t lo, uint64_t hi, size_t limit = 1000, bool rev = false) {
  std::vector<uint64_t> keys;
  m.begin();
  bool ok = m.scan(0, lo, hi, limit, [&](uint64_t k, const char*) { keys.push_back(k); return true; }, rev);
  EXPECT_TRUE(ok);
  if (ok) EXPECT_TRUE(m.commit());
  else m.abort();
  return keys;
}

}  // namespace

template <class P>
class InsertDeleteTest : public ::testing::Test {};
using test::Pair;
using Pairs = ::testing::Types<Pair<mmdb::Mmdb, cc::NoWait>, Pair<mmdb::Mmdb, cc::Silo>, Pair<zen::Zen, cc::NoWait>,
                               Pair<zen::Zen, cc::Silo>, Pair<wbl::Wbl, cc::NoWait>, Pair<wbl::Wbl, cc::Silo>, Pair<nvmvcc::NvMvcc, cc::Mcsi>, Pair<nvmvcc::NvMvcc, cc::Pgsi>,
                               Pair<foedus::Foedus, cc::Foedus>>;
TYPED_TEST_SUITE(InsertDeleteTest, Pairs);

TYPED_TEST(InsertDeleteTest, InsertDeleteScanAndTheirConflicts) {
  using D = Db<TypeParam>;
  TempPath p("insdel");
  D db(p.str());
  db.load();
  test::CCServices<typename D::CC> svc(2);
  typename D::Mgr a(*db.eng, 0), b(*db.eng, 1);
  EXPECT_FALSE(insert(a, 4, 1)) << "a present key";
  EXPECT_EQ(a.cause(), AbortCause::WriteConflict);
  ASSERT_TRUE(insert(a, 5, 7));
  int64_t bal = 0;
  ASSERT_TRUE(db.present(5, &bal));
  EXPECT_EQ(bal, 7);
  EXPECT_EQ(scan(a, 3, 8), (std::vector<uint64_t>{4, 5, 6, 8}));
  EXPECT_EQ(scan(a, 3, 8, 2), (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(scan(a, 3, 8, 2, true), (std::vector<uint64_t>{8, 6}));
  // A concurrent duplicate insert fails while the first is uncommitted; the key stays hidden.
  a.begin();
  ASSERT_TRUE(a.insert(0, 9));
  b.begin();
  EXPECT_EQ(b.insert(0, 9), nullptr);
  b.abort();
  b.begin();
  EXPECT_EQ(b.read(0, 9), nullptr) << "an uncommitted insert is invisible";
  b.abort();
  EXPECT_EQ(scan(b, 9, 9), std::vector<uint64_t>{});
  ASSERT_TRUE(a.commit());
  EXPECT_EQ(scan(b, 9, 9), std::vector<uint64_t>{9});
  // A rolled-back insert leaves nothing; the key can be inserted again.
  a.begin();
  ASSERT_TRUE(a.insert(0, 11));
  a.user_abort();
  EXPECT_FALSE(db.present(11));
  EXPECT_EQ(scan(a, 10, 12), (std::vector<uint64_t>{10, 12}));
  ASSERT_TRUE(insert(b, 11, 3));
  EXPECT_TRUE(db.present(11));
  // Delete: reads fail afterwards, scans skip it, a reinsert works.
  ASSERT_TRUE(remove(a, 6));
  EXPECT_FALSE(db.present(6));
  b.begin();
  EXPECT_EQ(b.read(0, 6), nullptr);
  b.abort();
  EXPECT_FALSE(remove(b, 6));
  EXPECT_EQ(scan(a, 3, 8), (std::vector<uint64_t>{4, 5, 8}));
  ASSERT_TRUE(insert(a, 6, 42));
  ASSERT_TRUE(db.present(6, &bal));
  EXPECT_EQ(bal, 42);
  // A reader that got the tuple before its delete committed cannot commit past it.
  b.begin();
  const char* r = b.read(0, 8);
  ASSERT_NE(r, nullptr);
  bool deleted = remove(a, 8);  // 2PL: refused while b holds its lock; OCC, SI: goes through
  bool b_committed = b.commit();
  constexpr bool k2pl = std::is_same_v<typename D::CC, cc::NoWait>;
  constexpr bool kSnapshot = needs_nvmvcc<typename D::CC>;
  EXPECT_FALSE(deleted && k2pl);
  if (deleted && kSnapshot) {
    EXPECT_TRUE(b_committed) << "a snapshot read before the delete serializes before it";
  } else if (deleted) {
    EXPECT_FALSE(b_committed) << "read of a tuple deleted before commit";
  }
  // Insert then update and delete in later transactions, all through one key.
  ASSERT_TRUE(insert(a, 13, 1));
  a.begin();
  char* w = a.write(0, 13);
  ASSERT_NE(w, nullptr);
  set_balance(w, 2);
  ASSERT_TRUE(a.commit());
  ASSERT_TRUE(remove(a, 13));
  EXPECT_FALSE(db.present(13));
}

// Inserted, updated, deleted and reinserted tuples survive a crash exactly; a second recovery
// of the recovered image (after more deletes) agrees, and deleted keys never come back.
TYPED_TEST(InsertDeleteTest, RecoveryOfInsertedAndDeletedTuples) {
  using D = Db<TypeParam>;
  TempPath p("insdel-rec");
  std::map<uint64_t, int64_t> expect;
  for (uint64_t i = 0; i < kLoaded; i++) expect[2 * i] = 100;
  {
    D db(p.str());
    db.load();
    db.eng->start();
    test::CCServices<typename D::CC> svc(2);
    typename D::Mgr m(*db.eng, 0);
    for (uint64_t k = 1; k < 60; k += 2) { ASSERT_TRUE(insert(m, k, int64_t(k))); expect[k] = int64_t(k); }
    for (uint64_t k = 0; k < 40; k += 4) {  // update, then delete, some loaded keys
      m.begin();
      char* w = m.write(0, k);
      ASSERT_NE(w, nullptr);
      set_balance(w, 5);
      ASSERT_TRUE(m.commit());
      ASSERT_TRUE(remove(m, k));
      expect.erase(k);
    }
    for (uint64_t k = 1; k < 20; k += 6) { ASSERT_TRUE(remove(m, k)); expect.erase(k); }
    ASSERT_TRUE(insert(m, 8, 88));  // a reinsert of a deleted key
    expect[8] = 88;
    m.begin();
    ASSERT_TRUE(m.insert(0, 1001));  // rolled back: never there
    m.user_abort();
    if constexpr (requires { db.eng->sync(db.eng->thread(0)); }) db.eng->sync(db.eng->thread(0));
    db.eng->stop();
    test::drop_as_crash(db.eng);
  }
  for (int round = 1; round <= 2; round++) {
    D db(p.str(), true);
    db.eng->recover(2);
    auto inv = db.eng->check();
    EXPECT_EQ(inv["violations"].template get<uint64_t>(), 0u) << inv.dump();
    for (uint64_t k = 0; k < kCapacity; k++) {
      int64_t bal = 0;
      bool there = db.present(k, &bal);
      EXPECT_EQ(there, expect.count(k) == 1) << "round " << round << " key " << k;
      if (there && expect.count(k)) {
        EXPECT_EQ(bal, expect[k]) << "key " << k;
      }
    }
    test::CCServices<typename D::CC> svc(2);
    typename D::Mgr m(*db.eng, 0);
    std::vector<uint64_t> want;
    for (auto& [k, v] : expect)
      if (k >= 10 && k <= 30) want.push_back(k);
    EXPECT_EQ(scan(m, 10, 30), want) << "the ordered index is rebuilt";
    if (round == 1) {  // more deletes and a reinsert after the first recovery
      db.eng->start();
      ASSERT_TRUE(remove(m, 22));
      expect.erase(22);
      ASSERT_TRUE(insert(m, 4, 44));
      expect[4] = 44;
      if constexpr (requires { db.eng->sync(db.eng->thread(0)); }) db.eng->sync(db.eng->thread(0));
      db.eng->stop();
    }
    test::drop_as_crash(db.eng);
  }
}

// Snapshot isolation on nvmvcc (papers/mcsi.txt section 3): inserts and deletes are versions.
template <class P>
class SnapshotInsertDelete : public ::testing::Test {};
using SiPairs = ::testing::Types<Pair<nvmvcc::NvMvcc, cc::Mcsi>, Pair<nvmvcc::NvMvcc, cc::Pgsi>>;
TYPED_TEST_SUITE(SnapshotInsertDelete, SiPairs);

// The keys an open transaction's scan of [lo, hi] visits.
template <class Mgr>
std::vector<uint64_t> keys_in(Mgr& m, uint64_t lo, uint64_t hi, size_t limit = 1000, bool rev = false) {
  std::vector<uint64_t> keys;
  EXPECT_TRUE(m.scan(0, lo, hi, limit, [&](uint64_t k, const char*) { keys.push_back(k); return true; }, rev));
  return keys;
}

// An insert is seen by snapshots taken after its commit only, a delete hides the row from
// those only; scans list, in order, exactly the rows of the snapshot (not an insert in flight,
// not a committed delete), and a scan with a limit passes over deleted keys to reach it.
TYPED_TEST(SnapshotInsertDelete, SnapshotsSeeTheInsertsAndDeletesCommittedBeforeThem) {
  using D = Db<TypeParam>;
  TempPath p("si-insdel");
  D db(p.str());
  db.load();
  test::CCServices<typename D::CC> svc(2);
  typename D::Mgr old(*db.eng, 0), w(*db.eng, 1);
  old.begin();
  ASSERT_NE(old.read(0, 0), nullptr);  // the snapshot
  ASSERT_TRUE(insert(w, 5, 55));
  ASSERT_TRUE(remove(w, 4));
  EXPECT_EQ(old.read(0, 5), nullptr) << "inserted after the snapshot";
  EXPECT_EQ(old.cause(), AbortCause::User);
  const char* r4 = old.read(0, 4);
  ASSERT_NE(r4, nullptr) << "deleted after the snapshot: still there";
  EXPECT_EQ(balance_of(r4), 100);
  EXPECT_EQ(keys_in(old, 0, 9), (std::vector<uint64_t>{0, 2, 4, 6, 8}));
  EXPECT_TRUE(old.commit());
  old.begin();
  EXPECT_EQ(keys_in(old, 0, 9), (std::vector<uint64_t>{0, 2, 5, 6, 8}));
  EXPECT_EQ(old.read(0, 4), nullptr);
  const char* r5 = old.read(0, 5);
  ASSERT_NE(r5, nullptr);
  EXPECT_EQ(balance_of(r5), 55);
  EXPECT_TRUE(old.commit());
  w.begin();
  char* x = w.insert(0, 7);
  ASSERT_NE(x, nullptr);
  set_balance(x, 77);
  EXPECT_EQ(scan(old, 0, 9), (std::vector<uint64_t>{0, 2, 5, 6, 8})) << "an insert in flight";
  ASSERT_TRUE(w.commit());
  EXPECT_EQ(scan(old, 0, 9), (std::vector<uint64_t>{0, 2, 5, 6, 7, 8}));
  ASSERT_TRUE(remove(w, 0));
  ASSERT_TRUE(remove(w, 2));
  EXPECT_EQ(scan(old, 0, 9, 1), std::vector<uint64_t>{5}) << "deleted keys passed over";
  EXPECT_EQ(scan(old, 0, 8, 2, true), (std::vector<uint64_t>{8, 7}));
  EXPECT_EQ(db.eng->check()["violations"].template get<uint64_t>(), 0u) << db.eng->check().dump();
}

// Inserts and deletes follow first-updater-wins: an insert of a key inserted after the snapshot,
// or being inserted, and a delete of a row deleted after the snapshot, conflict; an insert of a
// key whose delete the snapshot holds succeeds, one of a visible row is a duplicate.
TYPED_TEST(SnapshotInsertDelete, InsertAndDeleteConflictsFollowFirstUpdaterWins) {
  using D = Db<TypeParam>;
  TempPath p("si-insconf");
  D db(p.str());
  db.load();
  test::CCServices<typename D::CC> svc(2);
  typename D::Mgr old(*db.eng, 0), w(*db.eng, 1);
  old.begin();
  ASSERT_NE(old.read(0, 0), nullptr);
  ASSERT_TRUE(insert(w, 9, 1));
  EXPECT_EQ(old.insert(0, 9), nullptr) << "inserted after the snapshot";
  EXPECT_EQ(old.cause(), AbortCause::WriteConflict);
  old.abort();
  old.begin();
  ASSERT_NE(old.read(0, 0), nullptr);
  ASSERT_TRUE(remove(w, 6));
  EXPECT_FALSE(old.remove(0, 6)) << "deleted after the snapshot";
  EXPECT_EQ(old.cause(), AbortCause::WriteConflict);
  old.abort();
  old.begin();
  ASSERT_NE(old.read(0, 0), nullptr);
  w.begin();
  ASSERT_NE(w.insert(0, 11), nullptr);
  EXPECT_EQ(old.insert(0, 11), nullptr) << "being inserted";
  EXPECT_EQ(old.cause(), AbortCause::WriteConflict);
  old.abort();
  ASSERT_TRUE(w.commit());
  EXPECT_TRUE(insert(old, 6, 66)) << "a reinsert after the delete";
  EXPECT_FALSE(insert(w, 6, 67)) << "a duplicate";
  EXPECT_EQ(w.cause(), AbortCause::WriteConflict);
  EXPECT_FALSE(remove(w, 13)) << "never inserted";
  int64_t bal = 0;
  ASSERT_TRUE(db.present(6, &bal));
  EXPECT_EQ(bal, 66);
}

// A crash with an insert and a delete linked (payloads durable) but not committed: recovery
// drops both versions, keeps the committed insert and delete, rebuilds the ordered index, and
// the keys can be inserted again.
TYPED_TEST(SnapshotInsertDelete, UncommittedInsertIsGoneAfterRecovery) {
  using D = Db<TypeParam>;
  TempPath p("si-insrec");
  {
    D db(p.str());
    db.load();
    test::CCServices<typename D::CC> svc(2);
    typename D::Mgr m(*db.eng, 0), inflight(*db.eng, 1);
    ASSERT_TRUE(insert(m, 1, 11));
    ASSERT_TRUE(remove(m, 2));
    inflight.begin();
    char* x = inflight.insert(0, 3);
    ASSERT_NE(x, nullptr);
    set_balance(x, 33);
    ASSERT_TRUE(inflight.remove(0, 4));
    std::vector<Access> acc = inflight.accesses();
    db.eng->persist(inflight.engine_thread(), acc.data(), acc.size());  // durable, not committed
    test::drop_as_crash(db.eng);
  }
  D db(p.str(), true);
  RecoveryReport rep = db.eng->recover(2);
  EXPECT_EQ(rep.rows, kLoaded);  // one inserted, one deleted
  EXPECT_EQ(db.eng->stats()["recovery_dropped_versions"].template get<uint64_t>(), 2u);
  auto inv = db.eng->check();
  EXPECT_EQ(inv["violations"].template get<uint64_t>(), 0u) << inv.dump();
  int64_t bal = 0;
  ASSERT_TRUE(db.present(1, &bal));
  EXPECT_EQ(bal, 11);
  EXPECT_FALSE(db.present(2));
  EXPECT_FALSE(db.present(3)) << "the uncommitted insert";
  ASSERT_TRUE(db.present(4, &bal)) << "the uncommitted delete";
  EXPECT_EQ(bal, 100);
  test::CCServices<typename D::CC> svc(2);
  typename D::Mgr m(*db.eng, 0);
  EXPECT_EQ(scan(m, 0, 6), (std::vector<uint64_t>{0, 1, 4, 6}));
  EXPECT_TRUE(insert(m, 3, 3));
  EXPECT_TRUE(insert(m, 2, 2));
  EXPECT_EQ(scan(m, 0, 6), (std::vector<uint64_t>{0, 1, 2, 3, 4, 6}));
}

// Two workers insert and delete keys of one range while a counter row (key 0) counts them, in
// the same transactions (so SI serializes them on it): every snapshot's scan of the range lists
// exactly as many keys as its counter says, and so does the final state.
TYPED_TEST(SnapshotInsertDelete, ConcurrentInsertsAndDeletesAgreeWithTheSnapshotsCounter) {
  using D = Db<TypeParam>;
  TempPath p("si-inscon");
  D db(p.str());
  db.load();
  test::CCServices<typename D::CC> svc(2);
  std::atomic<uint64_t> bad{0}, commits{0};
  auto work = [&](int tid) {
    typename D::Mgr m(*db.eng, tid);
    Rng r(uint64_t(tid) + 7);
    for (int done = 0; done < 100;) {  // commits per worker; conflicts on the counter retry
      uint64_t k = 101 + 2 * r.below(15);  // odd keys 101..129: none loaded
      m.begin();
      char* c = m.write(0, 0);
      if (!c) { m.abort(); continue; }
      std::vector<uint64_t> ks = keys_in(m, 100, 130);
      if (int64_t(ks.size()) != balance_of(c) - 100) bad++;
      bool present = std::find(ks.begin(), ks.end(), k) != ks.end();
      if (present ? !m.remove(0, k) : !m.insert(0, k)) { m.abort(); continue; }
      set_balance(c, balance_of(c) + (present ? -1 : 1));
      if (m.commit()) done++, commits++;
    }
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(commits.load(), 200u);
  auto inv = db.eng->check();
  EXPECT_EQ(inv["violations"].template get<uint64_t>(), 0u) << inv.dump();
  int64_t count = 0;
  ASSERT_TRUE(db.present(0, &count));
  typename D::Mgr m(*db.eng, 0);
  EXPECT_EQ(int64_t(scan(m, 100, 130).size()), count - 100);
}

TEST(OrderedIndex, ConcurrentInsertsAndScansSeeSortedDistinctKeys) {
  dev::DramBudget dram(64ull << 20);
  OrderedIndex idx(100000, dram, "ordered");
  std::atomic<bool> done{false};
  std::atomic<uint64_t> bad{0}, scans{0};
  std::thread scanner([&] {
    std::vector<uint64_t> out;
    do {  // at least one scan even if the inserters finish before this thread runs
      idx.range(1000, 50000, 200, out);
      for (size_t i = 1; i < out.size(); i++) bad += out[i - 1] >= out[i] ? 1 : 0;
      for (uint64_t k : out) bad += (k < 1000 || k > 50000) ? 1 : 0;
      scans++;
    } while (!done.load());
  });
  std::vector<std::thread> ws;
  for (int t = 0; t < 2; t++)
    ws.emplace_back([&, t] {
      for (uint64_t k = uint64_t(t); k < 60000; k += 2) {
        EXPECT_TRUE(idx.insert(k));
        if (k % 10 == 0) {
          EXPECT_TRUE(idx.remove(k));
        }
      }
    });
  for (auto& w : ws) w.join();
  done = true;
  scanner.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GT(scans.load(), 0u);
  EXPECT_EQ(idx.size(), 60000u - 6000u);
  std::vector<uint64_t> out;
  idx.range(0, 25, 100, out);
  EXPECT_EQ(out, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25}));
  idx.range(0, 25, 3, out, true);
  EXPECT_EQ(out, (std::vector<uint64_t>{25, 24, 23}));
}
