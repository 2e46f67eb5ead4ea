// The YCSB forms of the other papers: NVCaracal's hot rows (k of the requests from the hot
// set, counted), MCSI's request range, and Zen+'s long-running transactions (their key ranges,
// and a run where they commit while the normal transactions keep committing).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "benchmarks/ycsb.h"
#include "concurrency_control/no_wait.h"
#include "concurrency_control/silo.h"
#include "storage/engines/mmdb/mmdb.h"
#include "storage/engines/zen/zen.h"
#include "system/driver.h"
#include "tests/unit/test_util.h"

using namespace nvt;
using nvt::test::TempPath;

TEST(YcsbForms, HotRequestsComeFromTheHotSetExactly) {
  Options o;
  o.rows = 10000;
  o.requests = 10;
  o.read_ratio = 0;
  for (int k : {0, 4, 7, 10}) {
    o.hot_requests = k;
    o.hot_rows = 256;
    Ycsb y(o);
    Ycsb::Worker w(y, 0);
    std::set<uint64_t> hot_seen;
    for (int t = 0; t < 2000; t++) {
      w.next();
      ASSERT_EQ(w.keys().size(), 10u);
      std::set<uint64_t> distinct(w.keys().begin(), w.keys().end());
      ASSERT_EQ(distinct.size(), 10u);
      int hot = 0;
      for (uint64_t key : w.keys()) {
        ASSERT_LT(key, o.rows);
        if (y.is_hot(key)) { hot++; hot_seen.insert(key); }
      }
      ASSERT_EQ(hot, k);
    }
    if (k > 0) {
      EXPECT_GT(hot_seen.size(), 200u);  // the draws cover the 256 hot rows
    }
    EXPECT_LE(hot_seen.size(), 256u);
  }
}

TEST(YcsbForms, RequestsMinDrawsEverySizeInRange) {
  Options o;
  o.rows = 1000;
  o.requests = 5;
  o.requests_min = 1;
  Ycsb y(o);
  Ycsb::Worker w(y, 3);
  std::map<size_t, int> sizes;
  for (int t = 0; t < 5000; t++) {
    w.next();
    ASSERT_GE(w.keys().size(), 1u);
    ASSERT_LE(w.keys().size(), 5u);
    sizes[w.keys().size()]++;
  }
  ASSERT_EQ(sizes.size(), 5u);
  for (auto& [n, c] : sizes) EXPECT_NEAR(c / 5000.0, 0.2, 0.03) << n;
  o.requests_min = 0;  // off: always --requests
  Ycsb fixed(o);
  Ycsb::Worker f(fixed, 0);
  for (int t = 0; t < 100; t++) { f.next(); ASSERT_EQ(f.keys().size(), 5u); }
}

TEST(YcsbForms, LongTransactionsFollowGapSizesAndDisjointRange) {
  Options o;
  o.rows = 10000;
  o.requests = 4;
  o.threads = 2;
  o.long_txn = "update";
  o.long_txn_sizes = {300, 700};
  o.long_txn_gap = 3;
  o.long_txn_disjoint = true;
  Ycsb y(o);
  EXPECT_EQ(y.normal_rows(), 10000u - 700u);
  Ycsb::Worker lt(y, 0), normal(y, 1);
  struct FakeMgr {
    std::vector<Access> none;
    const std::vector<Access>& accesses() const { return none; }
  };
  FakeMgr m;
  std::vector<size_t> long_sizes;
  for (int t = 0; t < 40; t++) {
    lt.next();
    if (lt.is_long()) {
      long_sizes.push_back(lt.keys().size());
      for (size_t i = 0; i < lt.keys().size(); i++) {
        ASSERT_GE(lt.keys()[i], y.normal_rows());
        ASSERT_LT(lt.keys()[i], o.rows);
        if (i) {
          ASSERT_EQ(lt.keys()[i], lt.keys()[i - 1] + 1);  // consecutive rows
        }
      }
    } else {
      for (uint64_t k : lt.keys()) ASSERT_LT(k, y.normal_rows());
    }
    lt.acknowledged(m);  // as if it committed
    normal.next();
    ASSERT_FALSE(normal.is_long());  // only threads below --long-txn-threads run them
    for (uint64_t k : normal.keys()) ASSERT_LT(k, y.normal_rows());
  }
  // Three normal transactions, then a long one; the sizes in turn.
  ASSERT_EQ(long_sizes.size(), 10u);
  for (size_t i = 0; i < long_sizes.size(); i++) EXPECT_EQ(long_sizes[i], i % 2 ? 700u : 300u);
}

template <class Engine, class CC>
void long_txn_run(const std::string& kind) {
  TempPath path("ycsb-long");
  Options o;
  o.rows = 20000;
  o.threads = 2;
  o.warmup_s = 0;
  o.duration_s = 0.5;
  o.profile = "dram";
  o.nvm_path = path.str();
  o.log_size = 16ull << 20;
  o.long_txn = kind;
  o.long_txn_sizes = {1000};
  o.long_txn_gap = 5;
  o.long_txn_disjoint = kind == "update";
  RunContext ctx{o, "engine", "cc"};
  nlohmann::json out = run_pair<Engine, CC, Ycsb>(ctx);
  uint64_t longs = out["workload"]["long_txns_committed"].get<uint64_t>();
  uint64_t committed = out["results"]["committed"].get<uint64_t>();
  EXPECT_GT(longs, 0u) << kind;
  EXPECT_EQ(out["workload"]["long_txn_rows_committed"].get<uint64_t>(), longs * 1000);
  EXPECT_GT(committed, longs + 1000) << kind << ": the normal transactions keep committing";
  // By kind, in the measured phase: at most the all-phase count (a commit after the stop is
  // not measured).
  auto& by = out["results"]["committed_by_type"];
  uint64_t measured_longs = by["long"].get<uint64_t>();
  EXPECT_EQ(by["normal"].get<uint64_t>() + measured_longs, committed) << kind;
  EXPECT_GT(measured_longs, 0u) << kind;
  EXPECT_LE(measured_longs, longs) << kind;
  double secs = out["results"]["measured_s"].get<double>();
  EXPECT_NEAR(out["results"]["throughput_by_type_tps"]["long"].get<double>(), double(measured_longs) / secs, 1e-6);
}

TEST(YcsbForms, LongScanRunsWhileNormalOnesCommitMmdb) { long_txn_run<mmdb::Mmdb<cc::NoWait>, cc::NoWait>("scan"); }
TEST(YcsbForms, LongUpdateRunsWhileNormalOnesCommitMmdb) { long_txn_run<mmdb::Mmdb<cc::Silo>, cc::Silo>("update"); }
TEST(YcsbForms, LongScanRunsWhileNormalOnesCommitZen) { long_txn_run<zen::Zen<cc::Silo>, cc::Silo>("scan"); }
TEST(YcsbForms, LongUpdateRunsWhileNormalOnesCommitZen) { long_txn_run<zen::Zen<cc::NoWait>, cc::NoWait>("update"); }
