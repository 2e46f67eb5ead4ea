// The device model's counters per engine (issue 17): one known transaction, one 1 KB update,
// writes the NVM bytes its persistence protocol says, each store counted once (by its flush;
// dev::write only for stores that reach NVM without one), so a double count fails. Recovery
// reads NVM through the model on every engine; background threads' traffic is counted in the
// measured phase; the abort causes sum to the aborts.
#include <gtest/gtest.h>

#include <cstring>

#include "benchmarks/ycsb.h"
#include "concurrency_control/cicada.h"
#include "concurrency_control/mcsi.h"
#include "concurrency_control/no_wait.h"
#include "concurrency_control/pgsi.h"
#include "concurrency_control/silo.h"
#include "storage/engines/mmdb/mmdb.h"
#include "storage/engines/nvmvcc/nvmvcc.h"
#include "storage/engines/wbl/wbl.h"
#include "storage/engines/zen/zen.h"
#include "system/driver.h"
#include "tests/unit/engine_util.h"

using namespace nvt;
using nvt::test::TempPath;

namespace {

constexpr uint32_t kTupleBytes = 1024;
constexpr uint64_t kRows = 64;
constexpr uint64_t kU = dev::kUnit;

std::vector<TableInfo> kb_tables() {
  Schema s;
  s.add("key", 8).add("payload", kTupleBytes - 8);
  return {{0, "kb", s, kRows}};
}

// Expected NVM write units of one 1 KB update, per engine: the tuple with its header or log
// framing (5 units when its start is not 256 B aligned, 4 or 5 otherwise), plus the small
// persistent words the protocol flushes, one unit each. [lo, hi] allows the alignment.
struct Expect {
  uint64_t lo, hi;
};
template <class P> Expect expected();
// Observed (1 KB tuple): MMDB 5 units, Zen 6, NVMVCC 10 (20 when each flushed store was counted
// twice, by dev::write and again by its flush).
// MMDB: one redo record (24 B header, 24 B entry, 1 KB image); rows in DRAM.
template <> Expect expected<test::Pair<mmdb::Mmdb, cc::NoWait>>() { return {5, 6}; }
// Zen: the tuple's new version (header + 1 KB) flushed, its header line flushed again as LP.
template <> Expect expected<test::Pair<zen::Zen, cc::NoWait>>() { return {5, 7}; }
// NVMVCC: version header, head pointer, status `running`, payload, final status, inline status.
template <> Expect expected<test::Pair<nvmvcc::NvMvcc, cc::Mcsi>>() { return {4 + 5, 5 + 5}; }
// PGSI: the clog word cleared at start instead of MCSI's `running`, otherwise the same.
template <> Expect expected<test::Pair<nvmvcc::NvMvcc, cc::Pgsi>>() { return {4 + 5, 5 + 5}; }

template <class P>
class Counters : public ::testing::Test {};
using CounterPairs =
    ::testing::Types<test::Pair<mmdb::Mmdb, cc::NoWait>, test::Pair<zen::Zen, cc::NoWait>,
                     test::Pair<nvmvcc::NvMvcc, cc::Mcsi>, test::Pair<nvmvcc::NvMvcc, cc::Pgsi>>;
TYPED_TEST_SUITE(Counters, CounterPairs);

test::DbOptions kb_options(int threads) {
  test::DbOptions o;
  o.threads = threads;
  o.rows = kRows;
  return o;
}

template <class Db>
void load_kb(Db& db) {
  char img[kTupleBytes];
  auto& th = db.eng->thread(0);
  for (uint64_t k = 0; k < kRows; k++) {
    memset(img, int(k), sizeof img);
    memcpy(img, &k, 8);
    db.eng->load(th, 0, k, img);
  }
  db.eng->after_load();
}

TYPED_TEST(Counters, OneKilobyteUpdateCountsEachNvmStoreOnce) {
  using P = TypeParam;
  TempPath p("counters");
  test::PairDb<P> db(p.str(), kb_tables(), "counters", kb_options(1));
  load_kb(db);
  test::CCServices<typename P::CC> services(1);
  typename test::PairDb<P>::Mgr m(*db.eng, 0);
  // The first update after the load and a second one, in the steady state: both pinned.
  for (uint64_t key : {7ull, 9ull}) {
    dev::Counters c0 = dev::my_counters();
    m.begin();
    char* x = m.write(0, key);
    ASSERT_NE(x, nullptr);
    memset(x + 8, 0x5a, kTupleBytes - 8);
    ASSERT_TRUE(m.commit());
    dev::Counters d = dev::my_counters() - c0;
    Expect e = expected<P>();
    SCOPED_TRACE("key " + std::to_string(key) + ": " + std::to_string(d.nvm_write_bytes) +
                 " NVM bytes written, " + std::to_string(d.clwb) + " clwb, " +
                 std::to_string(d.sfence) + " sfence");
    EXPECT_GE(d.nvm_write_bytes, e.lo * kU);
    EXPECT_LE(d.nvm_write_bytes, e.hi * kU);
    // Every flushed line is counted once: at most 4 lines per 256 B unit written.
    EXPECT_LE(d.clwb * dev::kLine, d.nvm_write_bytes);
  }
}

// Recovery reads the image through the device model: at least one 256 B unit per loaded row
// (MMDB: each checkpoint record, a 1 KB tuple; Zen: each tuple header; NVMVCC: each record
// head and its version header), counted on the recovering thread and its helpers.
TYPED_TEST(Counters, RecoveryReadsAreCounted) {
  using P = TypeParam;
  TempPath p("counters-recovery");
  test::DbOptions o = kb_options(2);
  {
    test::PairDb<P> db(p.str(), kb_tables(), "counters", o);
    load_kb(db);
  }
  test::PairDb<P> db(p.str(), kb_tables(), "counters", o, true);
  dev::Counters c0 = dev::my_counters(), p0 = dev::published();
  RecoveryReport rep = db.eng->recover(2);
  dev::Counters d = dev::my_counters() - c0;
  d += dev::published() - p0;
  EXPECT_EQ(rep.rows, kRows);
  uint64_t per_row = std::is_same_v<typename P::Engine, mmdb::Mmdb<typename P::CC>> ? kTupleBytes : kU;
  EXPECT_GE(d.nvm_read_bytes, kRows * per_row) << d.nvm_read_bytes << " NVM bytes read by recovery";
}

// A YCSB run on MMDB whose small redo logs make the checkpointer run while workers do: its
// traffic is in per_txn and shown apart as per_txn.background; the abort causes sum to the
// aborts; a recovery reports what it read and what it was charged.
TEST(CountersRun, MmdbCheckpointerCountedInMeasuredPhaseAndRecoveryReported) {
  TempPath path("counters-run");
  Options o;
  o.rows = 20000;
  o.threads = 2;
  o.warmup_s = 0.05;
  o.duration_s = 0.5;
  o.profile = "dram";
  o.nvm_path = path.str();
  o.log_size = 2ull << 20;
  o.checkpoint_fill = 0.05;
  RunContext ctx{o, "mmdb", "no_wait"};
  nlohmann::json out = run_pair<mmdb::Mmdb<cc::NoWait>, cc::NoWait, Ycsb>(ctx);
  auto& r = out["results"];
  ASSERT_GT(r["engine"]["background_checkpoints"].get<uint64_t>(), 0u) << r.dump();
  auto& pt = r["per_txn"];
  EXPECT_GT(pt["background"]["nvm_write_bytes"].get<double>(), 0.0) << pt.dump();
  EXPECT_GT(pt["background"]["clwb"].get<double>(), 0.0) << pt.dump();
  EXPECT_GE(pt["nvm_write_bytes"].get<double>(), pt["background"]["nvm_write_bytes"].get<double>());
  uint64_t sum = 0;
  for (auto& [cause, n] : r["aborts_by_cause"].items()) sum += n.get<uint64_t>();
  EXPECT_EQ(sum, r["aborted"].get<uint64_t>()) << r["aborts_by_cause"].dump();
  EXPECT_TRUE(r.contains("rolled_back"));

  Options rec = o;
  rec.recover = true;
  rec.recovery_threads = 2;
  RunContext rctx{rec, "mmdb", "no_wait"};
  nlohmann::json ro = run_pair<mmdb::Mmdb<cc::NoWait>, cc::NoWait, Ycsb>(rctx);
  auto& rv = ro["recovery"];
  EXPECT_GE(rv["nvm_read_bytes"].get<uint64_t>(), o.rows * 256) << rv.dump();
  EXPECT_TRUE(rv.contains("charged_s"));  // its value depends on the host's calibration
}

// A contended NO_WAIT run: every retried transaction aborted at least once before it committed,
// so retried <= aborted and retried <= committed, and retry_rate is retried over committed.
TEST(CountersRun, RetriedTransactionsCountEachConflictedCommitOnce) {
  TempPath path("counters-retry");
  Options o;
  o.rows = 2000;
  o.dram_size = 64ull << 20;  // the default P share of 2000 rows leaves no room for buffers
  o.theta = 0.99;
  o.read_ratio = 0.5;
  o.threads = 2;
  o.warmup_s = 0;
  o.txns = 20000;  // per thread
  o.profile = "dram";
  o.nvm_path = path.str();
  o.log_size = 16ull << 20;
  RunContext ctx{o, "mmdb", "no_wait"};
  nlohmann::json out = run_pair<mmdb::Mmdb<cc::NoWait>, cc::NoWait, Ycsb>(ctx);
  auto& r = out["results"];
  uint64_t retried = r["retried"].get<uint64_t>(), committed = r["committed"].get<uint64_t>();
  uint64_t aborted = r["aborted"].get<uint64_t>();
  ASSERT_GT(aborted, 0u) << "theta 0.99 on 2000 rows must conflict for this test to mean anything";
  EXPECT_GT(retried, 0u) << r.dump();
  EXPECT_LE(retried, aborted);
  EXPECT_LE(retried, committed);
  EXPECT_DOUBLE_EQ(r["retry_rate"].get<double>(), double(retried) / double(committed));
}

// WBL: a commit is durable only once a group-commit record covers it, so its durable latency
// (to that record) is never below its latency to commit() and, with records 1 ms apart, above
// it on average; an engine durable at commit() reports durable_latency_us equal to latency_us.
TEST(CountersRun, WblDurableLatencyWaitsForTheGroupCommitRecord) {
  TempPath path("counters-durable");
  Options o;
  o.rows = 20000;
  o.threads = 2;
  o.warmup_s = 0;
  o.txns = 3000;  // per thread
  o.profile = "dram";
  o.group_commit_us = 1000;
  o.nvm_path = path.str();
  RunContext ctx{o, "wbl", "silo"};
  nlohmann::json out = run_pair<wbl::Wbl<cc::Silo>, cc::Silo, Ycsb>(ctx);
  auto& r = out["results"];
  ASSERT_TRUE(r.contains("durable_latency_us")) << r.dump();
  auto& d = r["durable_latency_us"];
  auto& l = r["latency_us"];
  EXPECT_GT(d["avg"].get<double>(), l["avg"].get<double>()) << d.dump() << l.dump();
  EXPECT_GE(d["p50"].get<double>(), l["p50"].get<double>());
  EXPECT_GE(d["p99"].get<double>(), l["p99"].get<double>());

  TempPath mpath("counters-durable-mmdb");
  o.nvm_path = mpath.str();
  o.log_size = 16ull << 20;
  RunContext mctx{o, "mmdb", "no_wait"};
  nlohmann::json m = run_pair<mmdb::Mmdb<cc::NoWait>, cc::NoWait, Ycsb>(mctx);
  EXPECT_EQ(m["results"]["durable_latency_us"], m["results"]["latency_us"]);
}

}  // namespace

