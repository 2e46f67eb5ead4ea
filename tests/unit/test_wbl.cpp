// WBL (storage/engines/wbl): the version header and log record encodings; commits durable once a
// record covers them and recovered exactly in a fresh engine (twice: idempotent); commits whose
// timestamps lie above the last durable record's cp erased by recovery; the group-commit thread
// acknowledging only what a durable record covers; the CC metadata persisted when a method writes
// it on reads (NO_WAIT) and not when it does not (SILO); old versions reclaimed; foreign images
// refused by name.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <thread>

#include "concurrency_control/cicada.h"
#include "concurrency_control/mvcc.h"
#include "storage/engines/wbl/wbl.h"
#include "tests/unit/engine_util.h"

using namespace nvt;
using nvt::test::DbOptions;
using nvt::test::TempPath;
using nvt::test::balance_of;
using nvt::test::kTuple;
using nvt::test::set_balance;

namespace {

template <class CC, template <class> class E = wbl::Wbl>
struct Db : test::PairDb<test::Pair<E, CC>> {
  using Base = test::PairDb<test::Pair<E, CC>>;
  using Base::eng;
  using Base::eo;
  using Base::tables;
  Db(const std::string& path, const DbOptions& o, bool reopen = false)
      : Base(path, test::account_tables(o.rows), "unit-test accounts " + std::to_string(o.rows), o, reopen) {}
  void load(int64_t balance) {
    char img[kTuple];
    for (uint64_t k = 0; k < tables[0].capacity; k++) {
      test::initial_image(img, k, balance);
      eng->load(eng->thread(int(k % uint64_t(eo.threads))), 0, k, img);
    }
    eng->after_load();
  }
  std::map<uint64_t, std::pair<std::string, uint64_t>> snapshot() {
    std::map<uint64_t, std::pair<std::string, uint64_t>> s;
    char img[kTuple];
    for (uint64_t k = 0; k < tables[0].capacity; k++) {
      uint64_t v = 0;
      if (eng->read_current(0, k, img, v)) s[k] = {std::string(img, kTuple), v};
    }
    return s;
  }
  uint64_t engine_stat(const char* a, const char* b = nullptr) {
    auto j = eng->stats();
    return b ? j[a][b].template get<uint64_t>() : j[a].template get<uint64_t>();
  }
};

template <class Mgr>
bool add(Mgr& m, uint64_t k, int64_t delta) {
  m.begin();
  char* d = m.write(0, k);
  if (!d) { m.abort(); return false; }
  set_balance(d, balance_of(d) + delta);
  return m.commit();
}

DbOptions small(uint64_t rows = 200, int threads = 2) {
  DbOptions o;
  o.rows = rows;
  o.threads = threads;
  o.dram_bytes = 16ull << 20;
  return o;
}

}  // namespace

TEST(WblLayout, VersionHeaderAndLogRecord) {
  alignas(64) char slot[128] = {};
  auto* v = wbl::Version::at(slot);
  v->set_cts(77);
  v->set_id(zen::NvmTuple::make_id(3, 123456, true));
  v->txn = 9;
  v->link = uint64_t(5) << 32 | 42;
  EXPECT_EQ(v->cts(), 77u);
  EXPECT_EQ(v->key(), 123456u);
  EXPECT_EQ(v->table(), 3u);
  EXPECT_TRUE(v->deleted());
  EXPECT_EQ(v->head(), 42u);
  EXPECT_EQ(v->prev(), 5u);
  EXPECT_EQ(v->data(), slot + 32);
  // 32 B aligned slots: the header never crosses a line.
  EXPECT_EQ(wbl::slot_bytes(64), 96u);
  EXPECT_EQ(wbl::slot_bytes(1008), 1056u);
  wbl::LogRecord r{3, 10, 20, wbl::LogRecord::checksum(3, 10, 20)};
  EXPECT_TRUE(r.valid());
  r.cp = 11;  // torn: the check no longer matches
  EXPECT_FALSE(r.valid());
  wbl::LogRecord zero{};
  EXPECT_FALSE(zero.valid());
}

