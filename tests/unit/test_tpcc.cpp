// TPC-C: the loader's row counts against the specification (clause 4.3.3.1) for one warehouse,
// and short concurrent runs of the standard, TPCC-NP and deterministic mixes through the run
// driver on both engines with NO_WAIT and Silo, and of the MCSI paper's mix (NewOrder:Payment
// 45:55) and the standard one on nvmvcc with MCSI and PGSI, after which consistency conditions
// 1-4 hold, and again after recovering the image.
#include <gtest/gtest.h>

#include "concurrency_control/mcsi.h"
#include "concurrency_control/pgsi.h"
#include "storage/engines/nvmvcc/nvmvcc.h"
#include "storage/engines/zen/zen.h"
#include "system/driver.h"
#include "tests/unit/engine_util.h"

using namespace nvt;
using nvt::test::TempPath;

namespace {

template <class E, class C>
struct Pair {
  using Engine = E;
  using CC = C;
};

Options tiny(const std::string& path) {
  Options o;
  o.workload = "tpcc";
  o.threads = 2;
  o.warmup_s = 0.05;
  o.duration_s = 0.3;
  o.warehouses = 1;
  o.tpcc_new_orders = 20000;
  o.profile = "dram";
  o.nvm_path = path;
  o.recovery_threads = 2;
  return o;
}

}  // namespace

TEST(Tpcc, LoaderRowCountsMatchTheSpecificationForOneWarehouse) {
  TempPath p("tpcc-load");
  Options o = tiny(p.str());
  Tpcc bench(o);
  auto tables = bench.tables();
  using Engine = mmdb::Mmdb<cc::NoWait>;
  EngineOptions eo;
  eo.threads = 2;
  eo.log_bytes = 4ull << 20;
  eo.checkpoint_after_load = false;
  dev::DeviceOptions d = test::device_options(p.str(), Engine::nvm_bytes(tables, eo) + (64ull << 20), "dram",
                                              "engine=mmdb " + bench.layout());
  dev::NvmImage nvm(d);
  dev::DramBudget dram(1ull << 30);
  EngineEnv env{nvm, dram, eo};
  Engine eng(env, tables);
  bench.load(eng, 2);
  std::vector<char> buf(1024);
  uint64_t v;
  auto count = [&](uint32_t t, uint64_t lo, uint64_t hi, auto key) {
    uint64_t n = 0;
    for (uint64_t i = lo; i <= hi; i++) n += eng.read_current(t, key(i), buf.data(), v);
    return n;
  };
  using K = tpcc::Keys;
  EXPECT_EQ(count(tpcc::kWarehouse, 1, 2, [](uint64_t i) { return K::warehouse(uint32_t(i)); }), 1u);
  EXPECT_EQ(count(tpcc::kDistrict, 1, 11, [](uint64_t i) { return K::district(1, uint32_t(i)); }), 10u);
  EXPECT_EQ(count(tpcc::kItem, 1, 100001, [](uint64_t i) { return K::item(uint32_t(i)); }), 100000u);
  EXPECT_EQ(count(tpcc::kStock, 1, 100001, [](uint64_t i) { return K::stock(1, uint32_t(i)); }), 100000u);
  uint64_t customers = 0, history = 0;
  for (uint32_t dd = 1; dd <= 10; dd++) {
    customers += count(tpcc::kCustomer, 1, 3001, [&](uint64_t i) { return K::customer(1, dd, uint32_t(i)); });
    history += count(tpcc::kHistory, 1, 3000, [&](uint64_t i) { return Tpcc::history_key(0, (10 + dd) * 3000 + i); });
  }
  EXPECT_EQ(customers, 30000u);
  EXPECT_EQ(history, 30000u);
  auto c = tpcc::check_consistency(eng, 1, true);
  EXPECT_EQ(c["violations"].get<uint64_t>(), 0u) << c.dump();
  EXPECT_EQ(c["orders"].get<uint64_t>(), 30000u);
  EXPECT_EQ(c["new_orders"].get<uint64_t>(), 9000u);
  uint64_t lines = c["order_lines"].get<uint64_t>();  // 5..15 per order, 10 on average
  EXPECT_GT(lines, 290000u);
  EXPECT_LT(lines, 310000u);
  // Customer last names: the first 1000 of a district take every name once (clause 4.3.3.1).
  char name[16];
  tpcc::last_name(371, name);
  EXPECT_STREQ(name, "PRICALLYOUGHT");
  EXPECT_NE(eng.read_current(tpcc::kCustomerByName, K::customer_by_name(1, 1, 371, 372), buf.data(), v), false);
}

