// MMDB through the transaction manager, for every CC method it supports: visibility of commits,
// aborts leaving no trace, bank transfers under contention with the checkpointer running,
// recovery in a fresh engine over a reopened image, spilling rows to NVM when DRAM is short,
// the per-transaction persistence cost.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/engine_util.h"

using namespace nvt;
using nvt::test::DbOptions;
using nvt::test::TempPath;
using nvt::test::balance_of;
using nvt::test::kPayload;
using nvt::test::kTuple;
using nvt::test::set_balance;

template <class CC>
class MmdbTest : public ::testing::Test {
 protected:
  using Db = nvt::test::TestDb<CC>;
  using Mgr = typename Db::Mgr;
  using Engine = typename Db::Engine;
};
using CCs = ::testing::Types<cc::NoWait, cc::Silo>;
TYPED_TEST_SUITE(MmdbTest, CCs);

namespace {

// Write `text` into the payload of account k and add delta to its balance, in one transaction.
template <class Mgr>
bool update(Mgr& m, uint64_t k, int64_t delta, const std::string& text) {
  m.begin();
  char* d = m.write(0, k);
  if (!d) { m.abort(); return false; }
  set_balance(d, balance_of(d) + delta);
  memset(d + kPayload, 0, kTuple - kPayload);
  memcpy(d + kPayload, text.data(), std::min<size_t>(text.size(), kTuple - kPayload - 1));
  return m.commit();
}

std::string payload_of(const char* img) { return std::string(img + kPayload); }

}  // namespace

TYPED_TEST(MmdbTest, CommittedWritesAreVisible) {
  using Db = typename TestFixture::Db;
  TempPath p("visible");
  DbOptions o;
  o.rows = 500;
  Db db(p.str(), o);
  db.load(100);
  char img[kTuple];
  uint64_t v = 0;
  ASSERT_TRUE(db.eng->read_current(0, 7, img, v));
  EXPECT_EQ(v, 0u) << "loaded rows start at version 0";
  EXPECT_EQ(balance_of(img), 100);
  EXPECT_EQ(payload_of(img), "account 7");
  EXPECT_FALSE(db.eng->read_current(0, 500, img, v)) << "no such key";

  typename Db::Mgr m(*db.eng, 0);
  ASSERT_TRUE(update(m, 7, 5, "first"));
  ASSERT_TRUE(db.eng->read_current(0, 7, img, v));
  EXPECT_EQ(v, 2u);
  EXPECT_EQ(balance_of(img), 105);
  EXPECT_EQ(payload_of(img), "first");
  ASSERT_TRUE(update(m, 7, 5, "second"));
  ASSERT_TRUE(db.eng->read_current(0, 7, img, v));
  EXPECT_EQ(v, 4u);
  EXPECT_EQ(balance_of(img), 110);
  EXPECT_EQ(payload_of(img), "second");

  // Read-modify-write of one key in one transaction (a read upgraded to a write) and a read of
  // the transaction's own write.
  m.begin();
  const char* r = m.read(0, 8);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(balance_of(r), 100);
  char* w = m.write(0, 8);
  ASSERT_NE(w, nullptr);
  set_balance(w, 1);
  const char* again = m.read(0, 8);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(balance_of(again), 1) << "a transaction reads its own write";
  ASSERT_TRUE(m.commit());
  ASSERT_TRUE(db.eng->read_current(0, 8, img, v));
  EXPECT_EQ(balance_of(img), 1);
  EXPECT_EQ(v, 2u);

  // A missing key aborts the transaction with a user cause.
  m.begin();
  EXPECT_EQ(m.read(0, 100000), nullptr);
  EXPECT_EQ(m.cause(), AbortCause::User);
  m.abort();
}