template <class CC>
class WblTest : public ::testing::Test {};
using CCs = ::testing::Types<cc::NoWait, cc::Silo, cc::Mvcc, cc::Cicada>;
TYPED_TEST_SUITE(WblTest, CCs);

// Commits without the group-commit thread are covered by a record when commit() returns: a crash
// (the engine dropped) keeps them all; recovering the recovered image again changes nothing.
TYPED_TEST(WblTest, CommitsSurviveACrashAndRecoveryIsIdempotent) {
  using D = Db<TypeParam>;
  TempPath p("wbl-crash");
  test::CCServices<TypeParam> svc(2);
  std::map<uint64_t, std::pair<std::string, uint64_t>> before;
  {
    D db(p.str(), small());
    db.load(100);
    typename D::Base::Mgr m(*db.eng, 0);
    for (int i = 0; i < 300; i++) ASSERT_TRUE(add(m, uint64_t(i * 7) % 200, i % 5 - 2));
    before = db.snapshot();
    EXPECT_GT(db.engine_stat("versions_reclaimed"), 0u) << "superseded versions are reused";
    test::drop_as_crash(db.eng);
  }
  for (int round = 0; round < 2; round++) {
    D db(p.str(), small(), true);
    RecoveryReport rep = db.eng->recover(2);
    EXPECT_EQ(rep.rows, 200u);
    EXPECT_EQ(db.snapshot(), before) << "round " << round;
    EXPECT_EQ(db.eng->check()["violations"].template get<uint64_t>(), 0u) << db.eng->check().dump();
    if (round == 0) {  // the recovered database runs on, then crashes again
      typename D::Base::Mgr m(*db.eng, 1);
      for (int i = 0; i < 50; i++) ASSERT_TRUE(add(m, uint64_t(i), 1));
      before = db.snapshot();
    }
    test::drop_as_crash(db.eng);
  }
}

// With the group-commit thread and a long interval, commits run ahead of the durable record:
// sync() waits for a record that covers them; a crash before it erases them all.
TEST(WblGroupCommit, AckOnlyAfterTheRecordAndUncoveredCommitsAreErased) {
  using D = Db<cc::Silo>;
  TempPath p("wbl-gc");
  test::CCServices<cc::Silo> svc(1);
  {
    D db(p.str(), small(100, 1));
    db.load(10);
    db.eng->stop();
    test::drop_as_crash(db.eng);
  }
  {
    // A fresh engine over the loaded image with a 200 ms group-commit interval.
    EngineOptions eo;
    eo.threads = 1;
    eo.group_commit_us = 200000;
    std::vector<TableInfo> tables = test::account_tables(100);
    dev::DeviceOptions d = test::device_options(p.str(), wbl::Wbl<cc::Silo>::nvm_bytes(tables, eo) + (16ull << 20),
                                                "dram", "engine=wbl unit-test accounts 100");
    d.reopen = true;
    auto nvm = std::make_unique<dev::NvmImage>(d);
    dev::DramBudget dram(16ull << 20);
    EngineEnv env{*nvm, dram, eo};
    auto eng = std::make_unique<wbl::Wbl<cc::Silo>>(env, tables);
    nvm->publish();
    eng->recover(1);
    eng->start();
    TxnManager<wbl::Wbl<cc::Silo>, cc::Silo> m(*eng, 0);
    auto& th = eng->thread(0);
    auto cp = [&] { return eng->stats()["group_commit"]["cp"].get<uint64_t>(); };
    ASSERT_TRUE(add(m, 1, 5));  // waits for the first grant, then commits ahead of cp
    uint64_t cts = eng->stats()["next_cts"].get<uint64_t>() - 1;
    EXPECT_LT(cp(), cts) << "the commit returned before a record covered it";
    eng->sync(th);  // returns once a durable record covers it
    EXPECT_GE(cp(), cts);
    ASSERT_TRUE(add(m, 2, 7));  // within the grant: no record covers it yet
    EXPECT_LT(cp(), cts + 1);
    eng->stop();  // a clean stop writes the record covering key 2
    EXPECT_GE(cp(), cts + 1);
    eng->start();
    ASSERT_TRUE(add(m, 4, 11));
    ASSERT_TRUE(add(m, 5, 13));
    eng->halt();  // the group-commit thread dies with the power: no last record
    test::drop_as_crash(eng);
  }
  {
    D db(p.str(), small(100, 1), true);
    db.eng->recover(1);
    auto s = db.snapshot();
    auto bal = [&](uint64_t k) { return balance_of(s[k].first.data()); };
    EXPECT_EQ(bal(1), 15);
    EXPECT_EQ(bal(2), 17);
    EXPECT_EQ(bal(4), 10) << "a commit no durable record covers is erased";
    EXPECT_EQ(bal(5), 10);
    EXPECT_EQ(db.engine_stat("recovery", "versions_erased"), 2u);
    EXPECT_EQ(db.eng->check()["violations"].get<uint64_t>(), 0u) << db.eng->check().dump();
  }
}

