// TPC-C's deterministic form (ENGINE=nvcaracal, system/epoch_driver.h; papers/
// nvcaracal-eurosys23.txt 6.2.3): the five transactions one-shot, their write sets, inserts
// and deletes included, known before their epoch executes, as Caracal runs them.
//  - What depends on serial order is found by the insert step's serial pass (det_sequence),
//    over state kept in DRAM and rebuilt from the committed database after the load and after
//    recovery (det_sync), so a replay finds the same:
//    * NewOrder's order id: each district's NewOrders take consecutive ids in serial-id order
//      from a per-district counter, the district's D_NEXT_O_ID as of the last committed epoch
//      (NewOrder still sets D_NEXT_O_ID, in serial order: the committed district row is the
//      counter's durable copy). NEW-ORDER has no gaps (condition 3 holds too).
//    * OrderStatus's order: the customer's last order before it in serial order (the reverse
//      scan of ORDER-by-customer the other engines run).
//    * Delivery's orders: per district the oldest undelivered order before it in serial order
//      (the NEW-ORDER scan), with its customer and line count, so its write set (the NEW-ORDER
//      row it deletes, ORDER, ORDER-LINEs, CUSTOMER) is declared.
//  - StockLevel reads D_NEXT_O_ID at its serial id and the last 20 orders by point reads (their
//    ids have no gaps): it declares nothing.
//  - NewOrder's 1% rollback (all mixes but `deterministic`) is known from its inputs (an unused
//    item id): the serial pass gives it no order id, it declares nothing and aborts first.
//  - Payment and OrderStatus by last name (60%, clauses 2.5.1.2, 2.6.1.2) are resolved when
//    their inputs are drawn: the customer at position ceil(n/2) by C_FIRST among the district's
//    customers of that name, from a table built from the committed database (names never
//    change), so the logged input carries the customer id, as the paper's Caracal does, with
//    the specification's choice.
// Inputs (logged, then completed by the serial pass, which a replay runs again):
//   NewOrder {0, w, d, c, ol_cnt, o_id, line...}, a line = item | supply w << 20 | qty << 40;
//   Payment {1, w, d, c_w, c_d, c, cents, h_key, by_name}; OrderStatus {2, w, d, c, o_id,
//   by_name}; Delivery {3, w, carrier, per district o_id | c << 24 | ol_cnt << 40 (0: none)};
//   StockLevel {4, w, d, threshold}.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/tpcc.h"

namespace nvt {

class TpccDet : public Tpcc {
 public:
  explicit TpccDet(const Options& o, tpcc::Scale scale = {}) : Tpcc(o, scale) {
    for (int k = 0; k < int(kKinds); k++) pct_[k] = cum_[k] - (k ? cum_[k - 1] : 0);
    const size_t dists = size_t(W_) * 10 + 11;
    base_.next.assign(dists, S_.customers + 1);
    base_.oldest.assign(dists, 0);
  }

  std::string layout() const { return Tpcc::layout() + " deterministic"; }

