// TPC-C: the loader's row counts against the specification (clause 4.3.3.1) for one warehouse,
// and short concurrent runs of the standard, TPCC-NP and deterministic mixes through the run
// driver on both engines with NO_WAIT and Silo, and of the MCSI paper's mix (NewOrder:Payment
// 45:55) and the standard one on nvmvcc with MCSI and PGSI, after which consistency conditions
// 1-4 hold, and again after recovering the image.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <tuple>

#include "concurrency_control/mcsi.h"
#include "concurrency_control/pgsi.h"
#include "storage/engines/nvmvcc/nvmvcc.h"
#include "storage/engines/zen/zen.h"
#include "system/driver.h"
#include "tests/unit/engine_util.h"

using namespace nvt;
using nvt::test::TempPath;

// TPC-C rows are packed structs (tpcc_schema.h) and gtest's macros bind their arguments to
// const references, which UBSan rightly reports for a misaligned field: the _V forms take
// the values first.
template <class T>
T val(T x) { return x; }
#define ASSERT_EQ_V(a, b) ASSERT_EQ(val(a), val(b))
#define ASSERT_LT_V(a, b) ASSERT_LT(val(a), val(b))
#define EXPECT_DOUBLE_EQ_V(a, b) EXPECT_DOUBLE_EQ(val(a), val(b))
#define EXPECT_EQ_V(a, b) EXPECT_EQ(val(a), val(b))
#define EXPECT_NE_V(a, b) EXPECT_NE(val(a), val(b))
#define EXPECT_NEAR_V(a, b, e) EXPECT_NEAR(val(a), val(b), e)

