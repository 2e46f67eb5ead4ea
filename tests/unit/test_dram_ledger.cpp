// The one DRAM rule (issue 25 item 2, storage/device/dram_budget.h) for mmdb, zen, wbl and
// nvmvcc: the DRAM that holds data (MMDB's DRAM rows, Zen's Met-Cache, WBL's tuple cache) is
// charged as data and is at most database / P even when the budget has a large allowance beside
// it (SmallBank's and TPC-C's indexes), and the ledger is complete: what the engine allocated
// on the heap across construction, load and transactions is what its ledger says, within a
// stated tolerance.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "concurrency_control/mcsi.h"
#include "storage/engines/nvmvcc/nvmvcc.h"
#include "tests/unit/engine_util.h"
#include "tests/unit/heap_bytes.h"

using namespace nvt;
using nvt::test::Pair;
using nvt::test::TempPath;

namespace {

// 64 B accounts: 20k rows are a 1.28 MB database, 320 KB at P = 4.
constexpr uint64_t kRows = 20000;
constexpr double kP = 4.0;
constexpr uint64_t kDbBytes = kRows * nvt::test::kTuple;
constexpr uint64_t kDataCap = uint64_t(double(kDbBytes) / kP);
// The allowance beside the data, as the drivers give small-tuple benchmarks (side_dram_bytes):
// far more than the data cap, so an engine that sized its cache from the whole budget left
// would put it into cache.
constexpr uint64_t kAllowance = 16ull << 20;

// What the heap may differ from the ledger by. Under ASan/TSan the allocator counts requested
// bytes exactly: 64 KB covers the engine's small dynamic structures (per-thread vectors, the
// Met-Cache's dead lists, the CC's per-thread sets beyond the private allowance). jemalloc
// rounds large blocks up by up to 25%.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double kRounding = 0.01;
#else
constexpr double kRounding = 0.25;
#endif
constexpr uint64_t kSlack = 64 << 10;

bool is_reservation(const std::string& what) {
  // Charged up front as bounds, filled (if ever) as the run goes: per-thread private buffers,
  // the allocators' free lists (one pointer per heap slot at most).
  return what == "private" || what.ends_with(".allocator");
}

}  // namespace

template <class P>
class DramLedgerTest : public ::testing::Test {
 protected:
  using Engine = typename P::Engine;
  using CC = typename P::CC;
  using Mgr = TxnManager<Engine, CC>;

  // The engine over a fresh image with the drivers' budget (data cap + allowance) and data cap
  // (database / P). `heap0`: the heap before the budget and engine exist.
  void build(const std::string& path) {
    tables = nvt::test::account_tables(kRows);
    eo.threads = 2;
    eo.log_bytes = 4ull << 20;
    eo.checkpoint_after_load = false;
    dev::DeviceOptions d = nvt::test::device_options(path, Engine::nvm_bytes(tables, eo) + (16ull << 20), "dram",
                                                     std::string("engine=") + Engine::name + " " +
                                                         nvt::test::layout_of(tables));
    d.writer_threads = eo.threads;
    nvm = std::make_unique<dev::NvmImage>(d);
    heap0 = nvt::test::heap_allocated_bytes();
    dram = std::make_unique<dev::DramBudget>(kDataCap + kAllowance, kDataCap);
    env = std::make_unique<EngineEnv>(EngineEnv{*nvm, *dram, eo});
    eng = std::make_unique<Engine>(*env, tables);
    nvm->publish();
    char img[nvt::test::kTuple];
    auto& th = eng->thread(0);
    for (uint64_t k = 0; k < kRows; k++) {
      nvt::test::initial_image(img, k, 100);
      eng->load(th, 0, k, img);
    }
    eng->after_load();
  }
  // Transfers and reads on both workers' contexts (one OS thread: no thread's own allocations).
  void run_some() {
    for (int t = 0; t < eo.threads; t++) {
      Mgr m(*eng, t);
      for (uint64_t i = 0; i < 2000; i++) {
        uint64_t a = (i * 7919 + uint64_t(t)) % kRows, b = (i * 104729 + 13) % kRows;
        if (a != b) nvt::test::transfer(m, a, b, 1);
        m.begin(true);
        for (uint64_t k = 0; k < 8; k++) m.read(0, (i * 31 + k * 2477) % kRows);
        m.commit();
      }
    }
  }
  void TearDown() override {
    if (eng) eng->stop();
    eng.reset();
    env.reset();
    dram.reset();
    nvm.reset();
  }

  std::vector<TableInfo> tables;
  EngineOptions eo;
  std::unique_ptr<dev::NvmImage> nvm;
  std::unique_ptr<dev::DramBudget> dram;
  std::unique_ptr<EngineEnv> env;
  std::unique_ptr<Engine> eng;
  uint64_t heap0 = 0;
};