  template <class Engine>
  void det_load(Engine& eng, int threads) const {
    load_per_warehouse(eng, threads);
  }
  // After the load, and after recovery before the replay, from the committed database: per
  // district the order-id counter, the undelivered orders and the customers' last orders; the
  // last-name table.
  template <class Engine>
  void det_sync(Engine& eng) const {
    const uint32_t C = S_.customers, names = S_.names();
    std::vector<char> buf(1024);
    uint64_t ver;
    auto must = [&](uint32_t table, uint64_t key, const char* what) {
      if (!eng.read_current(table, key, buf.data(), ver)) throw std::runtime_error(std::string("TPC-C: ") + what + " missing");
      return buf.data();
    };
    std::unordered_map<std::string, uint32_t> number;
    for (uint32_t n = 0; n < names; n++) {
      char s[16];
      tpcc::last_name(n, s);
      number[std::string(s, strnlen(s, 16))] = n;
    }
    by_name_.assign(size_t(W_ + 1) * 10 * names, 0);
    last_order_.assign(size_t(W_ + 1) * 10 * (C + 1), 0);
    undelivered_.assign(base_.next.size(), {});
    struct Cand {
      char first[16];
      uint32_t id;
    };
    std::vector<std::vector<Cand>> cands(names);
    for (uint32_t w = 1; w <= uint32_t(W_); w++)
      for (uint32_t d = 1; d <= 10; d++) {
        const std::string where = " of district " + std::to_string(w) + "/" + std::to_string(d);
        const size_t dist = K::dist(w, d);
        const uint32_t next = tpcc::as<tpcc::District>(must(tpcc::kDistrict, K::district(w, d), ("district" + where).c_str()))->d_next_o_id;
        base_.next[dist] = next;
        // Undelivered orders are a suffix of the order ids (Delivery takes the oldest).
        uint32_t oldest = next;
        while (oldest > 1 && eng.read_current(tpcc::kNewOrder, K::new_order(w, d, oldest - 1), buf.data(), ver)) oldest--;
        base_.oldest[dist] = oldest;
        for (uint32_t o = 1; o < next; o++) {
          const auto* od = tpcc::as<tpcc::Order>(must(tpcc::kOrder, K::order(w, d, o), ("order " + std::to_string(o) + where).c_str()));
          last_order_[cust_slot(w, d, od->o_c_id)] = o;
          if (o >= oldest) undelivered_[dist].push_back(placed(od->o_c_id, od->o_ol_cnt));
        }
        for (auto& v : cands) v.clear();
        for (uint32_t c = 1; c <= C; c++) {
          const auto* cu = tpcc::as<tpcc::Customer>(must(tpcc::kCustomer, K::customer(w, d, c), ("customer " + std::to_string(c) + where).c_str()));
          auto it = number.find(std::string(cu->c_last, strnlen(cu->c_last, 16)));
          if (it == number.end()) continue;
          Cand x;
          memcpy(x.first, cu->c_first, 16);
          x.id = c;
          cands[it->second].push_back(x);
        }
        for (uint32_t n = 0; n < names; n++) {
          auto& v = cands[n];
          if (v.empty()) continue;  // nobody of that name here: by id
          std::stable_sort(v.begin(), v.end(), [](const Cand& a, const Cand& b) { return memcmp(a.first, b.first, 16) < 0; });
          by_name_[name_slot(w, d, n)] = v[(v.size() - 1) / 2].id;
        }
      }
  }

  // Sizes for the engine: input words, declared writes, value bytes per transaction. The
  // transient pool is sized per transaction: the mix's mean (rounded up by half: an epoch's
  // draw varies), at least NewOrder's; the pool's 1 MiB slack covers a short epoch's Deliveries.
  uint64_t det_input_words() const { return 6 + 15; }
  uint64_t det_txn_writes() const {
    const uint64_t w[kKinds] = {1 + 15 + 3 + 15, 4, 0, 10 * (1 + 1 + 15 + 1), 0};
    return std::max(w[kNewOrder], mean(w));
  }
  uint64_t det_value_bytes() const { return tpcc::customer_schema().tuple_size(); }
  uint64_t det_txn_value_bytes() const {
    auto up = [](uint64_t b) { return (b + 63) / 64 * 64; };
    const uint64_t ol = up(tpcc::order_line_schema().tuple_size()), cu = up(tpcc::customer_schema().tuple_size());
    uint64_t no = up(tpcc::district_schema().tuple_size()) + 15 * up(tpcc::stock_schema().tuple_size()) +
                  up(tpcc::order_schema().tuple_size()) + up(tpcc::new_order_schema().tuple_size()) +
                  up(tpcc::index_schema().tuple_size()) + 15 * ol;
    uint64_t pay = up(tpcc::warehouse_schema().tuple_size()) + up(tpcc::district_schema().tuple_size()) + cu +
                   up(tpcc::history_schema().tuple_size());
    uint64_t del = 10 * (up(tpcc::order_schema().tuple_size()) + 15 * ol + cu);
    const uint64_t b[kKinds] = {no, pay, 0, del, 0};
    return std::max({no, pay, mean(b)});
  }

