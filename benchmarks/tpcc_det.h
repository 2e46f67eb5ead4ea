// TPC-C's deterministic form (ENGINE=nvcaracal, system/epoch_driver.h; papers/
// nvcaracal-eurosys23.txt 6.2.3): one-shot NewOrder and Payment transactions whose write sets,
// inserts included, are known before their epoch executes, as Caracal runs them.
//  - NewOrder's order id does not come from reading D_NEXT_O_ID during execution: the insert
//    step's serial pass (det_sequence) gives the NewOrders of each district consecutive ids in
//    serial-id order from a per-district counter. The counter is the district's D_NEXT_O_ID as
//    of the last committed epoch (NewOrder still sets D_NEXT_O_ID, in serial order, so the
//    committed district row is the counter's durable copy: recovery reads it back). Ids are
//    therefore the same in a replay, and NEW-ORDER has no gaps (condition 3 holds too).
//  - Payment by last name (60%, clause 2.5.1.2) is resolved when its inputs are drawn: the
//    customer at position ceil(n/2) by C_FIRST among the district's customers of that name,
//    from a table built from the committed database (names never change), so the logged input
//    carries the customer id, as the paper's Caracal does, with the specification's choice.
//  - The mix: `deterministic` is NewOrder:Payment 45:43 (the standard mix's weights of the two);
//    an explicit list may name neworder and payment only. OrderStatus, Delivery and StockLevel
//    scan (their keys follow from what they read), and NewOrder's 1% rollback would leave an
//    order id unused: neither is in this form.
// Inputs (logged and replayed): NewOrder {0, w, d, c, ol_cnt, o_id, line...}, a line = item |
// supply warehouse << 20 | quantity << 40; Payment {1, w, d, c_w, c_d, c, cents, h_key, by_name}.
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
    int pct[kKinds];
    for (int k = 0; k < int(kKinds); k++) pct[k] = cum_[k] - (k ? cum_[k - 1] : 0);
    if (o.tpcc_mix == "standard" || o.tpcc_mix == "np")
      throw std::invalid_argument("--tpcc-mix " + o.tpcc_mix +
                                  ": a deterministic engine runs --tpcc-mix deterministic (NewOrder:Payment 45:43, "
                                  "payments by name resolved before the epoch) or a neworder/payment list");
    if (o.tpcc_mix != "deterministic")
      for (int k = kOrderStatus; k < int(kKinds); k++)
        if (pct[k] > 0)
          throw std::invalid_argument(std::string("--tpcc-mix: ") + kKindNames[k] +
                                      " scans, so its write set is not known before execution: a deterministic engine "
                                      "runs neworder and payment only");
    new_order_pct_ = pct[kNewOrder];
    payment_pct_ = pct[kPayment];
    if (new_order_pct_ + payment_pct_ <= 0) throw std::invalid_argument("--tpcc-mix: neither neworder nor payment");
    base_.assign(size_t(W_) * 10 + 11, S_.customers + 1);
  }

  std::string layout() const { return Tpcc::layout() + " deterministic"; }

  template <class Engine>
  void det_load(Engine& eng, int threads) const {
    load_per_warehouse(eng, threads);
  }
  // After the load, and after recovery before the replay: the order-id counters from the
  // committed districts, and the last-name table from the customers.
  template <class Engine>
  void det_sync(Engine& eng) const {
    const uint32_t C = S_.customers, names = S_.names();
    std::vector<char> buf(1024);
    uint64_t ver;
    std::unordered_map<std::string, uint32_t> number;
    for (uint32_t n = 0; n < names; n++) {
      char s[16];
      tpcc::last_name(n, s);
      number[std::string(s, strnlen(s, 16))] = n;
    }
    by_name_.assign(size_t(W_ + 1) * 10 * names, 0);
    struct Cand {
      char first[16];
      uint32_t id;
    };
    std::vector<std::vector<Cand>> cands(names);
    for (uint32_t w = 1; w <= uint32_t(W_); w++)
      for (uint32_t d = 1; d <= 10; d++) {
        if (!eng.read_current(tpcc::kDistrict, K::district(w, d), buf.data(), ver))
          throw std::runtime_error("TPC-C: district " + std::to_string(w) + "/" + std::to_string(d) + " missing");
        base_[K::dist(w, d)] = tpcc::as<tpcc::District>(buf.data())->d_next_o_id;
        for (auto& v : cands) v.clear();
        for (uint32_t c = 1; c <= C; c++) {
          if (!eng.read_current(tpcc::kCustomer, K::customer(w, d, c), buf.data(), ver))
            throw std::runtime_error("TPC-C: customer " + std::to_string(c) + " of district " + std::to_string(w) + "/" +
                                     std::to_string(d) + " missing");
          const auto* cu = tpcc::as<tpcc::Customer>(buf.data());
          auto it = number.find(std::string(cu->c_last, strnlen(cu->c_last, 16)));
          if (it == number.end()) continue;
          Cand x;
          memcpy(x.first, cu->c_first, 16);
          x.id = c;
          cands[it->second].push_back(x);
        }
        for (uint32_t n = 0; n < names; n++) {
          auto& v = cands[n];
          if (v.empty()) continue;  // nobody of that name here: the payment goes by id
          std::stable_sort(v.begin(), v.end(), [](const Cand& a, const Cand& b) { return memcmp(a.first, b.first, 16) < 0; });
          by_name_[name_slot(w, d, n)] = v[(v.size() - 1) / 2].id;
        }
      }
  }

  // Sizes for the engine: input words, declared writes, value bytes per transaction.
  uint64_t det_input_words() const { return 6 + 15; }
  uint64_t det_txn_writes() const { return 1 + 15 + 3 + 15; }
  uint64_t det_value_bytes() const { return tpcc::customer_schema().tuple_size(); }
  // The most value bytes one transaction writes (each value rounded to 64 B): NewOrder's.
  uint64_t det_txn_value_bytes() const {
    auto up = [](uint64_t b) { return (b + 63) / 64 * 64; };
    uint64_t no = up(tpcc::district_schema().tuple_size()) + 15 * up(tpcc::stock_schema().tuple_size()) +
                  up(tpcc::order_schema().tuple_size()) + up(tpcc::new_order_schema().tuple_size()) +
                  up(tpcc::index_schema().tuple_size()) + 15 * up(tpcc::order_line_schema().tuple_size());
    uint64_t pay = up(tpcc::warehouse_schema().tuple_size()) + up(tpcc::district_schema().tuple_size()) +
                   up(tpcc::customer_schema().tuple_size()) + up(tpcc::history_schema().tuple_size());
    return std::max(no, pay);
  }

  void det_draw(Rng& r, uint64_t epoch, uint64_t j, std::vector<uint64_t>& in) const {
    const uint32_t W = uint32_t(W_), C = S_.customers, names = S_.names();
    const uint32_t w = 1 + uint32_t(r.below(W)), d = tpcc::uniform(r, 1, 10);
    if (r.below(uint64_t(new_order_pct_ + payment_pct_)) < uint64_t(new_order_pct_)) {
      uint32_t cnt = tpcc::uniform(r, 5, 15);
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
        uint32_t supply = w;
        if (W > 1 && r.below(100) < uint64_t(o_.neworder_remote_pct))
          do supply = tpcc::uniform(r, 1, W); while (supply == w);
        uint64_t qty = tpcc::uniform(r, 1, 10);
        in.push_back(uint64_t(it) | uint64_t(supply) << 20 | qty << 40);
      }
      return;
    }
    uint32_t c_w = w, c_d = d;
    if (W > 1 && r.below(100) < uint64_t(o_.payment_remote_pct)) {
      do c_w = tpcc::uniform(r, 1, W); while (c_w == w);
      c_d = tpcc::uniform(r, 1, 10);
    }
    bool by_name = r.below(100) < 60;
    uint32_t c = tpcc::nurand(r, 1023, 1, C);
    uint32_t last = tpcc::nurand(r, 255, 0, names - 1);
    if (by_name) {
      if (by_name_.empty()) throw std::logic_error("TPC-C: det_sync must build the last-name table before inputs are drawn");
      uint32_t id = by_name_[name_slot(c_w, c_d, last)];
      if (id) c = id;
    }
    uint64_t cents = tpcc::uniform(r, 100, 500000);
    // HISTORY's key: the transaction's serial id, apart from the loaded rows' and terminals'.
    uint64_t h_key = uint64_t(1) << 60 | epoch << 32 | j;
    in.insert(in.end(), {uint64_t(kPayment), w, d, c_w, c_d, c, cents, h_key, by_name ? 1u : 0u});
  }

  size_t det_kind(const uint64_t* in) const { return size_t(in[0]); }

  // The insert step's serial pass: each district's NewOrders take consecutive order ids.
  std::vector<uint32_t> det_sequence_begin() const { return base_; }
  void det_sequence(std::vector<uint32_t>& next, uint64_t* in, bool mine) const {
    if (in[0] != kNewOrder) return;
    uint32_t o = next[K::dist(uint32_t(in[1]), uint32_t(in[2]))]++;
    if (mine) in[5] = o;
  }
  void det_sequence_end(std::vector<uint32_t>& next) const { base_.swap(next); }

  template <class F>
  void det_insert_set(const uint64_t* in, F&& declare) const {
    if (in[0] == kNewOrder) {
      const uint32_t w = uint32_t(in[1]), d = uint32_t(in[2]), c = uint32_t(in[3]), o = order_id(in);
      declare(tpcc::kOrder, K::order(w, d, o));
      declare(tpcc::kNewOrder, K::new_order(w, d, o));
      declare(tpcc::kOrderByCustomer, K::order_by_customer(w, d, c, o));
      for (uint32_t i = 0; i < uint32_t(in[4]); i++) declare(tpcc::kOrderLine, K::order_line(w, d, o, i + 1));
    } else {
      declare(tpcc::kHistory, in[7]);
    }
  }
  template <class F>
  void det_write_set(const uint64_t* in, F&& declare) const {
    if (in[0] == kNewOrder) {
      declare(tpcc::kDistrict, K::district(uint32_t(in[1]), uint32_t(in[2])));
      for (uint32_t i = 0; i < uint32_t(in[4]); i++)
        declare(tpcc::kStock, K::stock(uint32_t(in[6 + i] >> 20 & 0xfffff), uint32_t(in[6 + i] & 0xfffff)));
    } else {
      declare(tpcc::kWarehouse, K::warehouse(uint32_t(in[1])));
      declare(tpcc::kDistrict, K::district(uint32_t(in[1]), uint32_t(in[2])));
      declare(tpcc::kCustomer, K::customer(uint32_t(in[3]), uint32_t(in[4]), uint32_t(in[5])));
    }
  }
  // The Worker's NewOrder and Payment code on the deterministic transaction (one Worker per core
  // thread), with the order id and the customer taken from the inputs.
  template <class Txn>
  bool det_run(const uint64_t* in, Txn& t) const {
    thread_local const TpccDet* owner = nullptr;
    thread_local std::unique_ptr<Worker> wk;
    if (owner != this) {
      wk = std::make_unique<Worker>(*this, 0);
      owner = this;
    }
    if (in[0] == kNewOrder) {
      tpcc::NewOrderIn x;
      x.w = uint32_t(in[1]), x.d = uint32_t(in[2]), x.c = uint32_t(in[3]), x.ol_cnt = uint32_t(in[4]);
      x.o_id = order_id(in);
      for (uint32_t i = 0; i < x.ol_cnt; i++) {
        x.items[i] = uint32_t(in[6 + i] & 0xfffff);
        x.supply[i] = uint32_t(in[6 + i] >> 20 & 0xfffff);
        x.qty[i] = uint32_t(in[6 + i] >> 40);
      }
      wk->set(x);
    } else {
      tpcc::PaymentIn x;
      x.w = uint32_t(in[1]), x.d = uint32_t(in[2]), x.c_w = uint32_t(in[3]), x.c_d = uint32_t(in[4]);
      x.c = uint32_t(in[5]);
      x.amount = double(in[6]) / 100;
      x.h_key = in[7];
      wk->set(x);  // by id: a by-name input already names its customer
    }
    bool ok = wk->execute_write(t);
    (ok ? committed_ : failed_)[in[0] == kNewOrder ? 0 : 1].fetch_add(1, std::memory_order_relaxed);
    if (ok && in[0] == kPayment && in[8]) by_name_payments_.fetch_add(1, std::memory_order_relaxed);
    return ok;
  }

  // Conditions 1-4, the third included: the order ids have no gaps.
  template <class Engine>
  nlohmann::json check(Engine& eng) const {
    return tpcc::check_consistency(eng, W_, true);
  }
  nlohmann::json report() const {
    return {{"tpcc", {{"mix", "neworder:" + std::to_string(new_order_pct_) + ",payment:" + std::to_string(payment_pct_)},
                      {"neworder", {{"committed", committed_[0].load()}, {"failed", failed_[0].load()}}},
                      {"payment", {{"committed", committed_[1].load()}, {"failed", failed_[1].load()},
                                   {"by_name", by_name_payments_.load()}}}}}};
  }

 private:
  static uint32_t order_id(const uint64_t* in) {
    if (!in[5]) throw std::logic_error("NewOrder without an order id: the insert step's serial pass did not run");
    return uint32_t(in[5]);
  }
  size_t name_slot(uint32_t w, uint32_t d, uint32_t last) const {
    return (size_t(w) * 10 + (d - 1)) * S_.names() + last;
  }

  int new_order_pct_ = 45, payment_pct_ = 43;
  mutable std::vector<uint32_t> base_;     // per district: the next order id (epoch start)
  mutable std::vector<uint32_t> by_name_;  // per district and last name: the customer chosen
  mutable std::atomic<uint64_t> committed_[2] = {}, failed_[2] = {}, by_name_payments_{0};
};

}  // namespace nvt
