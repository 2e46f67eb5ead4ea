// TPC-C (TPC Benchmark C, revision 5.11): the nine tables with the specification's columns
// (benchmarks/tpcc_schema.h), its initial population (clause 4.3.3) for --warehouses, and the
// five transactions (clause 2.4-2.8): NewOrder with its 1% rollback, Payment and OrderStatus
// selecting 60% of customers by last name through a secondary ordered index, Delivery and
// StockLevel. Mixes (--tpcc-mix): standard (45/43/4/4/4), np (TPCC-NP, NewOrder:Payment 45:43
// as papers/zen-vldb21.txt runs it), deterministic (the standard mix with customers chosen by
// id and order ids from a per-district counter, as a deterministic engine receives them:
// papers/nvcaracal-eurosys23.txt), or an explicit "neworder:45,payment:55" list.
// No think/keying time: terminals issue back to back (as DBx1000 and the papers run it).
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/tpcc_schema.h"
#include "benchmarks/zipf.h"
#include "storage/hash_index.h"
#include "storage/ordered_index.h"
#include "storage/parallel.h"
#include "storage/schema.h"
#include "system/load_progress.h"
#include "system/options.h"

namespace nvt {

class Tpcc {
 public:
  using K = tpcc::Keys;
  enum Kind : uint32_t { kNewOrder, kPayment, kOrderStatus, kDelivery, kStockLevel, kKinds };
  static constexpr const char* kKindNames[kKinds] = {"neworder", "payment", "order_status", "delivery",
                                                     "stock_level"};

  // `scale`: the population's sizes, the specification's unless a test asks for a tiny one.
  explicit Tpcc(const Options& o, tpcc::Scale scale = {}) : o_(o), W_(o.warehouses), S_(scale) {
    if (W_ < 1 || W_ > tpcc::kMaxWarehouses) throw std::invalid_argument("--warehouses out of range");
    if (S_.items < 1 || S_.items >= (1u << 17) || S_.customers < 1 || S_.customers > 4095 ||
        S_.new_orders > S_.customers)
      throw std::invalid_argument("TPC-C scale out of range");
    parse_mix(o.tpcc_mix);
    next_o_id_ = std::make_unique<std::atomic<uint32_t>[]>(size_t(W_) * 10 + 11);
    for (size_t i = 0; i < size_t(W_) * 10 + 11; i++) next_o_id_[i] = S_.customers + 1;
  }

  // Tables, with room for the NewOrders (order, order lines, history) a run may add.
  std::vector<TableInfo> tables() const {
    auto r = rows();
    uint64_t extra = o_.tpcc_new_orders;
    return {
        {tpcc::kWarehouse, "warehouse", tpcc::warehouse_schema(), r[tpcc::kWarehouse]},
        {tpcc::kDistrict, "district", tpcc::district_schema(), r[tpcc::kDistrict]},
        {tpcc::kCustomer, "customer", tpcc::customer_schema(), r[tpcc::kCustomer]},
        {tpcc::kHistory, "history", tpcc::history_schema(), r[tpcc::kHistory] + 2 * extra + 1024},
        {tpcc::kNewOrder, "new_order", tpcc::new_order_schema(), r[tpcc::kNewOrder] + extra, true},
        {tpcc::kOrder, "order", tpcc::order_schema(), r[tpcc::kOrder] + extra},
        // 5..15 lines per loaded order, 10 on average: one more each is the slack
        {tpcc::kOrderLine, "order_line", tpcc::order_line_schema(), r[tpcc::kOrderLine] + r[tpcc::kOrder] + 15 * extra,
         true},
        {tpcc::kItem, "item", tpcc::item_schema(), r[tpcc::kItem]},
        {tpcc::kStock, "stock", tpcc::stock_schema(), r[tpcc::kStock]},
        {tpcc::kCustomerByName, "customer_name_idx", tpcc::index_schema(), r[tpcc::kCustomerByName], true},
        {tpcc::kOrderByCustomer, "order_cust_idx", tpcc::index_schema(), r[tpcc::kOrder] + extra, true},
    };
  }
  // The initial population's rows per table (order lines: 10 per order on average).
  std::array<uint64_t, 11> rows() const {
    uint64_t w = uint64_t(W_), c = w * 10 * S_.customers;
    return {w, w * 10, c, c, w * 10 * S_.new_orders, c, c * 10, S_.items, w * S_.items, c, c};
  }
  // The initial population's bytes (what --p-ratio divides).
  uint64_t database_bytes() const {
    uint64_t b = 0;
    auto t = tables();
    auto r = rows();
    for (size_t i = 0; i < t.size(); i++) b += r[i] * t[i].schema.tuple_size();
    return b;
  }
  // TPC-C's rows are small (an ORDER-LINE is 68 B): its indexes alone are about a quarter of
  // its tuple bytes and would not fit a budget of database bytes / P (system/driver.h).
  static constexpr bool kSmallTuples = true;
  uint32_t tuple_size() const { return 0; }
  std::string layout() const {
    std::string s = "tpcc warehouses=" + std::to_string(W_) + " new_orders=" + std::to_string(o_.tpcc_new_orders);
    tpcc::Scale spec;
    if (S_.items != spec.items || S_.customers != spec.customers || S_.new_orders != spec.new_orders)
      s += " scale=" + std::to_string(S_.items) + "/" + std::to_string(S_.customers) + "/" + std::to_string(S_.new_orders);
    uint64_t h = 1469598103934665603ull;  // FNV-1a of every table's schema: the header is short
    for (auto& t : tables())
      for (char ch : t.name + "(" + t.schema.describe() + ")") h = (h ^ uint8_t(ch)) * 1099511628211ull;
    return s + " schema=" + std::to_string(h);
  }
  static std::vector<std::string> kind_names() { return {kKindNames, kKindNames + kKinds}; }
  // Zen: the LP of a multi-table transaction goes on HISTORY or ORDER (journal, section 3.3.4).
  static std::vector<std::string> persist_order() {
    return {"history", "order", "new_order", "order_line", "order_cust_idx", "district", "warehouse",
            "customer", "stock", "customer_name_idx", "item"};
  }
  bool deterministic() const { return deterministic_; }
  // HISTORY has no primary key in the specification: a terminal's own sequence (0: loaded rows).
  static uint64_t history_key(uint32_t terminal, uint64_t seq) { return uint64_t(terminal) << 40 | seq; }
  int warehouses() const { return W_; }
  const tpcc::Scale& scale() const { return S_; }