// NO_WAIT writes a lock word on every read: WBL persists it (a flush and a fence per read, and
// per unlock); SILO reads write no metadata, so a read-only SILO transaction
// persists nothing.
TEST(WblMetadata, PersistedWhenTheCcWritesItOnReads) {
  TempPath p1("wbl-meta-nw"), p2("wbl-meta-silo");
  auto run = [](auto& db, auto& m) {
    dev::Counters c0 = dev::my_counters();
    m.begin();
    for (uint64_t k = 0; k < 8; k++) EXPECT_NE(m.read(0, k), nullptr);
    EXPECT_TRUE(m.commit());
    (void)db;
    return dev::my_counters() - c0;
  };
  {
    Db<cc::NoWait> db(p1.str(), small(100, 1));
    db.load(1);
    typename Db<cc::NoWait>::Base::Mgr m(*db.eng, 0);
    dev::Counters c = run(db, m);
    EXPECT_EQ(c.sfence, 16u) << "8 lock words, each persisted before the next access, then 8 unlocks";
    EXPECT_GE(c.clwb, 16u);
    EXPECT_EQ(db.engine_stat("cc_meta_flushes"), 16u);
  }
  {
    test::CCServices<cc::Silo> svc(1);
    Db<cc::Silo> db(p2.str(), small(100, 1));
    db.load(1);
    typename Db<cc::Silo>::Base::Mgr m(*db.eng, 0);
    dev::Counters c = run(db, m);
    EXPECT_EQ(c.sfence, 0u);
    EXPECT_EQ(c.clwb, 0u);
    // A write: the lock taken at validation, the versions, the record (no group-commit thread
    // here, so the commit writes it), the new TID. (The first write also waits for a grant.)
    ASSERT_TRUE(add(m, 2, 1));
    dev::Counters c0 = dev::my_counters();
    ASSERT_TRUE(add(m, 3, 1));
    EXPECT_EQ((dev::my_counters() - c0).sfence, 4u) << "lock, version, record (inline), unlock";
  }
}

// An image of another engine is refused by name.
TEST(WblImage, ZenImageRefused) {
  TempPath p("wbl-foreign");
  {
    test::PairDb<test::Pair<zen::Zen, cc::Silo>> z(p.str(), test::account_tables(50), "unit-test accounts 50",
                                                 small(50, 1));
    z.eng->after_load();
  }
  try {
    Db<cc::Silo> db(p.str(), small(50, 1), true);
    FAIL() << "a zen image opened as wbl";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("engine=zen"), std::string::npos) << e.what();
  }
}