  void det_draw(Rng& r, uint64_t epoch, uint64_t j, std::vector<uint64_t>& in) const {
    const uint32_t W = uint32_t(W_), C = S_.customers;
    uint32_t x = uint32_t(r.below(uint64_t(cum_[kKinds - 1])));
    uint32_t kind = kNewOrder;
    while (x >= uint32_t(cum_[kind])) kind++;
    const uint32_t w = 1 + uint32_t(r.below(W)), d = tpcc::uniform(r, 1, 10);
    switch (kind) {
      case kNewOrder: {
        uint32_t cnt = tpcc::uniform(r, 5, 15);
        bool rollback = !deterministic_ && tpcc::uniform(r, 1, 100) == 1;
        in.insert(in.end(), {uint64_t(kNewOrder), w, d, tpcc::nurand(r, 1023, 1, C), cnt, 0});
        uint32_t items[15];
        for (uint32_t i = 0; i < cnt; i++) {
          uint32_t it;
          bool dup;
          do {  // distinct items: one stock row each
            it = tpcc::nurand(r, 8191, 1, S_.items);
            dup = false;
            for (uint32_t k = 0; k < i; k++) dup |= items[k] == it;
          } while (dup);
          items[i] = it;
          if (rollback && i + 1 == cnt) it = S_.items + 1;  // an unused item: clause 2.4.1.5
          uint32_t supply = w;
          if (W > 1 && r.below(100) < uint64_t(o_.neworder_remote_pct))
            do supply = tpcc::uniform(r, 1, W); while (supply == w);
          uint64_t qty = tpcc::uniform(r, 1, 10);
          in.push_back(uint64_t(it) | uint64_t(supply) << 20 | qty << 40);
        }
        return;
      }
      case kPayment: {
        uint32_t c_w = w, c_d = d;
        if (W > 1 && r.below(100) < uint64_t(o_.payment_remote_pct)) {
          do c_w = tpcc::uniform(r, 1, W); while (c_w == w);
          c_d = tpcc::uniform(r, 1, 10);
        }
        bool by_name = r.below(100) < 60;
        uint32_t c = customer(r, c_w, c_d, by_name);
        uint64_t cents = tpcc::uniform(r, 100, 500000);
        // HISTORY's key: the transaction's serial id, apart from the loaded rows' and terminals'.
        uint64_t h_key = uint64_t(1) << 60 | epoch << 32 | j;
        in.insert(in.end(), {uint64_t(kPayment), w, d, c_w, c_d, c, cents, h_key, by_name ? 1u : 0u});
        return;
      }
      case kOrderStatus: {
        bool by_name = r.below(100) < 60;
        uint32_t c = customer(r, w, d, by_name);
        in.insert(in.end(), {uint64_t(kOrderStatus), w, d, c, 0, by_name ? 1u : 0u});
        return;
      }
      case kDelivery:
        in.insert(in.end(), {uint64_t(kDelivery), w, tpcc::uniform(r, 1, 10)});
        in.insert(in.end(), 10, 0);
        return;
      default:
        in.insert(in.end(), {uint64_t(kStockLevel), w, d, tpcc::uniform(r, 10, 20)});
        return;
    }
  }

  size_t det_kind(const uint64_t* in) const { return size_t(in[0]); }