using LedgerPairs = ::testing::Types<Pair<mmdb::Mmdb, cc::Silo>, Pair<zen::Zen, cc::Silo>,
                                     Pair<wbl::Wbl, cc::Silo>, Pair<nvmvcc::NvMvcc, cc::Mcsi>>;
TYPED_TEST_SUITE(DramLedgerTest, LedgerPairs);

// The DRAM holding tuples is marked data and stays within database / P although the budget
// has 16 MB more (nvmvcc keeps no data in DRAM: nothing of it is data).
TYPED_TEST(DramLedgerTest, DataIsAtMostDatabaseOverP) {
  TempPath p(std::string("ledger-data-") + TestFixture::Engine::name);
  this->build(p.str());
  this->run_some();
  auto& dram = *this->dram;
  auto kinds = dram.kinds();
  uint64_t data = 0, tuples = 0;
  for (auto& [what, bytes] : dram.breakdown()) {
    // (a cache's `.floor`, its working-set minimum beyond the cap, is overhead: not here)
    const bool holds_tuples = (what.starts_with("rows.") || what.starts_with("metcache.") ||
                               what.starts_with("tuple_cache.")) && !what.ends_with(".floor");
    EXPECT_EQ(kinds[what] == dev::DramUse::Data, holds_tuples) << what << " holds tuples: data; else overhead";
    if (kinds[what] == dev::DramUse::Data) data += bytes;
    if (holds_tuples) tuples += bytes;
  }
  EXPECT_EQ(data, dram.data_used());
  EXPECT_LE(tuples, kDataCap) << "the DRAM holding tuples is above database / P";
  EXPECT_LE(dram.data_used(), kDataCap) << "data DRAM above database / P";
  if (std::string(TestFixture::Engine::name) != "nvmvcc") {
    EXPECT_GE(double(dram.data_used()), 0.5 * double(kDataCap)) << "the data cap is there to be used";
  }
  EXPECT_GE(dram.left(), kAllowance / 2) << "the allowance beside the data is not turned into cache";
}

// Every byte the engine allocated is in its ledger, and what the ledger says was allocated was.
TYPED_TEST(DramLedgerTest, LedgerMatchesWhatTheEngineAllocated) {
  TempPath p(std::string("ledger-heap-") + TestFixture::Engine::name);
  this->build(p.str());
  this->run_some();
  const uint64_t heap = nvt::test::heap_allocated_bytes() - this->heap0;
  auto& dram = *this->dram;
  uint64_t reserved = 0;
  for (auto& [what, bytes] : dram.breakdown())
    if (is_reservation(what)) reserved += bytes;
  const uint64_t ledger = dram.used();
  EXPECT_LE(double(heap), double(ledger) * (1 + kRounding) + double(kSlack))
      << "allocated " << heap << " B, ledger " << ledger << " B: something allocated is not in the ledger";
  EXPECT_GE(double(heap) + double(kSlack), double(ledger - reserved))
      << "allocated " << heap << " B, ledger " << ledger << " B (" << reserved
      << " B of it reservations): the ledger lists memory that was never allocated";
}

// A database whose data cap is below Zen's minimum Met-Cache (a transaction's working set per
// region) still runs: the cache holds the minimum, charged as data up to database / P and the
// floor beyond it listed apart as overhead.
TEST(DramLedger, ZenBelowItsWorkingSetKeepsTheFloorAsOverhead) {
  TempPath p("ledger-floor");
  std::vector<TableInfo> tables = nvt::test::account_tables(200);  // 12.8 KB: a 3.2 KB data cap
  EngineOptions eo;
  eo.threads = 2;
  using E = zen::Zen<cc::Silo>;
  dev::DeviceOptions d = nvt::test::device_options(p.str(), E::nvm_bytes(tables, eo) + (16ull << 20), "dram",
                                                   std::string("engine=zen ") + nvt::test::layout_of(tables));
  dev::NvmImage nvm(d);
  const uint64_t cap = 200 * nvt::test::kTuple / 4;
  dev::DramBudget dram(cap + kAllowance, cap);
  EngineEnv env{nvm, dram, eo};
  {
    E eng(env, tables);
    auto b = dram.breakdown();
    auto k = dram.kinds();
    ASSERT_TRUE(b.count("metcache.accounts.floor")) << "the minimum is above the cap";
    EXPECT_EQ(k["metcache.accounts"], dev::DramUse::Data);
    EXPECT_EQ(k["metcache.accounts.floor"], dev::DramUse::Overhead);
    EXPECT_EQ(b["metcache.accounts"], cap) << "data fills the cap, no more";
    EXPECT_EQ(dram.data_used(), cap);
    EXPECT_EQ(b["metcache.accounts"] + b["metcache.accounts.floor"],
              2 * zen::kMinEntriesPerRegion * E::Cache::entry_bytes(nvt::test::kTuple))
        << "exactly the working-set minimum, the allowance not turned into cache";
  }
}