namespace {

Options tiny(const std::string& path) {
  Options o;
  o.workload = "tpcc";
  o.threads = 2;
  // By count, not time: a fast host fills the tables' room for NewOrders in 0.3 s (CI did).
  o.warmup_s = 0;
  o.txns = 600;  // per thread; 4% Delivery and StockLevel still commit dozens each
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
TYPED_TEST_SUITE(TpccRun, test::EngineCcPairs);

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
using SiPairs = ::testing::Types<test::Pair<nvmvcc::NvMvcc, cc::Mcsi>, test::Pair<nvmvcc::NvMvcc, cc::Pgsi>>;
TYPED_TEST_SUITE(TpccOnNvmvcc, SiPairs);

TYPED_TEST(TpccOnNvmvcc, ConsistencyHoldsAfterRunAndRecovery) {
  using E = typename TypeParam::Engine;
  using C = typename TypeParam::CC;
  TempPath p("tpcc-nvmvcc");
  run_and_recover<E, C>(p, "neworder:45,payment:55", 1, {"neworder", "payment"});
  run_and_recover<E, C>(p, "standard", 1, kAllTypes);
}

// Clause 2.4.2.3: the 1% NewOrders that roll back on an unused item are completed transactions,
// counted in committed and tpmC, not aborts (the driver once counted them as user aborts).
TYPED_TEST(TpccRun, RolledBackNewOrdersCountAsCompletedNotAborted) {
  using E = typename TypeParam::Engine;
  using C = typename TypeParam::CC;
  TempPath p("tpcc-rollback");
  Options o = tiny(p.str());
  o.tpcc_mix = "neworder:1";
  o.txns = 1000;  // per thread
  RunContext ctx{o, E::name, C::name};
  nlohmann::json out = run_pair<E, C, Tpcc>(ctx);
  auto& r = out["results"];
  // Enough NewOrders that some rolled back (0.99^2000 < 1e-8), none of them a user abort.
  ASSERT_GE(r["committed"].template get<uint64_t>(), 2000u);
  EXPECT_EQ(r["aborts_by_cause"]["user"].template get<uint64_t>(), 0u) << r.dump();
  EXPECT_EQ(r["committed_by_type"]["neworder"], r["committed"]);
}

// Each transaction's effects with fixed inputs on a tiny database (2 warehouses, 200 items, 30
// customers and orders per district, the last 9 undelivered), checked against clause 2.4-2.8
// by reading the tables before and after, on both engines.
namespace {

using K = tpcc::Keys;
constexpr tpcc::Scale kTiny{200, 30, 9};

template <class P>
class TpccEffects : public ::testing::Test {
 protected:
  using Db = test::PairDb<P>;
  using Mgr = typename Db::Mgr;

  static Options options(const std::string& path) {
    Options o = tiny(path);
    o.warehouses = 2;
    o.tpcc_new_orders = 100;
    return o;
  }

  TpccEffects()
      : o_(options(path_.str())), bench_(o_, kTiny), db_(path_.str(), bench_.tables(), bench_.layout(), {.dram_bytes = 256ull << 20}) {
    bench_.load(*db_.eng, 1);
    db_.eng->after_load();
    svc_ = std::make_unique<test::CCServices<typename P::CC>>(2);
    m_ = std::make_unique<Mgr>(*db_.eng, 0);
    w_ = std::make_unique<Tpcc::Worker>(bench_, 0);
  }
  // Consistency conditions 1-4 hold after every test's transactions.
  void TearDown() override {
    auto c = tpcc::check_consistency(*db_.eng, 2, true);
    EXPECT_EQ(c["violations"].template get<uint64_t>(), 0u) << c.dump();
  }
  ~TpccEffects() override {
    m_.reset();
    svc_.reset();
  }

  // One transaction with the given inputs; true when it committed.
  template <class In>
  // One transaction; an attempt that aborted at validation is retried, as the driver retries
  // (FOEDUS aborts the first attempt of a snapshot read upgraded to a write, by design).
  bool run(const In& in) {
    for (int attempt = 0; attempt < 3; attempt++) {
      w_->set(in);
      m_->begin();
      if (w_->execute(*m_)) {
        if (m_->commit()) return true;
      } else if (m_->user_aborted()) {
        return false;
      } else {
        m_->abort();
      }
      if (m_->cause() != AbortCause::Validation) return false;
    }
    return false;
  }

  // The committed row of `table` at `key`, if any.
  template <class T>
  std::optional<T> row(uint32_t table, uint64_t key) {
    char buf[1024];
    uint64_t v;
    if (!db_.eng->read_current(table, key, buf, v)) return std::nullopt;
    T t;
    memcpy(&t, buf, sizeof t);
    return t;
  }
  template <class T>
  T get(uint32_t table, uint64_t key) {
    auto t = row<T>(table, key);
    EXPECT_TRUE(t.has_value()) << "table " << table << " key " << key;
    return t ? *t : T{};
  }
  std::string bytes(uint32_t table, uint64_t key) {
    char buf[1024];
    uint64_t v;
    if (!db_.eng->read_current(table, key, buf, v)) return {};
    return std::string(buf, db_.tables[table].schema.tuple_size());
  }
  tpcc::District district(uint32_t w, uint32_t d) { return get<tpcc::District>(tpcc::kDistrict, K::district(w, d)); }
  tpcc::Customer customer(uint32_t w, uint32_t d, uint32_t c) {
    return get<tpcc::Customer>(tpcc::kCustomer, K::customer(w, d, c));
  }
  tpcc::Stock stock(uint32_t w, uint32_t i) { return get<tpcc::Stock>(tpcc::kStock, K::stock(w, i)); }
  // The customers of (w, d) with last name number `last`, by brute force over the table.
  std::vector<uint32_t> named(uint32_t w, uint32_t d, uint32_t last) {
    char name[16];
    tpcc::last_name(last, name);
    std::vector<uint32_t> ids;
    for (uint32_t c = 1; c <= kTiny.customers; c++)
      if (memcmp(customer(w, d, c).c_last, name, 16) == 0) ids.push_back(c);
    return ids;
  }
  // The one at position ceil(n/2) of those sorted by C_FIRST (clause 2.5.2.2, 2.6.2.2).
  uint32_t middle(uint32_t w, uint32_t d, std::vector<uint32_t> ids) {
    std::sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
      return memcmp(customer(w, d, a).c_first, customer(w, d, b).c_first, 16) < 0;
    });
    return ids[(ids.size() + 1) / 2 - 1];
  }
  // The newest order of customer c in (w, d), by brute force; 0 when none.
  uint32_t last_order(uint32_t w, uint32_t d, uint32_t c) {
    uint32_t last = 0;
    for (uint32_t o = 1; o < district(w, d).d_next_o_id; o++)
      if (auto od = row<tpcc::Order>(tpcc::kOrder, K::order(w, d, o)); od && od->o_c_id == c) last = o;
    return last;
  }

  TempPath path_{"tpcc-effects"};
  Options o_;
  Tpcc bench_;
  Db db_;
  std::unique_ptr<test::CCServices<typename P::CC>> svc_;
  std::unique_ptr<Mgr> m_;
  std::unique_ptr<Tpcc::Worker> w_;
};

}  // namespace