TYPED_TEST(MmdbTest, AbortLeavesNoTrace) {
  using Db = typename TestFixture::Db;
  TempPath p("abort");
  DbOptions o;
  o.rows = 100;
  Db db(p.str(), o);
  db.load(100);
  auto before = db.snapshot();
  typename Db::Mgr m(*db.eng, 0);
  m.begin();
  char* a = m.write(0, 3);
  char* b = m.write(0, 4);
  ASSERT_TRUE(a && b);
  set_balance(a, -1);
  set_balance(b, -2);
  m.abort();
  auto after = db.snapshot();
  EXPECT_EQ(after.images, before.images);
  EXPECT_EQ(after.versions, before.versions);
  // Nothing stays locked: another transaction writes both at once.
  typename Db::Mgr m2(*db.eng, 1);
  EXPECT_TRUE(nvt::test::transfer(m2, 3, 4, 10));
  EXPECT_EQ(db.total(), 100 * 100);
}

TYPED_TEST(MmdbTest, ConflictAbortLeavesNoTrace) {
  using Db = typename TestFixture::Db;
  using CC = TypeParam;
  TempPath p("conflict");
  DbOptions o;
  o.rows = 100;
  Db db(p.str(), o);
  db.load(100);
  typename Db::Mgr m1(*db.eng, 0), m2(*db.eng, 1);
  // m1 reads key 1 and writes key 2; m2 writes key 1 and commits in between.
  m1.begin();
  ASSERT_NE(m1.read(0, 1), nullptr);
  char* w = m1.write(0, 2);
  ASSERT_NE(w, nullptr);
  set_balance(w, 777);
  m2.begin();
  char* w2 = m2.write(0, 1);
  if constexpr (std::is_same_v<CC, cc::NoWait>) {
    // The reader's shared lock blocks the writer at once.
    EXPECT_EQ(w2, nullptr);
    EXPECT_EQ(m2.cause(), AbortCause::WriteConflict);
    m2.abort();
    EXPECT_TRUE(m1.commit());
  } else {
    ASSERT_NE(w2, nullptr);
    set_balance(w2, 555);
    ASSERT_TRUE(m2.commit());
    EXPECT_FALSE(m1.commit()) << "m1's read of key 1 is stale";
    EXPECT_EQ(m1.cause(), AbortCause::Validation);
  }
  char img[kTuple];
  uint64_t v;
  ASSERT_TRUE(db.eng->read_current(0, 2, img, v));
  if constexpr (std::is_same_v<CC, cc::NoWait>) {
    EXPECT_EQ(balance_of(img), 777);
  } else {
    EXPECT_EQ(balance_of(img), 100) << "the failed commit installed nothing";
    EXPECT_EQ(v, 0u);
    ASSERT_TRUE(db.eng->read_current(0, 1, img, v));
    EXPECT_EQ(balance_of(img), 555);
  }
}

// A read-write commit is one redo record: one fence. A read-only commit persists nothing.
TYPED_TEST(MmdbTest, OneFencePerReadWriteCommitNoneReadOnly) {
  using Db = typename TestFixture::Db;
  TempPath p("fences");
  DbOptions o;
  o.rows = 1000;
  Db db(p.str(), o);
  db.load(100);
  typename Db::Mgr m(*db.eng, 0);
  for (int i = 0; i < 20; i++) {
    auto c0 = dev::my_counters();
    m.begin();
    for (uint64_t k = 0; k < 4; k++) {
      char* d = m.write(0, uint64_t(i) * 10 + k);
      ASSERT_NE(d, nullptr);
      set_balance(d, i);
    }
    ASSERT_NE(m.read(0, 999), nullptr);
    ASSERT_TRUE(m.commit());
    auto d = dev::my_counters() - c0;
    EXPECT_EQ(d.sfence, 1u) << "read-write txn " << i;
    // 4 images of 64 B plus headers: at least 5 lines written back, all in the log.
    EXPECT_GE(d.clwb, 5u);
    EXPECT_GE(d.nvm_write_bytes, 4u * 64);

    c0 = dev::my_counters();
    m.begin();
    for (uint64_t k = 0; k < 8; k++) ASSERT_NE(m.read(0, 500 + uint64_t(i) + k), nullptr);
    ASSERT_TRUE(m.commit());
    d = dev::my_counters() - c0;
    EXPECT_EQ(d.sfence, 0u) << "read-only txn " << i;
    EXPECT_EQ(d.clwb, 0u) << "read-only txn " << i;
  }
}