  // The insert step's serial pass over the epoch in serial-id order: every core walks all of
  // it from the committed state (det_sequence_begin), filling in its own transactions' inputs;
  // core 0's pass becomes the committed state when the epoch commits (det_sequence_end).
  struct Seq {
    std::vector<uint32_t> next, oldest;                  // per district: next order id, oldest undelivered
    std::unordered_map<uint64_t, uint32_t> last_order;   // this epoch's: customer slot -> last order
    std::unordered_map<uint64_t, uint64_t> placed;       // this epoch's orders: dist << 32 | o -> placed()
  };
  Seq det_sequence_begin() const { return Seq{base_.next, base_.oldest, {}, {}}; }
  void det_sequence(Seq& s, uint64_t* in, bool mine) const {
    switch (in[0]) {
      case kNewOrder: {
        const uint32_t w = uint32_t(in[1]), d = uint32_t(in[2]), c = uint32_t(in[3]);
        if (rollback(in)) return;  // no order id: it aborts before its first write
        const size_t dist = K::dist(w, d);
        uint32_t o = s.next[dist]++;
        if (mine) in[5] = o;
        s.last_order[cust_slot(w, d, c)] = o;
        s.placed[uint64_t(dist) << 32 | o] = placed(c, uint32_t(in[4]));
        return;
      }
      case kOrderStatus: {
        if (!mine) return;
        const uint64_t slot = cust_slot(uint32_t(in[1]), uint32_t(in[2]), uint32_t(in[3]));
        auto it = s.last_order.find(slot);
        in[4] = it != s.last_order.end() ? it->second : last_order_[slot];
        return;
      }
      case kDelivery: {
        const uint32_t w = uint32_t(in[1]);
        for (uint32_t d = 1; d <= 10; d++) {
          const size_t dist = K::dist(w, d);
          uint64_t v = 0;
          if (s.oldest[dist] < s.next[dist]) {  // else no undelivered order: the district is skipped
            uint32_t o = s.oldest[dist]++;
            uint64_t p = o < base_.next[dist] ? undelivered_[dist][o - base_.oldest[dist]] : s.placed.at(uint64_t(dist) << 32 | o);
            v = o | p << 24;
          }
          if (mine) in[3 + d - 1] = v;
        }
        return;
      }
      default:
        return;
    }
  }
  // DRAM of a serial pass's state and of the tables the passes read (the engine's ledger).
  static uint64_t det_sequence_bytes(const Seq& s) {
    auto map_bytes = [](const auto& m) { return m.bucket_count() * sizeof(void*) + m.size() * 32; };  // node: next, key, value, hash
    return (s.next.capacity() + s.oldest.capacity()) * sizeof(uint32_t) + map_bytes(s.last_order) + map_bytes(s.placed);
  }
  uint64_t det_dram_bytes() const {
    uint64_t b = (base_.next.capacity() + base_.oldest.capacity() + last_order_.capacity() + by_name_.capacity()) * sizeof(uint32_t) +
                 undelivered_.capacity() * sizeof(undelivered_[0]);
    for (auto& q : undelivered_) b += q.capacity() * sizeof(uint64_t);
    return b;
  }
  void det_sequence_end(Seq& s) const {
    for (auto& [slot, o] : s.last_order) last_order_[slot] = o;
    for (size_t dist = 0; dist < s.next.size(); dist++) {
      auto& q = undelivered_[dist];
      for (uint32_t o = base_.next[dist]; o < s.next[dist]; o++) q.push_back(s.placed.at(uint64_t(dist) << 32 | o));
      q.erase(q.begin(), q.begin() + long(s.oldest[dist] - base_.oldest[dist]));
    }
    base_.next.swap(s.next);
    base_.oldest.swap(s.oldest);
  }

