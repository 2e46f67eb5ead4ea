// The same acknowledgement everywhere (issue 25 item 6): every engine reports commit-to-durable
// latency (results.durable_latency_us); Zen's commit, whose LP line is flushed without a fence,
// is durable only at its thread's next fence, and a read-only transaction that read it only
// then too; WBL's read-only transaction waits for the group-commit record that covers what it
// read.
#include <gtest/gtest.h>

#include <string>

#include "benchmarks/ycsb.h"
#include "concurrency_control/mcsi.h"
#include "concurrency_control/no_wait.h"
#include "concurrency_control/silo.h"
#include "storage/engines/mmdb/mmdb.h"
#include "storage/engines/nvmvcc/nvmvcc.h"
#include "storage/engines/wbl/wbl.h"
#include "storage/engines/zen/zen.h"
#include "system/driver.h"
#include "tests/unit/engine_util.h"
#include "tests/unit/zen_db.h"

using namespace nvt;
using nvt::test::DbOptions;
using nvt::test::TempPath;

namespace {

template <class Mgr>
bool add_to(Mgr& m, uint64_t k, int64_t delta) {
  m.begin();
  char* d = m.write(0, k);
  if (!d) { m.abort(); return false; }
  nvt::test::set_balance(d, nvt::test::balance_of(d) + delta);
  return m.commit();
}

template <class Mgr>
bool read_one(Mgr& m, uint64_t k) {
  m.begin(true);
  if (!m.read(0, k)) { m.abort(); return false; }
  return m.commit();
}

}  // namespace

// Algorithm 1 flushes the LP line without a fence: the commit is not durable when commit()
// returns, the writer's next read-write commit (its fence) makes it durable, and a reader of
// the unfenced write on another thread is durable only then as well.
TEST(ZenDurability, CommitIsDurableAtItsThreadsNextFenceAndSoIsItsReader) {
  TempPath p("durable-zen");
  DbOptions o;
  o.rows = 200;
  nvt::test::ZenDb<cc::Silo> db(p.str(), o);
  db.load(100);
  auto& eng = *db.eng;
  TxnManager<zen::Zen<cc::Silo>, cc::Silo> w(eng, 0), r(eng, 1);

  ASSERT_TRUE(add_to(w, 5, 1));
  const uint64_t first = eng.commit_token(eng.thread(0));
  EXPECT_LT(eng.durable_point().first, first) << "LP flushed, not fenced: not durable yet";

  ASSERT_TRUE(read_one(r, 5));
  const uint64_t reader = eng.commit_token(eng.thread(1));
  EXPECT_GE(reader, first);
  EXPECT_LT(eng.durable_point().first, reader) << "it read a write that is not durable";

  ASSERT_TRUE(add_to(w, 6, 1));  // its fence makes the first commit's LP durable
  const uint64_t second = eng.commit_token(eng.thread(0));
  EXPECT_GT(second, first);
  EXPECT_GE(eng.durable_point().first, first) << "the writer's next fence covers its last LP";
  EXPECT_GE(eng.durable_point().first, reader);
  EXPECT_LT(eng.durable_point().first, second);

  eng.sync(eng.thread(0));
  EXPECT_GE(eng.durable_point().first, second) << "sync() fences the last LP";
}

// WBL: a read-only transaction that read a version no group-commit record covers yet is not
// durable until one does.
TEST(WblDurability, ReaderWaitsForTheRecordCoveringWhatItRead) {
  TempPath p("durable-wbl");
  DbOptions o;
  o.rows = 200;
  nvt::test::PairDb<nvt::test::Pair<wbl::Wbl, cc::Silo>> db(p.str(), nvt::test::account_tables(o.rows),
                                                            "unit-test wbl-durable", o);
  char img[nvt::test::kTuple];
  for (uint64_t k = 0; k < o.rows; k++) {
    nvt::test::initial_image(img, k, 100);
    db.eng->load(db.eng->thread(0), 0, k, img);
  }
  db.eng->after_load();
  auto& eng = *db.eng;
  eng.start();  // the group-commit thread: records come every interval, not at each commit
  TxnManager<wbl::Wbl<cc::Silo>, cc::Silo> w(eng, 0), r(eng, 1);
  ASSERT_TRUE(add_to(w, 5, 1));
  ASSERT_TRUE(read_one(r, 5));
  const uint64_t written = eng.commit_token(eng.thread(0)), reader = eng.commit_token(eng.thread(1));
  EXPECT_GE(reader, written) << "the reader's token covers the version it read";
  eng.sync(eng.thread(1));
  EXPECT_GE(eng.durable_point().first, written);
  eng.stop();
}

namespace {

template <class Engine, class CC>
nlohmann::json ycsb_run(const std::string& engine, const std::string& cc, const std::string& path) {
  Options o;
  o.rows = 20000;
  o.threads = 2;
  o.warmup_s = 0;
  o.txns = 2000;  // per thread
  o.profile = "dram";
  o.nvm_path = path;
  o.log_size = 16ull << 20;
  RunContext ctx{o, engine, cc};
  return run_pair<Engine, CC, Ycsb>(ctx);
}

void expect_durable_latency(const nlohmann::json& out, bool lags) {
  auto& r = out["results"];
  ASSERT_TRUE(r.contains("durable_latency_us")) << out["config"]["engine"] << ": " << r.dump();
  auto& d = r["durable_latency_us"];
  auto& l = r["latency_us"];
  for (const char* q : {"avg", "p50", "p99"}) EXPECT_GE(d[q].get<double>(), l[q].get<double>()) << q;
  if (lags) {
    EXPECT_GT(d["avg"].get<double>(), l["avg"].get<double>()) << d.dump() << l.dump();
  } else {
    EXPECT_EQ(d, l) << "durable when commit() returns: the same histogram";
  }
}

}  // namespace

// Every engine reports durable_latency_us (FOEDUS: tests/e2e/test_foedus.sh): the same as
// latency_us where commit() returns durable (MMDB's fenced redo record, nvmvcc's fenced commit
// status), above it where durability lags (Zen's unfenced LP line, WBL's group commit).
TEST(DurableLatencyRun, ReportedForEveryEngine) {
  {
    TempPath p("durable-run-mmdb");
    expect_durable_latency(ycsb_run<mmdb::Mmdb<cc::NoWait>, cc::NoWait>("mmdb", "no_wait", p.str()), false);
  }
  {
    TempPath p("durable-run-nvmvcc");
    expect_durable_latency(ycsb_run<nvmvcc::NvMvcc<cc::Mcsi>, cc::Mcsi>("nvmvcc", "mcsi", p.str()), false);
  }
  {
    TempPath p("durable-run-zen");
    expect_durable_latency(ycsb_run<zen::Zen<cc::Silo>, cc::Silo>("zen", "silo", p.str()), true);
  }
  {
    TempPath p("durable-run-wbl");
    expect_durable_latency(ycsb_run<wbl::Wbl<cc::Silo>, cc::Silo>("wbl", "silo", p.str()), true);
  }
}