// ---------------------------------------------------------------------------------------------
// Recovery

enum class Ckpt { AfterLoadOnly, AfterWrites, AfterWritesThenMore };

template <class Db>
void recovery_round_trip(Ckpt mode) {
  TempPath p("recover");
  DbOptions o;
  o.rows = 2000;
  o.threads = 2;
  typename Db::Snapshot expect;
  uint64_t after_ckpt_writes = 0, all_writes = 0;
  {
    Db db(p.str(), o);
    db.load(100);
    typename Db::Mgr m0(*db.eng, 0), m1(*db.eng, 1);
    Rng r(5);
    auto run = [&](int n) {
      for (int i = 0; i < n; i++) {
        uint64_t k = r.below(o.rows);
        auto& m = i % 2 ? m1 : m0;  // both logs
        ASSERT_TRUE(update(m, k, int64_t(i), "txn " + std::to_string(i)));
        all_writes++;
        after_ckpt_writes++;
      }
    };
    run(600);
    if (mode != Ckpt::AfterLoadOnly) {
      db.eng->checkpoint();
      after_ckpt_writes = 0;
    }
    if (mode == Ckpt::AfterWritesThenMore) run(300);
    expect = db.snapshot();
  }  // the engine and the image are gone; only the file remains
  auto check = [&](Db& db, const RecoveryReport& rep) {
    EXPECT_EQ(rep.rows, o.rows);
    EXPECT_EQ(rep.replayed, after_ckpt_writes) << "log records replayed";
    EXPECT_FALSE(rep.steps.empty());
    auto got = db.snapshot();
    ASSERT_EQ(got.versions.size(), expect.versions.size());
    int bad = 0;
    for (size_t k = 0; k < got.versions.size() && bad < 10; k++) {
      if (got.versions[k] != expect.versions[k] || got.images[k] != expect.images[k]) {
        bad++;
        ADD_FAILURE() << "key " << k << ": recovered version " << got.versions[k] << " '"
                      << payload_of(got.images[k].c_str()) << "', committed version "
                      << expect.versions[k] << " '" << payload_of(expect.images[k].c_str()) << "'";
      }
    }
  };
  {
    Db db(p.str(), o, /*reopen=*/true);
    EXPECT_TRUE(db.nvm->reopened());
    RecoveryReport rep = db.eng->recover(2);
    check(db, rep);
  }
  {
    // Recovering the same image again gives the same database.
    Db db(p.str(), o, /*reopen=*/true);
    RecoveryReport rep = db.eng->recover(1);
    check(db, rep);
  }
}

TYPED_TEST(MmdbTest, RecoveryReplaysTheLogAfterLoadCheckpoint) {
  recovery_round_trip<typename TestFixture::Db>(Ckpt::AfterLoadOnly);
}

TYPED_TEST(MmdbTest, RecoveryFromCheckpointAfterWrites) {
  recovery_round_trip<typename TestFixture::Db>(Ckpt::AfterWrites);
}

TYPED_TEST(MmdbTest, RecoveryFromCheckpointThenLog) {
  recovery_round_trip<typename TestFixture::Db>(Ckpt::AfterWritesThenMore);
}

TYPED_TEST(MmdbTest, RecoveryWithoutAnyCheckpointFails) {
  using Db = typename TestFixture::Db;
  TempPath p("nockpt");
  DbOptions o;
  o.rows = 100;
  o.checkpoint_after_load = false;
  {
    Db db(p.str(), o);
    db.load(1);
  }
  Db db(p.str(), o, true);
  try {
    db.eng->recover(1);
    FAIL() << "recovery without a checkpoint must fail";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint"), std::string::npos) << e.what();
  }
}