  template <class Engine>
  void load(Engine& eng, int threads) const {
    parallel(threads, [&](int t) {
      auto& th = eng.thread(t);
      Rng r(o_.seed * 7919 + uint64_t(t) + 1);
      Loader<Engine> l{eng, th, r, *this};
      if (t == 0) l.items();
      for (int w = 1 + t; w <= W_; w += threads) {
        l.warehouse(w);
        load_progress(1);
      }
    });
  }
  // What load() counts for the progress line.
  std::pair<uint64_t, std::string> load_units() const { return {uint64_t(W_), "warehouses"}; }

  // The same population with a seed per unit instead of one per loader thread, so the database
  // does not depend on the thread count (a deterministic engine's runs compare databases across
  // thread counts), and units spread evenly over the threads (a deterministic engine's pools
  // are per core): the items; per warehouse its row, its STOCK in ten slices, its districts.
  template <class Engine>
  void load_per_warehouse(Engine& eng, int threads) const {
    constexpr uint32_t kUnits = 21;  // per warehouse: its row, 10 STOCK slices, 10 districts
    const uint64_t units = 1 + uint64_t(W_) * kUnits;
    parallel(threads, [&](int t) {
      auto& th = eng.thread(t);
      for (uint64_t u = uint64_t(t); u < units; u += uint64_t(threads)) {
        Rng r(o_.seed * 7919 + (u + 1) * 0x9E3779B97F4A7C15ull);
        Loader<Engine> l{eng, th, r, *this};
        if (u == 0) {
          l.items();
          continue;
        }
        const uint32_t w = uint32_t((u - 1) / kUnits + 1), k = uint32_t((u - 1) % kUnits);
        if (k == 0) {
          l.warehouse_row(w);
        } else if (k <= 10) {
          const uint32_t per = (S_.items + 9) / 10;
          l.stock(w, (k - 1) * per + 1, std::min(S_.items, k * per));
        } else {
          l.district(w, k - 10);
        }
        if (k == kUnits - 1) load_progress(1);  // a warehouse's last unit (its others may still run)
      }
    });
  }

  // Consistency conditions 1-4 (clause 3.3.2) over the committed state, engine-agnostic through
  // read_current (so they hold after a run and after a recovery alike).
  static constexpr const char* kCheckName = "consistency";  // the JSON key of check()
  template <class Engine>
  nlohmann::json check(Engine& eng) const {
    return tpcc::check_consistency(eng, W_, !deterministic_);
  }

  class Worker;

 protected:
  template <class Engine>
  struct Loader;

  void parse_mix(const std::string& mix) {
    int pct[kKinds] = {};
    if (mix == "standard" || mix == "deterministic") {
      pct[kNewOrder] = 45, pct[kPayment] = 43, pct[kOrderStatus] = 4, pct[kDelivery] = 4, pct[kStockLevel] = 4;
      deterministic_ = mix == "deterministic";
    } else if (mix == "np") {
      pct[kNewOrder] = 45, pct[kPayment] = 43;
    } else {
      size_t i = 0;
      while (i < mix.size()) {
        size_t c = mix.find(':', i), e = mix.find(',', i);
        if (e == std::string::npos) e = mix.size();
        if (c == std::string::npos || c > e) throw std::invalid_argument("--tpcc-mix: expected name:weight list, got " + mix);
        std::string name = mix.substr(i, c - i);
        int k = -1;
        for (int j = 0; j < int(kKinds); j++)
          if (name == kKindNames[j]) k = j;
        if (k < 0) throw std::invalid_argument("--tpcc-mix: unknown transaction " + name);
        pct[k] = std::stoi(mix.substr(c + 1, e - c - 1));
        if (pct[k] < 0) throw std::invalid_argument("--tpcc-mix: negative weight");
        i = e + 1;
      }
    }
    int sum = 0;
    for (int k = 0; k < int(kKinds); k++) cum_[k] = (sum += pct[k]);
    if (sum <= 0) throw std::invalid_argument("--tpcc-mix: weights sum to 0");
  }

  const Options& o_;
  int W_;
  tpcc::Scale S_;
  bool deterministic_ = false;
  int cum_[kKinds] = {};
  std::unique_ptr<std::atomic<uint32_t>[]> next_o_id_;  // deterministic: order ids per district
};

}  // namespace nvt

#include "benchmarks/tpcc_txn.h"