TYPED_TEST_SUITE(TpccEffects, test::EngineCcPairs);

// Clause 2.4.2.2: D_NEXT_O_ID + 1; ORDER, NEW-ORDER and O_OL_CNT ORDER-LINE rows; stock quantity
// down by OL_QUANTITY, or up by 91 - OL_QUANTITY when fewer than OL_QUANTITY + 10 remain;
// S_YTD, S_ORDER_CNT, S_REMOTE_CNT (remote supply only); the total with discount and taxes.
TYPED_TEST(TpccEffects, NewOrderInsertsTheOrderAndItsLinesAndUpdatesStock) {
  // Items 1..200 of warehouse 1: one with little stock left (the +91 rule), the others not.
  uint32_t low = 0;
  for (uint32_t i = 1; i <= kTiny.items && !low; i++)
    if (this->stock(1, i).s_quantity < 20) low = i;
  ASSERT_NE(low, 0u) << "the loader gave no stock below 20";
  tpcc::NewOrderIn in;
  in.w = 1, in.d = 3, in.c = 7, in.ol_cnt = 5;
  uint32_t items[5];
  for (uint32_t k = 0; k < 5; k++) items[k] = (low + k - 1) % kTiny.items + 1;  // low and the 4 after it
  const uint32_t supply[5] = {1, 1, 2, 1, 1};  // one line from the remote warehouse
  const uint32_t qty[5] = {10, 1, 4, 7, 5};
  for (int i = 0; i < 5; i++) in.items[i] = items[i], in.supply[i] = supply[i], in.qty[i] = qty[i];
  for (int i = 1; i < 5; i++) ASSERT_NE(in.items[i], low);

  const tpcc::District d0 = this->district(1, 3);
  const auto wh = this->template get<tpcc::Warehouse>(tpcc::kWarehouse, K::warehouse(1));
  const tpcc::Customer cu = this->customer(1, 3, 7);
  tpcc::Stock s0[5];
  for (int i = 0; i < 5; i++) s0[i] = this->stock(supply[i], items[i]);
  ASSERT_EQ_V(d0.d_next_o_id, kTiny.customers + 1);
  ASSERT_LT_V(s0[0].s_quantity, qty[0] + 10);

  ASSERT_TRUE(this->run(in));
  const uint32_t o = d0.d_next_o_id;
  EXPECT_EQ_V(this->w_->out().new_order.o_id, o);
  EXPECT_EQ_V(this->district(1, 3).d_next_o_id, o + 1);
  EXPECT_EQ_V(this->district(1, 4).d_next_o_id, kTiny.customers + 1) << "another district unchanged";

  auto od = this->template get<tpcc::Order>(tpcc::kOrder, K::order(1, 3, o));
  EXPECT_EQ_V(od.o_id, o);
  EXPECT_EQ_V(od.o_d_id, 3u);
  EXPECT_EQ_V(od.o_w_id, 1u);
  EXPECT_EQ_V(od.o_c_id, 7u);
  EXPECT_EQ_V(od.o_carrier_id, 0u) << "null until delivered";
  EXPECT_EQ_V(od.o_ol_cnt, 5u);
  EXPECT_EQ_V(od.o_all_local, 0u) << "a line is supplied remotely";
  auto no = this->template get<tpcc::NewOrder>(tpcc::kNewOrder, K::new_order(1, 3, o));
  EXPECT_EQ_V(no.no_o_id, o);
  EXPECT_EQ_V(no.no_d_id, 3u);
  EXPECT_EQ_V(no.no_w_id, 1u);
  EXPECT_TRUE(this->template row<tpcc::IndexEntry>(tpcc::kOrderByCustomer, K::order_by_customer(1, 3, 7, o)));

  double sum = 0;
  for (uint32_t i = 0; i < 5; i++) {
    SCOPED_TRACE("line " + std::to_string(i + 1));
    auto ol = this->template get<tpcc::OrderLine>(tpcc::kOrderLine, K::order_line(1, 3, o, i + 1));
    auto it = this->template get<tpcc::Item>(tpcc::kItem, K::item(items[i]));
    EXPECT_EQ_V(ol.ol_o_id, o);
    EXPECT_EQ_V(ol.ol_number, i + 1);
    EXPECT_EQ_V(ol.ol_i_id, items[i]);
    EXPECT_EQ_V(ol.ol_supply_w_id, supply[i]);
    EXPECT_EQ_V(ol.ol_quantity, qty[i]);
    EXPECT_DOUBLE_EQ_V(ol.ol_amount, qty[i] * it.i_price);
    EXPECT_EQ_V(ol.ol_delivery_d, 0u) << "null until delivered";
    EXPECT_EQ_V(std::string(ol.ol_dist_info, 24), std::string(s0[i].s_dist[2], 24)) << "S_DIST_03 of the supplier";
    sum += ol.ol_amount;
    tpcc::Stock s = this->stock(supply[i], items[i]);
    uint32_t q = s0[i].s_quantity;
    EXPECT_EQ_V(s.s_quantity, q >= qty[i] + 10 ? q - qty[i] : q - qty[i] + 91);
    EXPECT_DOUBLE_EQ_V(s.s_ytd, s0[i].s_ytd + qty[i]);
    EXPECT_EQ_V(s.s_order_cnt, s0[i].s_order_cnt + 1);
    EXPECT_EQ_V(s.s_remote_cnt, s0[i].s_remote_cnt + (supply[i] != 1 ? 1 : 0));
  }
  EXPECT_EQ_V(this->stock(1, low).s_quantity, s0[0].s_quantity - 10 + 91) << "the +91 rule";
  EXPECT_EQ_V(this->stock(1, items[1]).s_quantity == s0[1].s_quantity - 1, s0[1].s_quantity >= 11);
  EXPECT_FALSE(this->template row<tpcc::OrderLine>(tpcc::kOrderLine, K::order_line(1, 3, o, 6)));
  EXPECT_NEAR_V(this->w_->out().new_order.total, sum * (1 - cu.c_discount) * (1 + wh.w_tax + d0.d_tax), 1e-9);

  // A second order, all local: the next id, O_ALL_LOCAL = 1.
  for (int i = 0; i < 5; i++) in.supply[i] = 1;
  ASSERT_TRUE(this->run(in));
  EXPECT_EQ_V(this->w_->out().new_order.o_id, o + 1);
  EXPECT_EQ_V(this->template get<tpcc::Order>(tpcc::kOrder, K::order(1, 3, o + 1)).o_all_local, 1u);
  EXPECT_EQ_V(this->district(1, 3).d_next_o_id, o + 2);
}