// NVM exhausted mid-run (the redo log fills with no checkpointer to truncate it): commit
// fails with a clear error, the failed transaction's locks are released so other workers do
// not spin on them, and the image still recovers every transaction that did commit.
TYPED_TEST(MmdbTest, NvmFullAtCommitReleasesLocksAndStaysRecoverable) {
  using Db = typename TestFixture::Db;
  TempPath p("logfull");
  DbOptions o;
  o.rows = 100;
  o.log_bytes = 64 << 10;
  int64_t commits = 0;
  {
    Db db(p.str(), o);
    db.load(100);  // no start(): nothing truncates the log
    typename TestFixture::Mgr m0(*db.eng, 0), m1(*db.eng, 1);
    std::string error;
    for (int i = 0; i < 100000 && error.empty(); i++) {
      try {
        if (update(m0, 5, 1, "t0")) commits++;
      } catch (const std::runtime_error& e) {
        error = e.what();
      }
    }
    ASSERT_NE(error.find("log full"), std::string::npos) << "the log never filled: " << error;
    EXPECT_GT(commits, 0);
    EXPECT_TRUE(update(m1, 5, 1, "t1")) << "the failed transaction still holds its lock";
    commits++;
  }
  Db db(p.str(), o, true);
  db.eng->recover(1);
  char img[kTuple];
  uint64_t v = 0;
  ASSERT_TRUE(db.eng->read_current(0, 5, img, v));
  EXPECT_EQ(balance_of(img), 100 + commits);
  EXPECT_EQ(db.total(), 100 * 100 + commits);
}

// Transfers from three threads on a few hot accounts, with a small redo log so that the
// background checkpointer runs fuzzy checkpoints and the logs wrap while they commit; the total
// is conserved, and a fresh engine recovers exactly the final state.
TYPED_TEST(MmdbTest, BankTransfersConserveTotalAndRecover) {
  using Db = typename TestFixture::Db;
  using CC = TypeParam;
  const uint64_t rows = 16;
  const int threads = 3;
  TempPath p("bank");
  DbOptions o;
  o.rows = rows;
  o.threads = threads;
  o.log_bytes = 1 << 20;  // ~5000 records of two images: wraps several times
  typename Db::Snapshot expect;
  uint64_t committed_total = 0;
  {
    Db db(p.str(), o);
    db.load(500);
    nvt::test::CCServices<CC> services(threads);
    db.eng->start();
    std::vector<uint64_t> committed(threads, 0);
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
      ts.emplace_back([&, t] {
        typename Db::Mgr m(*db.eng, t);
        Rng r(uint64_t(t) * 31 + 7);
        while (committed[size_t(t)] < 6000) {
          uint64_t a = r.below(rows), b = r.below(rows - 1);
          if (b >= a) b++;
          committed[size_t(t)] += nvt::test::transfer(m, a, b, int64_t(r.below(100)));
        }
      });
    for (auto& t : ts) t.join();
    db.eng->stop();
    for (auto c : committed) committed_total += c;
    EXPECT_EQ(db.total(), int64_t(rows) * 500);
    EXPECT_GE(db.eng->stats()["checkpoints"].template get<uint64_t>(), 2u)
        << "the small log forces checkpoints while transactions run";
    expect = db.snapshot();
    uint64_t versions = 0;
    for (auto v : expect.versions) versions += v;
    EXPECT_EQ(versions, 4 * committed_total);
  }
  Db db(p.str(), o, true);
  db.eng->recover(2);
  auto got = db.snapshot();
  EXPECT_EQ(db.total(), int64_t(rows) * 500);
  EXPECT_EQ(got.versions, expect.versions);
  EXPECT_EQ(got.images, expect.images);
}