template <class P>
class TpccRun : public ::testing::Test {};
using Pairs = ::testing::Types<Pair<mmdb::Mmdb<cc::NoWait>, cc::NoWait>, Pair<mmdb::Mmdb<cc::Silo>, cc::Silo>,
                               Pair<zen::Zen<cc::NoWait>, cc::NoWait>, Pair<zen::Zen<cc::Silo>, cc::Silo>>;
TYPED_TEST_SUITE(TpccRun, Pairs);

// A short run of `mix` (2 threads), then a recovery of its image: every type in the mix
// commits, NewOrders are counted as tpmC, and conditions 1-4 hold after both.
template <class E, class C>
void run_and_recover(const TempPath& p, const std::string& mix, int warehouses,
                     const std::vector<std::string>& types) {
  Options o = tiny(p.str());
  o.tpcc_mix = mix;
  o.warehouses = warehouses;
  o.neworder_remote_pct = 10;
  RunContext ctx{o, E::name, C::name};
  nlohmann::json out = run_pair<E, C, Tpcc>(ctx);
  auto& c = out["consistency"];
  EXPECT_EQ(c["violations"].template get<uint64_t>(), 0u) << mix << " " << c.dump();
  auto& by = out["results"]["committed_by_type"];
  for (const std::string& k : types) EXPECT_GT(by[k].template get<uint64_t>(), 0u) << mix << " " << k;
  EXPECT_GT(out["results"]["tpmC"].template get<double>(), 0.0);
  Options r = o;
  r.recover = true;
  RunContext rctx{r, E::name, C::name};
  nlohmann::json rec = run_pair<E, C, Tpcc>(rctx);
  EXPECT_EQ(rec["consistency"]["violations"].template get<uint64_t>(), 0u) << mix << " " << rec["consistency"].dump();
  EXPECT_EQ(rec["invariants"]["violations"].template get<uint64_t>(), 0u) << rec["invariants"].dump();
  EXPECT_EQ(rec["consistency"]["orders"], c["orders"]) << "every committed order recovered";
  EXPECT_EQ(rec["consistency"]["new_orders"], c["new_orders"]);
}

const std::vector<std::string> kAllTypes = {"neworder", "payment", "order_status", "delivery", "stock_level"};

// Every transaction type commits, NewOrders are counted as tpmC, and conditions 1-4 hold after
// a concurrent run and after recovering its image.
TYPED_TEST(TpccRun, ConsistencyHoldsAfterConcurrentRunAndRecovery) {
  using E = typename TypeParam::Engine;
  using C = typename TypeParam::CC;
  TempPath p("tpcc-run");
  run_and_recover<E, C>(p, "standard", 2, kAllTypes);  // remote warehouses need two
  run_and_recover<E, C>(p, "deterministic", 1, kAllTypes);
}

// nvmvcc: the MCSI paper's mix (section 5.2: 45% NewOrder, 55% Payment) and the standard one,
// whose Delivery deletes and whose scans read snapshots; 2 threads. The name matches no part
// of make tsan's filter: TSan loads TPC-C for minutes.
template <class P>
class TpccOnNvmvcc : public ::testing::Test {};
using SiPairs = ::testing::Types<Pair<nvmvcc::NvMvcc<cc::Mcsi>, cc::Mcsi>, Pair<nvmvcc::NvMvcc<cc::Pgsi>, cc::Pgsi>>;
TYPED_TEST_SUITE(TpccOnNvmvcc, SiPairs);

TYPED_TEST(TpccOnNvmvcc, ConsistencyHoldsAfterRunAndRecovery) {
  using E = typename TypeParam::Engine;
  using C = typename TypeParam::CC;
  TempPath p("tpcc-nvmvcc");
  run_and_recover<E, C>(p, "neworder:45,payment:55", 1, {"neworder", "payment"});
  run_and_recover<E, C>(p, "standard", 1, kAllTypes);
}
