// YCSB D and E (benchmarks/ycsb_de.h): the insert key counter and its committed high-water
// mark, the "latest" distribution, the operation mix; on MMDB and Zen with NO_WAIT and SILO:
// D's reads of the newest keys find the inserted rows with their contents, E's scans under
// concurrent inserts (some rolled back) see strictly increasing keys and only committed rows;
// and whole runs through the driver, including one that uses up its insert room.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/ycsb_de.h"
#include "concurrency_control/no_wait.h"
#include "concurrency_control/silo.h"
#include "storage/engines/mmdb/mmdb.h"
#include "storage/engines/zen/zen.h"
#include "system/driver.h"
#include "tests/unit/engine_util.h"

using namespace nvt;
using nvt::test::TempPath;

namespace {

Options de_options(const std::string& workload, uint64_t rows, uint64_t room) {
  Options o;
  o.workload = workload;
  o.rows = rows;
  o.insert_rows = room;
  o.read_ratio = 0.95;
  o.theta = 0.9;
  o.requests = 4;
  o.columns = 2;
  o.column_size = 24;
  o.scan_length = 20;
  o.threads = 2;
  o.profile = "dram";
  return o;
}

// The workload a DeDb is built over (a base of its own: constructed before the engine).
struct DeWorkload {
  Options o;
  YcsbDE y;
  explicit DeWorkload(const Options& opt) : o(opt), y(o) {}
  test::DbOptions db_options() const {
    test::DbOptions d;
    d.threads = o.threads;
    d.log_bytes = 8ull << 20;
    return d;
  }
};

// One engine of pair P over YcsbDE's table, loaded and started.
template <class P>
struct DeDb : DeWorkload, test::PairDb<P> {
  using Mgr = typename test::PairDb<P>::Mgr;
  using test::PairDb<P>::eng;

  DeDb(const std::string& path, const Options& opt)
      : DeWorkload(opt), test::PairDb<P>(path, y.tables(), y.layout(), db_options()) {
    y.load(*eng, 1);
    eng->after_load();
    eng->start();
  }
  // The current image of `key` read in a transaction of its own ("" when missing).
  std::string read(Mgr& m, uint64_t key) {
    for (;;) {
      m.begin(true);
      const char* p = m.read(Ycsb::kTable, key);
      if (!p) {
        bool missing = m.cause() == AbortCause::User;
        m.abort();
        if (missing) return "";
        continue;
      }
      std::string img(p, y.tuple_size());
      if (m.commit()) return img;
    }
  }
  // Run the worker's drawn transaction until it commits, as the driver does; the images of its
  // inserts go to `inserted`.
  void run(typename YcsbDE::Worker& w, Mgr& m, std::map<uint64_t, std::string>* inserted = nullptr) {
    for (;;) {
      m.begin(w.read_only());
      if (w.execute(m)) {
        if (m.commit()) break;
      } else {
        m.abort();
      }
    }
    if (inserted)
      for (const Access& a : m.accesses())
        if (a.type == AccessType::Insert) (*inserted)[a.key] = std::string(a.local, a.len);
    w.acknowledged(m);
  }
};

}  // namespace

TEST(YcsbDE, HighWaterCoversOnlyTheCommittedPrefixOfInsertKeys) {
  InsertKeys k(100, 10, "room");
  EXPECT_EQ(k.high_water(), 100u);
  uint64_t a = k.take(), b = k.take(), c = k.take();
  EXPECT_EQ(a, 100u);
  EXPECT_EQ(b, 101u);
  EXPECT_EQ(c, 102u);
  k.committed(b);  // out of order: 100 still running
  EXPECT_EQ(k.high_water(), 100u);
  k.committed(c);
  EXPECT_EQ(k.high_water(), 100u);
  k.committed(a);  // the prefix 100..102 is committed
  EXPECT_EQ(k.high_water(), 103u);
  EXPECT_EQ(k.taken(), 3u);
  for (int i = 3; i < 10; i++) k.committed(k.take());
  EXPECT_EQ(k.high_water(), 110u);
  try {
    k.take();
    FAIL() << "the room is used up";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("room"), std::string::npos) << e.what();
  }
}