  template <class F>
  void det_insert_set(const uint64_t* in, F&& declare) const {
    if (in[0] == kNewOrder && !rollback(in)) {
      const uint32_t w = uint32_t(in[1]), d = uint32_t(in[2]), c = uint32_t(in[3]), o = order_id(in);
      declare(tpcc::kOrder, K::order(w, d, o));
      declare(tpcc::kNewOrder, K::new_order(w, d, o));
      declare(tpcc::kOrderByCustomer, K::order_by_customer(w, d, c, o));
      for (uint32_t i = 0; i < uint32_t(in[4]); i++) declare(tpcc::kOrderLine, K::order_line(w, d, o, i + 1));
    } else if (in[0] == kPayment) {
      declare(tpcc::kHistory, in[7]);
    }
  }
  template <class F>
  void det_write_set(const uint64_t* in, F&& declare) const {
    const uint32_t w = uint32_t(in[1]);
    switch (in[0]) {
      case kNewOrder:
        if (rollback(in)) return;
        declare(tpcc::kDistrict, K::district(w, uint32_t(in[2])));
        for (uint32_t i = 0; i < uint32_t(in[4]); i++)
          declare(tpcc::kStock, K::stock(uint32_t(in[6 + i] >> 20 & 0xfffff), uint32_t(in[6 + i] & 0xfffff)));
        return;
      case kPayment:
        declare(tpcc::kWarehouse, K::warehouse(w));
        declare(tpcc::kDistrict, K::district(w, uint32_t(in[2])));
        declare(tpcc::kCustomer, K::customer(uint32_t(in[3]), uint32_t(in[4]), uint32_t(in[5])));
        return;
      case kDelivery:
        for (uint32_t d = 1; d <= 10; d++) {
          const uint64_t v = in[3 + d - 1];
          if (!v) continue;
          const uint32_t o = uint32_t(v & 0xffffff);
          declare(tpcc::kNewOrder, K::new_order(w, d, o));  // deleted
          declare(tpcc::kOrder, K::order(w, d, o));
          for (uint32_t n = 1; n <= uint32_t(v >> 48 & 0xff); n++) declare(tpcc::kOrderLine, K::order_line(w, d, o, n));
          declare(tpcc::kCustomer, K::customer(w, d, uint32_t(v >> 24 & 0xffffff)));
        }
        return;
      default:
        return;  // OrderStatus and StockLevel only read
    }
  }
  // The Worker's transaction code on the deterministic transaction (one Worker per core thread),
  // with what the serial pass found and the customer taken from the inputs.
  template <class Txn>
  bool det_run(const uint64_t* in, Txn& t) const {
    thread_local const TpccDet* owner = nullptr;
    thread_local std::unique_ptr<Worker> wk;
    if (owner != this) {
      wk = std::make_unique<Worker>(*this, 0);
      owner = this;
    }
    const uint32_t w = uint32_t(in[1]);
    switch (in[0]) {
      case kNewOrder: {
        tpcc::NewOrderIn x;
        x.w = w, x.d = uint32_t(in[2]), x.c = uint32_t(in[3]), x.ol_cnt = uint32_t(in[4]);
        x.o_id = rollback(in) ? 0 : order_id(in);
        for (uint32_t i = 0; i < x.ol_cnt; i++) {
          x.items[i] = uint32_t(in[6 + i] & 0xfffff);
          x.supply[i] = uint32_t(in[6 + i] >> 20 & 0xfffff);
          x.qty[i] = uint32_t(in[6 + i] >> 40);
        }
        wk->set(x);
        break;
      }
      case kPayment: {
        tpcc::PaymentIn x;
        x.w = w, x.d = uint32_t(in[2]), x.c_w = uint32_t(in[3]), x.c_d = uint32_t(in[4]);
        x.c = uint32_t(in[5]);
        x.amount = double(in[6]) / 100;
        x.h_key = in[7];
        wk->set(x);  // by id: a by-name input already names its customer
        break;
      }
      case kOrderStatus: {
        tpcc::OrderStatusIn x;
        x.w = w, x.d = uint32_t(in[2]), x.c = uint32_t(in[3]);
        x.o_id = uint32_t(in[4]);
        wk->set(x);
        break;
      }
      case kDelivery: {
        tpcc::DeliveryIn x;
        x.w = w, x.carrier = uint32_t(in[2]);
        for (int d = 0; d < 10; d++) x.o_id[d] = uint32_t(in[3 + d] & 0xffffff);
        wk->set(x);
        break;
      }
      default:
        wk->set(tpcc::StockLevelIn{w, uint32_t(in[2]), uint32_t(in[3])});
        break;
    }
    bool ok = wk->execute(t);
    const size_t k = size_t(in[0]);
    if (ok) committed_[k].fetch_add(1, std::memory_order_relaxed);
    else if (k == kNewOrder && wk->rolled_back()) rolled_back_.fetch_add(1, std::memory_order_relaxed);
    else failed_[k].fetch_add(1, std::memory_order_relaxed);
    if (ok && k == kDelivery)
      for (int d = 0; d < 10; d++) delivered_.fetch_add(in[3 + d] ? 1 : 0, std::memory_order_relaxed);
    if (ok && k == kPayment && in[8]) by_name_done_[0].fetch_add(1, std::memory_order_relaxed);
    if (ok && k == kOrderStatus && in[5]) by_name_done_[1].fetch_add(1, std::memory_order_relaxed);
    return ok;
  }