// Clause 2.4.2.3: an unused item number rolls the whole transaction back: nothing changes, and
// the next NewOrder takes the same order id.
TYPED_TEST(TpccEffects, NewOrderRollbackOnAnUnusedItemChangesNothing) {
  tpcc::NewOrderIn in;
  in.w = 1, in.d = 5, in.c = 11, in.ol_cnt = 6;
  for (uint32_t i = 0; i < 6; i++) in.items[i] = 10 * i + 3, in.supply[i] = i == 2 ? 2 : 1, in.qty[i] = i + 1;
  in.items[5] = kTiny.items + 1;  // unused: clause 2.4.1.5
  const uint32_t o = this->district(1, 5).d_next_o_id;
  std::vector<std::string> before;
  before.push_back(this->bytes(tpcc::kDistrict, K::district(1, 5)));
  for (uint32_t i = 0; i < 5; i++) before.push_back(this->bytes(tpcc::kStock, K::stock(in.supply[i], in.items[i])));

  EXPECT_FALSE(this->run(in));
  EXPECT_TRUE(this->w_->rolled_back());
  EXPECT_TRUE(this->m_->user_aborted());
  std::vector<std::string> after;
  after.push_back(this->bytes(tpcc::kDistrict, K::district(1, 5)));
  for (uint32_t i = 0; i < 5; i++) after.push_back(this->bytes(tpcc::kStock, K::stock(in.supply[i], in.items[i])));
  EXPECT_EQ(after, before) << "D_NEXT_O_ID and the stock of the valid items unchanged";
  EXPECT_FALSE(this->template row<tpcc::Order>(tpcc::kOrder, K::order(1, 5, o)));
  EXPECT_FALSE(this->template row<tpcc::NewOrder>(tpcc::kNewOrder, K::new_order(1, 5, o)));
  EXPECT_FALSE(this->template row<tpcc::IndexEntry>(tpcc::kOrderByCustomer, K::order_by_customer(1, 5, 11, o)));
  for (uint32_t n = 1; n <= 15; n++)
    EXPECT_FALSE(this->template row<tpcc::OrderLine>(tpcc::kOrderLine, K::order_line(1, 5, o, n))) << n;

  in.items[5] = 77;  // the same order with a valid last item commits under the same id
  ASSERT_TRUE(this->run(in));
  EXPECT_FALSE(this->w_->rolled_back());
  EXPECT_EQ_V(this->w_->out().new_order.o_id, o);
  EXPECT_EQ_V(this->district(1, 5).d_next_o_id, o + 1);
}