// Zen+'s counters (results.engine.lrt) are the engine's own, not per worker: they too cover the
// measured phase only. Read-only YCSB on Zen+ with Cicada: every lookup is a snapshot reader's
// miss read in NVM (nothing is written, so nothing is cached), so the measured direct reads are
// about the measured commits' requests, where the warm-up alone ran thousands of them.
TEST(CountersRun, ZenLrtCountersCoverTheMeasuredPhaseOnly) {
  TempPath path("counters-lrt");
  Options o;
  o.rows = 20000;
  o.threads = 1;
  o.read_ratio = 1.0;
  o.warmup_s = 0.2;
  o.txns = 200;
  o.profile = "dram";
  o.zen_plus = true;
  o.nvm_path = path.str();
  RunContext ctx{o, "zen", "cicada"};
  nlohmann::json out = run_pair<zen::Zen<cc::Cicada>, cc::Cicada, Ycsb>(ctx);
  EXPECT_EQ(out["config"]["engine_variant"], "zen+");
  auto& r = out["results"];
  auto& lrt = r["engine"]["lrt"];
  uint64_t reads = lrt["direct_nvm_reads"].get<uint64_t>(), committed = r["committed"].get<uint64_t>();
  EXPECT_EQ(committed, 200u);
  EXPECT_GT(reads, 0u) << lrt.dump();
  // (plus the warm-up transaction each worker was in when the phase began)
  EXPECT_LE(reads, (committed + uint64_t(o.threads)) * uint64_t(o.requests)) << "warm-up counted: " << lrt.dump();
  EXPECT_EQ(lrt["exclusive_entries"].get<uint64_t>(), r["engine"]["exclusive_mode_entries"].get<uint64_t>());
}