  // Conditions 1-4, the third included: the order ids have no gaps.
  template <class Engine>
  nlohmann::json check(Engine& eng) const {
    return tpcc::check_consistency(eng, W_, true);
  }
  nlohmann::json report() const {
    std::string mix;
    for (int k = 0; k < int(kKinds); k++)
      if (pct_[k]) mix += (mix.empty() ? "" : ",") + std::string(kKindNames[k]) + ":" + std::to_string(pct_[k]);
    nlohmann::json j = {{"mix", mix}};
    for (int k = 0; k < int(kKinds); k++)
      j[kKindNames[k]] = {{"committed", committed_[k].load()}, {"failed", failed_[k].load()}};
    j["neworder"]["rolled_back"] = rolled_back_.load();
    j["payment"]["by_name"] = by_name_done_[0].load();
    j["order_status"]["by_name"] = by_name_done_[1].load();
    j["delivery"]["orders_delivered"] = delivered_.load();
    return {{"tpcc", j}};
  }

 private:
  // NewOrder's rollback: an unused item id among its lines.
  bool rollback(const uint64_t* in) const {
    for (uint32_t i = 0; i < uint32_t(in[4]); i++)
      if ((in[6 + i] & 0xfffff) > S_.items) return true;
    return false;
  }
  static uint32_t order_id(const uint64_t* in) {
    if (!in[5]) throw std::logic_error("NewOrder without an order id: the insert step's serial pass did not run");
    return uint32_t(in[5]);
  }
  // A placed order's customer and line count, as the serial pass keeps them.
  static uint64_t placed(uint32_t c, uint32_t ol_cnt) { return uint64_t(c) | uint64_t(ol_cnt) << 24; }
  size_t name_slot(uint32_t w, uint32_t d, uint32_t last) const {
    return (size_t(w) * 10 + (d - 1)) * S_.names() + last;
  }
  size_t cust_slot(uint32_t w, uint32_t d, uint32_t c) const { return (size_t(w) * 10 + (d - 1)) * (S_.customers + 1) + c; }
  // A customer by id, or by last name from the table det_sync built (60% of Payment and
  // OrderStatus); by id when nobody in the district has the name drawn.
  uint32_t customer(Rng& r, uint32_t w, uint32_t d, bool by_name) const {
    uint32_t c = tpcc::nurand(r, 1023, 1, S_.customers);
    uint32_t last = tpcc::nurand(r, 255, 0, S_.names() - 1);
    if (!by_name) return c;
    if (by_name_.empty()) throw std::logic_error("TPC-C: det_sync must build the last-name table before inputs are drawn");
    uint32_t id = by_name_[name_slot(w, d, last)];
    return id ? id : c;
  }
  template <size_t N>
  uint64_t mean(const uint64_t (&v)[N]) const {
    uint64_t sum = 0, all = 0;
    for (size_t k = 0; k < N; k++) sum += v[k] * uint64_t(pct_[k]), all += uint64_t(pct_[k]);
    return (sum * 3 / 2 + all - 1) / all;
  }

  int pct_[kKinds] = {};
  struct Committed {
    std::vector<uint32_t> next, oldest;  // per district: next order id, oldest undelivered (epoch start)
  };
  mutable Committed base_;
  mutable std::vector<std::vector<uint64_t>> undelivered_;  // per district: placed() from base_.oldest on
  mutable std::vector<uint32_t> last_order_;  // per customer: its last order (epoch start)
  mutable std::vector<uint32_t> by_name_;     // per district and last name: the customer chosen
  mutable std::atomic<uint64_t> committed_[kKinds] = {}, failed_[kKinds] = {}, rolled_back_{0}, by_name_done_[2] = {},
                                       delivered_{0};
};

}  // namespace nvt