// Clause 2.5.2.2 by customer id: W_YTD, D_YTD, C_BALANCE, C_YTD_PAYMENT, C_PAYMENT_CNT, C_DATA of
// a BC customer (the payment prepended), a HISTORY row; a remote customer pays in its own
// warehouse while the terminal's warehouse and district take the amount.
TYPED_TEST(TpccEffects, PaymentByIdUpdatesYtdBalancesAndHistory) {
  uint32_t gc = 0, bc = 0;  // a good-credit and a bad-credit customer of (2, 6)
  for (uint32_t c = 1; c <= kTiny.customers; c++) {
    const tpcc::Customer cu = this->customer(2, 6, c);
    (memcmp(cu.c_credit, "BC", 2) == 0 ? bc : gc) = c;
  }
  ASSERT_NE(gc, 0u);
  ASSERT_NE(bc, 0u) << "the loader gave district (2, 6) no BC customer";
  for (auto [c, amount, w] : {std::tuple{gc, 123.45, 2u}, std::tuple{bc, 4000.0, 2u}, std::tuple{gc, 10.5, 1u}}) {
    SCOPED_TRACE("customer " + std::to_string(c) + " terminal warehouse " + std::to_string(w));
    tpcc::PaymentIn in;
    in.w = w, in.d = 4, in.c_w = 2, in.c_d = 6, in.c = c, in.amount = amount;
    const auto wh0 = this->template get<tpcc::Warehouse>(tpcc::kWarehouse, K::warehouse(w));
    const auto other0 = this->template get<tpcc::Warehouse>(tpcc::kWarehouse, K::warehouse(3 - w));
    const tpcc::District d0 = this->district(w, 4);
    const tpcc::Customer c0 = this->customer(2, 6, c);

    ASSERT_TRUE(this->run(in));
    EXPECT_EQ(this->w_->out().payment.c, c);
    EXPECT_DOUBLE_EQ_V(this->template get<tpcc::Warehouse>(tpcc::kWarehouse, K::warehouse(w)).w_ytd, wh0.w_ytd + amount);
    EXPECT_DOUBLE_EQ_V(this->template get<tpcc::Warehouse>(tpcc::kWarehouse, K::warehouse(3 - w)).w_ytd, other0.w_ytd);
    EXPECT_DOUBLE_EQ_V(this->district(w, 4).d_ytd, d0.d_ytd + amount);
    const tpcc::Customer c1 = this->customer(2, 6, c);
    EXPECT_DOUBLE_EQ_V(c1.c_balance, c0.c_balance - amount);
    EXPECT_DOUBLE_EQ_V(this->w_->out().payment.c_balance, c1.c_balance);
    EXPECT_DOUBLE_EQ_V(c1.c_ytd_payment, c0.c_ytd_payment + amount);
    EXPECT_EQ_V(c1.c_payment_cnt, c0.c_payment_cnt + 1);
    EXPECT_EQ_V(c1.c_delivery_cnt, c0.c_delivery_cnt);
    std::string data0(c0.c_data, 500), data1(c1.c_data, 500);
    if (c == bc) {
      char head[64];
      int n = snprintf(head, sizeof head, "%u 6 2 4 %u %.2f|", c, w, amount);
      EXPECT_EQ(data1.substr(0, size_t(n)), std::string(head)) << "C_ID C_D_ID C_W_ID D_ID W_ID H_AMOUNT";
      EXPECT_EQ(data1.substr(size_t(n)), data0.substr(0, 500 - size_t(n))) << "the old C_DATA shifted right";
    } else {
      EXPECT_EQ(data1, data0) << "C_DATA of a GC customer unchanged";
    }
    auto h = this->template get<tpcc::History>(tpcc::kHistory, this->w_->history_key());
    EXPECT_EQ_V(h.h_c_id, c);
    EXPECT_EQ_V(h.h_c_d_id, 6u);
    EXPECT_EQ_V(h.h_c_w_id, 2u);
    EXPECT_EQ_V(h.h_d_id, 4u);
    EXPECT_EQ_V(h.h_w_id, w);
    EXPECT_DOUBLE_EQ_V(h.h_amount, amount);
    std::string hd = std::string(wh0.w_name, strnlen(wh0.w_name, 10)) + "    " + std::string(d0.d_name, strnlen(d0.d_name, 10));
    EXPECT_EQ_V(std::string(h.h_data, strnlen(h.h_data, 24)), hd) << "H_DATA: W_NAME, 4 spaces, D_NAME";
  }
  EXPECT_DOUBLE_EQ_V(this->customer(2, 6, gc).c_ytd_payment, 10 + 123.45 + 10.5);
}