// ---------------------------------------------------------------------------------------------
// DRAM budget

TYPED_TEST(MmdbTest, RowsSpillToNvmWhenDramIsShort) {
  using Db = typename TestFixture::Db;
  const uint64_t rows = 10000;
  // Index: 32768 slots of 16 B = 512 KiB; private data per thread; rows: ~88 B each, so
  // 300 KiB left for rows holds about a third of them.
  DbOptions o;
  o.rows = rows;
  o.threads = 1;
  o.dram_bytes = (512u << 10) + kPrivateBytesPerThread + 300 * 1024;
  TempPath p("spill");
  Db db(p.str(), o);
  auto st = db.eng->stats();
  uint64_t in_dram = st["row_capacity"]["accounts"]["dram"].template get<uint64_t>();
  uint64_t in_nvm = st["row_capacity"]["accounts"]["nvm"].template get<uint64_t>();
  EXPECT_GT(in_dram, 0u);
  EXPECT_GT(in_nvm, 0u);
  EXPECT_EQ(in_dram + in_nvm, rows);
  EXPECT_LE(db.dram->used(), db.dram->budget());
  EXPECT_GT(db.nvm->used(dev::RegionKind::Volatile), 0u) << "NVM used as volatile memory";
  db.load(1);

  typename Db::Mgr m(*db.eng, 0);
  Rng r(9);
  for (int i = 0; i < 2000; i++) {
    m.begin();
    for (int j = 0; j < 4; j++) ASSERT_NE(m.read(0, r.below(rows)), nullptr);
    ASSERT_TRUE(m.commit());
  }
  auto [hits, accesses] = TestFixture::Engine::hit_counts(db.eng->thread(0));
  ASSERT_EQ(accesses, 8000u);
  double rate = double(hits) / double(accesses);
  EXPECT_LT(rate, 1.0);
  EXPECT_GT(rate, 0.0);
  // Uniform keys: the hit rate is about the share of rows in DRAM.
  EXPECT_NEAR(rate, double(in_dram) / double(rows), 0.05);
  // Spilled rows work like the others.
  ASSERT_TRUE(update(m, rows - 1, 1, "spilled"));
  char img[kTuple];
  uint64_t v;
  ASSERT_TRUE(db.eng->read_current(0, rows - 1, img, v));
  EXPECT_EQ(payload_of(img), "spilled");
  EXPECT_EQ(db.total(), int64_t(rows) + 1);
}

TYPED_TEST(MmdbTest, WholeDatabaseInDramHitsAlways) {
  using Db = typename TestFixture::Db;
  DbOptions o;
  o.rows = 1000;
  TempPath p("ideal");
  Db db(p.str(), o);
  EXPECT_EQ(db.eng->stats()["row_capacity"]["accounts"]["nvm"].template get<uint64_t>(), 0u);
  db.load(1);
  typename Db::Mgr m(*db.eng, 0);
  for (uint64_t k = 0; k < 1000; k += 7) {
    m.begin();
    ASSERT_NE(m.read(0, k), nullptr);
    ASSERT_TRUE(m.commit());
  }
  auto [hits, accesses] = TestFixture::Engine::hit_counts(db.eng->thread(0));
  EXPECT_GT(accesses, 0u);
  EXPECT_EQ(hits, accesses);
}

TYPED_TEST(MmdbTest, DramTooSmallForIndexThrows) {
  using Db = typename TestFixture::Db;
  DbOptions o;
  o.rows = 10000;  // index: 512 KiB
  o.dram_bytes = 256 << 10;
  TempPath p("smalldram");
  try {
    Db db(p.str(), o);
    FAIL() << "a DRAM budget below the index size must throw";
  } catch (const dev::BudgetError& e) {
    EXPECT_NE(std::string(e.what()).find("index.accounts"), std::string::npos) << e.what();
  }
}