TEST(YcsbDE, ConcurrentCommitsMoveTheHighWaterOverEveryKey) {
  constexpr uint64_t kRoom = 20000;
  InsertKeys k(0, kRoom, "room");
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; t++)
    ts.emplace_back([&] {
      for (uint64_t i = 0; i < kRoom / 2; i++) {
        uint64_t key = k.take();
        ASSERT_LE(k.high_water(), key);  // never past a key still running
        k.committed(key);
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(k.high_water(), kRoom);
}

TEST(YcsbDE, LatestIsZipfOverTheKeysBelowTheHighWater) {
  Latest l(10000, 0.9);
  Zipf z(1000, 0.9);  // the exact probabilities over 1000 keys
  Rng r(5);
  constexpr int kDraws = 200000;
  std::vector<int> by_rank(1000);
  for (int i = 0; i < kDraws; i++) {
    uint64_t k = l.next(r, 1000);
    ASSERT_LT(k, 1000u);
    by_rank[999 - k]++;
  }
  for (uint64_t rank : {0, 1, 2, 10, 100})
    EXPECT_NEAR(by_rank[rank] / double(kDraws), z.probability(rank), 0.1 * z.probability(rank) + 0.001) << rank;
  EXPECT_EQ(l.next(r, 1), 0u);  // one key: the only choice
}

TEST(YcsbDE, WorkersDrawTheMixBelowTheHighWater) {
  for (const char* w : {"ycsb-d", "ycsb-e"}) {
    Options o = de_options(w, 1000, 100000);
    o.requests = 16;
    YcsbDE y(o);
    EXPECT_EQ(y.scans(), std::string(w) == "ycsb-e");
    YcsbDE::Worker wk(y, 0);
    uint64_t ops = 0, inserts = 0, last_insert = 0;
    std::vector<int> lengths(o.scan_length + 1);
    for (int t = 0; t < 3000; t++) {
      wk.next();
      std::set<uint64_t> reads;
      for (auto& op : wk.ops()) {
        ops++;
        if (op.insert) {
          inserts++;
          ASSERT_GE(op.key, o.rows);
          ASSERT_GT(op.key + 1, last_insert);  // fresh keys, in order
          last_insert = op.key + 1;
          continue;
        }
        ASSERT_LT(op.key, o.rows) << "nothing inserted committed yet: only loaded keys";
        if (y.scans()) {
          ASSERT_GE(op.scan, 1u);
          ASSERT_LE(op.scan, uint32_t(o.scan_length));
          lengths[op.scan]++;
        } else {
          ASSERT_EQ(op.scan, 0u);
          ASSERT_TRUE(reads.insert(op.key).second) << "a transaction's reads are distinct keys";
        }
      }
    }
    EXPECT_NEAR(double(inserts) / double(ops), 0.05, 0.01) << w;
    if (y.scans()) {
      for (int n = 1; n <= o.scan_length; n++) EXPECT_GT(lengths[n], 0) << n;
    }
  }
}

template <class P>
class YcsbDETest : public ::testing::Test {
 protected:
  using D = DeDb<P>;
  // A loaded database and the CC's services (Silo's epochs), both gone with the test.
  D& open(const Options& o) {
    db_ = std::make_unique<D>(path_.str(), o);
    svc_ = std::make_unique<test::CCServices<typename P::CC>>(2);
    return *db_;
  }
  TempPath path_{"ycsb-de"};
  std::unique_ptr<D> db_;
  std::unique_ptr<test::CCServices<typename P::CC>> svc_;
};
TYPED_TEST_SUITE(YcsbDETest, test::EngineCcPairs);

// After inserts commit, D's reads of the newest keys find the inserted rows with the inserted
// contents.
TYPED_TEST(YcsbDETest, YcsbDReadsWhatWasInserted) {
  using D = typename TestFixture::D;
  Options o = de_options("ycsb-d", 300, 2000);
  D& db = this->open(o);
  typename D::Mgr m(*db.eng, 0), check(*db.eng, 1);
  typename YcsbDE::Worker w(db.y, 0);
  std::map<uint64_t, std::string> inserted;
  while (inserted.size() < 40) {
    w.next();
    db.run(w, m, &inserted);
  }
  // One inserter: every key it took committed, so the mark covers them all.
  EXPECT_EQ(db.y.high_water(), o.rows + inserted.size());
  EXPECT_EQ(inserted.begin()->first, o.rows);
  for (auto& [k, img] : inserted) {
    uint64_t stored;
    memcpy(&stored, img.data(), 8);
    EXPECT_EQ(stored, k);
    EXPECT_EQ(db.read(check, k), img) << "inserted key " << k;
  }
  // D's reads: below the mark, skewed to the newest keys, and each inserted one reads back
  // what was inserted.
  uint64_t reads = 0, newest = 0;
  for (int t = 0; t < 300; t++) {
    uint64_t hw = db.y.high_water();
    w.next();
    db.run(w, m, &inserted);
    for (auto& op : w.ops()) {
      if (op.insert) continue;
      ASSERT_LT(op.key, hw);
      reads++;
      if (op.key >= o.rows) {
        newest++;
        ASSERT_TRUE(inserted.count(op.key));
        EXPECT_EQ(db.read(check, op.key), inserted[op.key]) << "read of inserted key " << op.key;
      }
    }
  }
  EXPECT_GT(double(newest) / double(reads), 0.3) << "theta 0.9: most reads go to the newest keys";
  EXPECT_EQ(db.y.high_water(), o.rows + inserted.size());
}

// Scans (E's draws, and scans from the newest keys) under concurrent inserts, a third of them rolled back once (and one key
// per rolled-back attempt never inserted at all), return strictly increasing keys and never a
// row of an uncommitted or rolled-back insert.
TYPED_TEST(YcsbDETest, YcsbEConcurrentScansSeeOrderedCommittedRows) {
  using D = typename TestFixture::D;
  Options o = de_options("ycsb-e", 200, 3000);
  D& db = this->open(o);
  constexpr uint64_t kGhost = 1ull << 30;  // keys only ever inserted by rolled-back attempts
  constexpr int kInserts = 1500;
  const uint32_t len = db.y.tuple_size();
  std::atomic<bool> done{false};
  std::atomic<uint64_t> scans{0};
  std::jthread inserter([&] {  // joined on the way out of a failed ASSERT too
    while (scans.load() == 0) std::this_thread::yield();  // start while the scans run
    typename D::Mgr m(*db.eng, 0);
    InsertKeys& keys = db.y.insert_keys();
    std::vector<char> img(len);
    auto fill = [&](uint64_t k, char mark) {
      memset(img.data(), mark, len);
      memcpy(img.data(), &k, 8);
    };
    for (int i = 0; i < kInserts; i++) {
      uint64_t k = keys.take();
      if (i % 3 == 0) {  // an attempt that rolls back
        m.begin();
        char* a = m.insert(Ycsb::kTable, k);
        char* g = a ? m.insert(Ycsb::kTable, kGhost + uint64_t(i)) : nullptr;
        if (a && g) {
          fill(k, 'A');
          memcpy(a, img.data(), len);
          fill(kGhost + uint64_t(i), 'A');
          memcpy(g, img.data(), len);
        }
        m.abort();
      }
      for (;;) {
        m.begin();
        char* c = m.insert(Ycsb::kTable, k);
        if (!c) { m.abort(); continue; }
        fill(k, 'C');
        memcpy(c, img.data(), len);
        if (m.commit()) break;
      }
      keys.committed(k);
      if (i % 8 == 0) std::this_thread::yield();  // let the scans in (a busy 2-core host)
    }
    done = true;
  });
  typename D::Mgr m(*db.eng, 1);
  Rng r(11);
  uint64_t inserted_rows_seen = 0, after_done = 0;
  std::vector<std::pair<uint64_t, std::string>> rows;
  while (!done.load() || after_done < 200) {
    // E's draw, and every other scan from just below the newest committed key, where the
    // inserts land.
    uint64_t hw = db.y.high_water();
    uint64_t start = scans.load() % 2 ? db.y.scan_start(r, hw) : hw - 1 - r.below(uint64_t(o.scan_length));
    size_t n = 1 + r.below(uint64_t(o.scan_length));
    rows.clear();
    m.begin(true);
    bool ok = m.scan(Ycsb::kTable, start, ~0ull, n, [&](uint64_t k, const char* img) {
      rows.emplace_back(k, std::string(img, len));
      return true;
    });
    if (!ok || !m.commit()) {
      if (!ok) m.abort();
      continue;
    }
    scans++;
    after_done += done.load();
    ASSERT_LE(rows.size(), n);
    for (size_t i = 0; i < rows.size(); i++) {
      auto& [k, img] = rows[i];
      if (i) {
        ASSERT_LT(rows[i - 1].first, k) << "scan from " << start;
      }
      ASSERT_GE(k, start);
      ASSERT_LT(k, kGhost) << "a key only a rolled-back insert held";
      uint64_t stored;
      memcpy(&stored, img.data(), 8);
      ASSERT_EQ(stored, k) << "the row of another key, or an uninstalled image";
      if (k >= o.rows) {
        inserted_rows_seen++;
        ASSERT_EQ(img[len - 1], 'C') << "key " << k << ": a rolled-back insert's contents";
      }
    }
  }
  inserter.join();
  EXPECT_EQ(db.y.high_water(), o.rows + kInserts);
  EXPECT_GT(inserted_rows_seen, 0u) << "the scans met inserted rows";
  // Every committed insert is in the ordered index, in order, after the loaded rows.
  std::vector<uint64_t> all;
  m.begin(true);
  ASSERT_TRUE(m.scan(Ycsb::kTable, 0, ~0ull, 100000, [&](uint64_t k, const char*) { all.push_back(k); return true; }));
  ASSERT_TRUE(m.commit());
  ASSERT_EQ(all.size(), o.rows + kInserts);
  for (size_t i = 0; i < all.size(); i++) ASSERT_EQ(all[i], i);
}

namespace {
template <class Engine, class CC>
nlohmann::json de_run(const std::string& workload, uint64_t room, double seconds) {
  TempPath path("ycsb-de-run");
  Options o = de_options(workload, 5000, room);
  o.requests = 16;
  o.warmup_s = 0;
  o.duration_s = seconds;
  o.nvm_path = path.str();
  o.log_size = 16ull << 20;
  o.dram_size = 64ull << 20;  // 56 B tuples: smaller than their index entries
  RunContext ctx{o, "engine", "cc"};
  return run_pair<Engine, CC, YcsbDE>(ctx);
}

template <class Engine, class CC>
void de_runs() {
  for (const char* w : {"ycsb-d", "ycsb-e"}) {
    nlohmann::json out = de_run<Engine, CC>(w, 200000, 0.3);
    const auto& r = out["results"];
    const auto& de = out["workload"]["ycsb_de"];
    EXPECT_GT(r["committed_by_type"]["read"].get<uint64_t>(), 0u) << w;
    EXPECT_GT(r["committed_by_type"]["insert"].get<uint64_t>(), 0u) << w;
    EXPECT_GT(de["inserts"].get<uint64_t>(), 0u) << w;
    EXPECT_EQ(de["scan_order_violations"].get<uint64_t>(), 0u) << w;
    EXPECT_GT(de["high_water"].get<uint64_t>(), 5000u) << w;
    EXPECT_LE(de["high_water"].get<uint64_t>(), 5000u + de["insert_keys_taken"].get<uint64_t>()) << w;
    double ins = de["inserts"].get<double>();
    double others = std::string(w) == "ycsb-e" ? de["scans"].get<double>() : de["reads"].get<double>();
    EXPECT_NEAR(ins / (ins + others), 0.05, 0.02) << w;
    if (std::string(w) == "ycsb-e") {
      EXPECT_GT(de["scanned_rows"].get<uint64_t>(), de["scans"].get<uint64_t>()) << w;
    }
  }
}
}  // namespace

TEST(YcsbDE, RunsDAndEThroughTheDriverMmdbSilo) { de_runs<mmdb::Mmdb<cc::Silo>, cc::Silo>(); }
TEST(YcsbDE, RunsDAndEThroughTheDriverZenNoWait) { de_runs<zen::Zen<cc::NoWait>, cc::NoWait>(); }

// Inserts that use up --insert-rows stop the run with an error naming the flag (the engines'
// tables and DRAM budget hold exactly the room), never a crash.
TEST(YcsbDE, UsedUpInsertRoomIsAClearError) {
  for (const char* w : {"ycsb-d", "ycsb-e"}) {
    try {
      de_run<mmdb::Mmdb<cc::NoWait>, cc::NoWait>(w, 100, 5.0);
      ADD_FAILURE() << w << ": 5 s of inserts fit in 100 rows of room";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("--insert-rows 100"), std::string::npos) << e.what();
    }
    try {
      de_run<zen::Zen<cc::Silo>, cc::Silo>(w, 100, 5.0);
      ADD_FAILURE() << w << ": 5 s of inserts fit in 100 rows of room";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("--insert-rows 100"), std::string::npos) << e.what();
    }
  }
}