// Clause 2.5.2.2 by last name: of the n customers with that name in the customer's district,
// sorted by C_FIRST, the one at position ceil(n/2) pays; the others are untouched.
TYPED_TEST(TpccEffects, PaymentByLastNamePaysTheMiddleCustomerByFirstName) {
  int odd = 0, even = 0;
  for (uint32_t last = 0; last < kTiny.names(); last++) {
    std::vector<uint32_t> ids = this->named(1, 2, last);
    if (ids.size() < 2) continue;
    (ids.size() % 2 ? odd : even)++;
    SCOPED_TRACE("last name " + std::to_string(last) + ", " + std::to_string(ids.size()) + " customers");
    const uint32_t want = this->middle(1, 2, ids);
    std::vector<tpcc::Customer> c0;
    for (uint32_t id : ids) c0.push_back(this->customer(1, 2, id));
    tpcc::PaymentIn in;
    in.w = in.c_w = 1, in.d = in.c_d = 2, in.by_name = true, in.last = last, in.amount = 50;
    in.c = want == ids[0] ? ids[1] : ids[0];  // the id given must not matter
    ASSERT_TRUE(this->run(in));
    EXPECT_EQ(this->w_->out().payment.c, want);
    for (size_t i = 0; i < ids.size(); i++) {
      const tpcc::Customer c1 = this->customer(1, 2, ids[i]);
      EXPECT_EQ_V(c1.c_payment_cnt, c0[i].c_payment_cnt + (ids[i] == want ? 1 : 0)) << ids[i];
      EXPECT_DOUBLE_EQ_V(c1.c_balance, c0[i].c_balance - (ids[i] == want ? 50 : 0)) << ids[i];
    }
    EXPECT_EQ_V(this->template get<tpcc::History>(tpcc::kHistory, this->w_->history_key()).h_c_id, want);
  }
  EXPECT_GT(odd, 0) << "no last name shared by an odd number (>= 3) of customers";
  EXPECT_GT(even, 0) << "no last name shared by an even number of customers";
}

// Clause 2.6.2.2: the customer (by id, or the middle one by last name), its newest order and
// that order's lines; then again after a NewOrder of that customer.
TYPED_TEST(TpccEffects, OrderStatusReturnsTheLastOrderAndItsLines) {
  auto check = [&](uint32_t c, const tpcc::OrderStatusOut& out) {
    const tpcc::Customer cu = this->customer(1, 8, c);
    EXPECT_EQ(out.c, c);
    EXPECT_DOUBLE_EQ_V(out.c_balance, cu.c_balance);
    const uint32_t o = this->last_order(1, 8, c);
    ASSERT_NE(o, 0u);
    EXPECT_EQ_V(out.o_id, o);
    auto od = this->template get<tpcc::Order>(tpcc::kOrder, K::order(1, 8, o));
    EXPECT_EQ_V(out.o_carrier_id, od.o_carrier_id);
    ASSERT_EQ_V(out.ol_cnt, od.o_ol_cnt);
    for (uint32_t n = 1; n <= od.o_ol_cnt; n++) {
      auto ol = this->template get<tpcc::OrderLine>(tpcc::kOrderLine, K::order_line(1, 8, o, n));
      EXPECT_EQ_V(out.lines[n - 1].i_id, ol.ol_i_id) << n;
      EXPECT_EQ_V(out.lines[n - 1].supply_w_id, ol.ol_supply_w_id) << n;
      EXPECT_EQ_V(out.lines[n - 1].quantity, ol.ol_quantity) << n;
      EXPECT_DOUBLE_EQ_V(out.lines[n - 1].amount, ol.ol_amount) << n;
      EXPECT_EQ_V(out.lines[n - 1].delivery_d, ol.ol_delivery_d) << n;
    }
  };
  // By id: a customer whose loaded order is delivered, and one whose order is not.
  for (uint32_t c = 1; c <= kTiny.customers; c++) {
    tpcc::OrderStatusIn in{1, 8, c, 0, false};
    ASSERT_TRUE(this->run(in));
    check(c, this->w_->out().order_status);
  }
  // By last name.
  uint32_t last = 0;
  while (last < kTiny.names() && this->named(1, 8, last).size() < 2) last++;
  ASSERT_LT(last, kTiny.names()) << "no last name shared in district (1, 8)";
  const uint32_t want = this->middle(1, 8, this->named(1, 8, last));
  tpcc::OrderStatusIn by_name{1, 8, 1, last, true};
  ASSERT_TRUE(this->run(by_name));
  check(want, this->w_->out().order_status);
  // After a NewOrder of that customer: the new order, undelivered, with its lines.
  tpcc::NewOrderIn no;
  no.w = 1, no.d = 8, no.c = want, no.ol_cnt = 7;
  for (uint32_t i = 0; i < 7; i++) no.items[i] = 20 + i, no.supply[i] = 1, no.qty[i] = 2;
  ASSERT_TRUE(this->run(no));
  ASSERT_TRUE(this->run(by_name));
  const auto& out = this->w_->out().order_status;
  EXPECT_EQ_V(out.o_id, this->w_->out().new_order.o_id);
  EXPECT_EQ_V(out.o_carrier_id, 0u);
  EXPECT_EQ_V(out.ol_cnt, 7u);
  EXPECT_EQ_V(out.lines[6].i_id, 26u);
  check(want, out);
}

// Clause 2.7.4.2: per district the oldest NEW-ORDER row is deleted, O_CARRIER_ID set, every
// line's OL_DELIVERY_D set, the sum of OL_AMOUNT added to C_BALANCE and C_DELIVERY_CNT + 1;
// a district without an undelivered order is skipped.
TYPED_TEST(TpccEffects, DeliveryDeliversTheOldestNewOrderOfEachDistrict) {
  const uint32_t first = kTiny.first_new_order();
  // District 10 with no undelivered order: its NEW-ORDER rows deleted beforehand.
  this->m_->begin();
  for (uint32_t o = first; o <= kTiny.customers; o++) ASSERT_TRUE(this->m_->remove(tpcc::kNewOrder, K::new_order(1, 10, o)));
  ASSERT_TRUE(this->m_->commit());
  const std::string d10_order = this->bytes(tpcc::kOrder, K::order(1, 10, first));
  for (uint32_t round = 0; round < 2; round++) {
    SCOPED_TRACE("round " + std::to_string(round));
    struct Before { uint32_t o, c; tpcc::Customer cu; double sum; };
    Before b[10];
    for (uint32_t d = 1; d <= 9; d++) {
      uint32_t o = first;  // the oldest undelivered, by brute force
      while (!this->template row<tpcc::NewOrder>(tpcc::kNewOrder, K::new_order(1, d, o))) o++;
      ASSERT_EQ(o, first + round);
      auto od = this->template get<tpcc::Order>(tpcc::kOrder, K::order(1, d, o));
      EXPECT_EQ_V(od.o_carrier_id, 0u);
      double sum = 0;
      for (uint32_t n = 1; n <= od.o_ol_cnt; n++)
        sum += this->template get<tpcc::OrderLine>(tpcc::kOrderLine, K::order_line(1, d, o, n)).ol_amount;
      b[d - 1] = {o, od.o_c_id, this->customer(1, d, od.o_c_id), sum};
    }
    ASSERT_TRUE(this->run(tpcc::DeliveryIn{1, 7}));
    const auto& out = this->w_->out().delivery;
    for (uint32_t d = 1; d <= 9; d++) {
      SCOPED_TRACE("district " + std::to_string(d));
      const uint32_t o = b[d - 1].o;
      EXPECT_EQ_V(out.o_id[d - 1], o);
      EXPECT_FALSE(this->template row<tpcc::NewOrder>(tpcc::kNewOrder, K::new_order(1, d, o)));
      EXPECT_TRUE(this->template row<tpcc::NewOrder>(tpcc::kNewOrder, K::new_order(1, d, o + 1))) << "only the oldest";
      auto od = this->template get<tpcc::Order>(tpcc::kOrder, K::order(1, d, o));
      EXPECT_EQ_V(od.o_carrier_id, 7u);
      for (uint32_t n = 1; n <= od.o_ol_cnt; n++)
        EXPECT_NE_V(this->template get<tpcc::OrderLine>(tpcc::kOrderLine, K::order_line(1, d, o, n)).ol_delivery_d, 0u) << n;
      EXPECT_EQ_V(this->template get<tpcc::Order>(tpcc::kOrder, K::order(1, d, o + 1)).o_carrier_id, 0u);
      const tpcc::Customer cu = this->customer(1, d, b[d - 1].c);
      EXPECT_NEAR_V(cu.c_balance, b[d - 1].cu.c_balance + b[d - 1].sum, 1e-6);
      EXPECT_GT(b[d - 1].sum, 0.0);
      EXPECT_EQ_V(cu.c_delivery_cnt, b[d - 1].cu.c_delivery_cnt + 1);
      EXPECT_EQ_V(cu.c_payment_cnt, b[d - 1].cu.c_payment_cnt);
    }
    EXPECT_EQ_V(out.o_id[9], 0u) << "district 10 skipped";
    EXPECT_EQ(this->bytes(tpcc::kOrder, K::order(1, 10, first)), d10_order);
    // Warehouse 2 is another terminal's: untouched.
    EXPECT_TRUE(this->template row<tpcc::NewOrder>(tpcc::kNewOrder, K::new_order(2, 1, first)));
  }
}

// Clause 2.8.2.2: the distinct items of the district's last 20 orders whose stock at the
// warehouse is below the threshold, against a brute-force count over the tables.
TYPED_TEST(TpccEffects, StockLevelCountsDistinctLowStockItemsOfTheLast20Orders) {
  auto brute = [&](uint32_t d, uint32_t threshold) {
    const uint32_t next = this->district(1, d).d_next_o_id;
    std::set<uint32_t> items, low;
    for (uint32_t o = next - 20; o < next; o++)
      for (uint32_t n = 1; n <= 15; n++)
        if (auto ol = this->template row<tpcc::OrderLine>(tpcc::kOrderLine, K::order_line(1, d, o, n))) items.insert(ol->ol_i_id);
    for (uint32_t i : items)
      if (this->stock(1, i).s_quantity < threshold) low.insert(i);
    return std::pair{low.size(), items.size()};
  };
  auto check = [&](uint32_t d) {
    size_t some = 0;
    for (uint32_t threshold : {10u, 15u, 20u, 60u, 101u}) {
      SCOPED_TRACE("district " + std::to_string(d) + " threshold " + std::to_string(threshold));
      ASSERT_TRUE(this->run(tpcc::StockLevelIn{1, d, threshold}));
      auto [low, items] = brute(d, threshold);
      EXPECT_EQ(this->w_->out().stock_level.low_stock, low);
      if (threshold == 101) {
        EXPECT_EQ(low, items) << "every loaded quantity is at most 100";
      }
      some += low;
    }
    EXPECT_GT(some, 0u);
  };
  check(4);
  // NewOrders in district 4 move the window and lower the stock of the items they order: 12
  // orders of 5 lines each, the same low items again and again.
  tpcc::NewOrderIn in;
  in.w = 1, in.d = 4, in.c = 3, in.ol_cnt = 5;
  for (uint32_t i = 0; i < 5; i++) in.items[i] = 100 + i, in.supply[i] = 1, in.qty[i] = 9;
  for (int k = 0; k < 12; k++) ASSERT_TRUE(this->run(in));
  check(4);
  ASSERT_TRUE(this->run(tpcc::StockLevelIn{1, 4, 21}));
  EXPECT_EQ(this->w_->out().stock_level.low_stock, brute(4, 21).first);
}
