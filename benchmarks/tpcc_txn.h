// TPC-C's loader (clause 4.3.3) and terminal (clause 2.4-2.8); included by benchmarks/tpcc.h.
#pragma once
#include "benchmarks/tpcc.h"

namespace nvt {

template <class Engine>
struct Tpcc::Loader {
  Engine& eng;
  typename Engine::Thread& th;
  Rng& r;
  const Tpcc& b;
  std::vector<char> img = std::vector<char>(1024);

  template <class T>
  T* fresh() {
    memset(img.data(), 0, img.size());
    return reinterpret_cast<T*>(img.data());
  }
  void put(uint32_t table, uint64_t key) { eng.load(th, table, key, img.data()); }

  void items() {
    for (uint32_t i = 1; i <= tpcc::kItems; i++) {
      auto* it = fresh<tpcc::Item>();
      it->i_id = i;
      it->i_im_id = tpcc::uniform(r, 1, 10000);
      tpcc::astring(r, it->i_name, 14, 24, 24);
      it->i_price = double(tpcc::uniform(r, 100, 10000)) / 100;
      tpcc::data_original(r, it->i_data, 26, 50, 50);
      put(tpcc::kItem, K::item(i));
    }
  }

  void warehouse(uint32_t w) {
    auto* wh = fresh<tpcc::Warehouse>();
    wh->w_id = w;
    address(wh->w_name, wh->w_street_1, wh->w_street_2, wh->w_city, wh->w_state, wh->w_zip);
    wh->w_tax = double(tpcc::uniform(r, 0, 2000)) / 10000;
    wh->w_ytd = 300000;
    put(tpcc::kWarehouse, K::warehouse(w));
    for (uint32_t i = 1; i <= tpcc::kItems; i++) {
      auto* s = fresh<tpcc::Stock>();
      s->s_i_id = i;
      s->s_w_id = w;
      s->s_quantity = tpcc::uniform(r, 10, 100);
      for (auto& d : s->s_dist) tpcc::astring(r, d, 24, 24, 24);
      tpcc::data_original(r, s->s_data, 26, 50, 50);
      put(tpcc::kStock, K::stock(w, i));
    }
    for (uint32_t d = 1; d <= 10; d++) district(w, d);
  }

  void address(char* name, char* s1, char* s2, char* city, char* state, char* zip) {
    tpcc::astring(r, name, 6, 10, 10);
    tpcc::astring(r, s1, 10, 20, 20);
    tpcc::astring(r, s2, 10, 20, 20);
    tpcc::astring(r, city, 10, 20, 20);
    state[0] = char('A' + r.below(26)), state[1] = char('A' + r.below(26));
    tpcc::zip(r, zip);
  }

  void district(uint32_t w, uint32_t d) {
    auto* di = fresh<tpcc::District>();
    di->d_id = d;
    di->d_w_id = w;
    address(di->d_name, di->d_street_1, di->d_street_2, di->d_city, di->d_state, di->d_zip);
    di->d_tax = double(tpcc::uniform(r, 0, 2000)) / 10000;
    di->d_ytd = 30000;
    di->d_next_o_id = 3001;
    put(tpcc::kDistrict, K::district(w, d));
    for (uint32_t c = 1; c <= 3000; c++) {
      auto* cu = fresh<tpcc::Customer>();
      cu->c_id = c, cu->c_d_id = d, cu->c_w_id = w;
      uint32_t last = c <= 1000 ? c - 1 : tpcc::nurand(r, 255, 0, 999);
      tpcc::last_name(last, cu->c_last);
      memcpy(cu->c_middle, "OE", 2);
      tpcc::astring(r, cu->c_first, 8, 16, 16);
      char unused[10];
      address(unused, cu->c_street_1, cu->c_street_2, cu->c_city, cu->c_state, cu->c_zip);
      tpcc::nstring(r, cu->c_phone, 16);
      cu->c_since = 1;
      memcpy(cu->c_credit, r.below(10) == 0 ? "BC" : "GC", 2);
      cu->c_credit_lim = 50000;
      cu->c_discount = double(tpcc::uniform(r, 0, 5000)) / 10000;
      cu->c_balance = -10;
      cu->c_ytd_payment = 10;
      cu->c_payment_cnt = 1;
      tpcc::astring(r, cu->c_data, 300, 500, 500);
      put(tpcc::kCustomer, K::customer(w, d, c));
      fresh<tpcc::IndexEntry>()->id = c;
      put(tpcc::kCustomerByName, K::customer_by_name(w, d, last, c));
      auto* h = fresh<tpcc::History>();
      h->h_c_id = c, h->h_c_d_id = h->h_d_id = d, h->h_c_w_id = h->h_w_id = w;
      h->h_date = 1;
      h->h_amount = 10;
      tpcc::astring(r, h->h_data, 12, 24, 24);
      put(tpcc::kHistory, Tpcc::history_key(0, (uint64_t(w) * 10 + d) * 3000 + c));
    }
    std::vector<uint32_t> perm(3000);
    for (uint32_t i = 0; i < 3000; i++) perm[i] = i + 1;
    for (uint32_t i = 2999; i > 0; i--) std::swap(perm[i], perm[r.below(i + 1)]);
    for (uint32_t o = 1; o <= 3000; o++) {
      auto* od = fresh<tpcc::Order>();
      od->o_id = o, od->o_d_id = d, od->o_w_id = w, od->o_c_id = perm[o - 1];
      od->o_entry_d = 1;
      od->o_carrier_id = o < 2101 ? tpcc::uniform(r, 1, 10) : 0;
      od->o_ol_cnt = tpcc::uniform(r, 5, 15);
      od->o_all_local = 1;
      uint32_t cnt = od->o_ol_cnt, c = od->o_c_id;
      put(tpcc::kOrder, K::order(w, d, o));
      fresh<tpcc::IndexEntry>()->id = o;
      put(tpcc::kOrderByCustomer, K::order_by_customer(w, d, c, o));
      for (uint32_t n = 1; n <= cnt; n++) {
        auto* ol = fresh<tpcc::OrderLine>();
        ol->ol_o_id = o, ol->ol_d_id = d, ol->ol_w_id = w, ol->ol_number = n;
        ol->ol_i_id = tpcc::uniform(r, 1, tpcc::kItems);
        ol->ol_supply_w_id = w;
        ol->ol_delivery_d = o < 2101 ? 1 : 0;
        ol->ol_quantity = 5;
        ol->ol_amount = o < 2101 ? 0 : double(tpcc::uniform(r, 1, 999999)) / 100;
        tpcc::astring(r, ol->ol_dist_info, 24, 24, 24);
        put(tpcc::kOrderLine, K::order_line(w, d, o, n));
      }
      if (o >= 2101) {
        auto* no = fresh<tpcc::NewOrder>();
        no->no_o_id = o, no->no_d_id = d, no->no_w_id = w;
        put(tpcc::kNewOrder, K::new_order(w, d, o));
      }
    }
  }
};

// One terminal: next() draws a transaction and its inputs (kept across retries), execute() runs
// it through the transaction manager.
class Tpcc::Worker {
 public:
  Worker(const Tpcc& b, int tid) : b_(b), tid_(tid), r_(b.o_.seed * 1000003 + uint64_t(tid) + 11) {}

  void next() {
    uint32_t x = uint32_t(r_.below(uint64_t(b_.cum_[kKinds - 1])));
    kind_ = kNewOrder;
    while (x >= uint32_t(b_.cum_[kind_])) kind_ = Kind(kind_ + 1);
    rolled_back_ = false;
    const uint32_t W = uint32_t(b_.W_);
    w_ = 1 + uint32_t(r_.below(W));  // the terminal's warehouse: any, uniformly
    d_ = tpcc::uniform(r_, 1, 10);
    switch (kind_) {
      case kNewOrder: {
        c_ = tpcc::nurand(r_, 1023, 1, 3000);
        n_ = tpcc::uniform(r_, 5, 15);
        bool rollback = !b_.deterministic_ && tpcc::uniform(r_, 1, 100) == 1;
        all_local_ = true;
        for (uint32_t i = 0; i < n_; i++) {
          uint32_t it;
          bool dup;
          do {  // distinct items: one stock access each
            it = tpcc::nurand(r_, 8191, 1, tpcc::kItems);
            dup = false;
            for (uint32_t j = 0; j < i; j++) dup |= items_[j] == it;
          } while (dup);
          items_[i] = it;
          supply_[i] = w_;
          if (W > 1 && r_.below(100) < uint64_t(b_.o_.neworder_remote_pct)) {
            do supply_[i] = tpcc::uniform(r_, 1, W); while (supply_[i] == w_);
            all_local_ = false;
          }
          qty_[i] = tpcc::uniform(r_, 1, 10);
        }
        if (rollback) items_[n_ - 1] = tpcc::kItems + 1;  // an unused item: clause 2.4.1.5
        if (b_.deterministic_) o_id_ = b_.next_o_id_[K::dist(w_, d_)].fetch_add(1);
        break;
      }
      case kPayment: {
        cw_ = w_, cd_ = d_;
        if (W > 1 && r_.below(100) < uint64_t(b_.o_.payment_remote_pct)) {
          do cw_ = tpcc::uniform(r_, 1, W); while (cw_ == w_);
          cd_ = tpcc::uniform(r_, 1, 10);
        }
        by_name_ = !b_.deterministic_ && r_.below(100) < 60;
        c_ = tpcc::nurand(r_, 1023, 1, 3000);
        last_ = tpcc::nurand(r_, 255, 0, 999);
        amount_ = double(tpcc::uniform(r_, 100, 500000)) / 100;
        h_seq_++;
        break;
      }
      case kOrderStatus:
        by_name_ = !b_.deterministic_ && r_.below(100) < 60;
        c_ = tpcc::nurand(r_, 1023, 1, 3000);
        last_ = tpcc::nurand(r_, 255, 0, 999);
        cw_ = w_, cd_ = d_;
        break;
      case kDelivery:
        carrier_ = tpcc::uniform(r_, 1, 10);
        break;
      case kStockLevel:
        threshold_ = tpcc::uniform(r_, 10, 20);
        break;
      default:
        break;
    }
  }

  uint32_t kind() const { return kind_; }
  // NewOrder's 1% rollback: the transaction ended as specified (counted, not retried).
  bool rolled_back() const { return rolled_back_; }

  template <class Mgr>
  bool execute(Mgr& m) {
    switch (kind_) {
      case kNewOrder: return new_order(m);
      case kPayment: return payment(m);
      case kOrderStatus: return order_status(m);
      case kDelivery: return delivery(m);
      case kStockLevel: return stock_level(m);
      default: return false;
    }
  }

  template <class Mgr>
  void acknowledged(Mgr&) {}

 private:
  template <class Mgr>
  bool new_order(Mgr& m) {
    using namespace tpcc;
    const char* wi = m.read(kWarehouse, K::warehouse(w_));
    if (!wi) return false;
    double w_tax = as<Warehouse>(wi)->w_tax;
    char* di = m.write(kDistrict, K::district(w_, d_));
    if (!di) return false;
    District* dist = as<District>(di);
    uint32_t o = b_.deterministic_ ? o_id_ : dist->d_next_o_id;
    uint32_t next = dist->d_next_o_id;  // a copy: std::max would bind a reference to a packed field
    dist->d_next_o_id = std::max(next, o + 1);
    double d_tax = dist->d_tax;
    const char* ci = m.read(kCustomer, K::customer(w_, d_, c_));
    if (!ci) return false;
    double discount = as<Customer>(ci)->c_discount;
    char* oi = m.insert(kOrder, K::order(w_, d_, o));
    if (!oi) return false;
    *as<Order>(oi) = Order{o, d_, w_, c_, 1, 0, n_, all_local_ ? 1u : 0u};
    char* ni = m.insert(tpcc::kNewOrder, K::new_order(w_, d_, o));
    if (!ni) return false;
    *as<NewOrder>(ni) = NewOrder{o, d_, w_};
    char* xi = m.insert(kOrderByCustomer, K::order_by_customer(w_, d_, c_, o));
    if (!xi) return false;
    as<IndexEntry>(xi)->id = o;
    double total = 0;
    for (uint32_t i = 0; i < n_; i++) {
      const char* ii = m.read(kItem, K::item(items_[i]));
      if (!ii) {
        if (items_[i] > kItems) {  // the 1% rollback
          m.user_abort();
          rolled_back_ = true;
        }
        return false;
      }
      double price = as<Item>(ii)->i_price;
      char* si = m.write(kStock, K::stock(supply_[i], items_[i]));
      if (!si) return false;
      Stock* s = as<Stock>(si);
      s->s_quantity = s->s_quantity >= qty_[i] + 10 ? s->s_quantity - qty_[i] : s->s_quantity - qty_[i] + 91;
      s->s_ytd += qty_[i];
      s->s_order_cnt++;
      if (supply_[i] != w_) s->s_remote_cnt++;
      char* li = m.insert(kOrderLine, K::order_line(w_, d_, o, i + 1));
      if (!li) return false;
      OrderLine* ol = as<OrderLine>(li);
      ol->ol_o_id = o, ol->ol_d_id = d_, ol->ol_w_id = w_, ol->ol_number = i + 1;
      ol->ol_i_id = items_[i];
      ol->ol_supply_w_id = supply_[i];
      ol->ol_quantity = qty_[i];
      ol->ol_amount = qty_[i] * price;
      memcpy(ol->ol_dist_info, s->s_dist[d_ - 1], 24);
      total += ol->ol_amount;
    }
    sink_ += total * (1 - discount) * (1 + w_tax + d_tax);
    return true;
  }

  // The customer by last name: the one at position ceil(n/2) in C_FIRST order (clause 2.5.2.2).
  template <class Mgr>
  bool customer_by_name(Mgr& m, uint32_t& c) {
    using namespace tpcc;
    struct Cand { char first[16]; uint32_t id; };
    cands_.clear();
    bool ok = m.scan(kCustomerByName, K::customer_by_name(cw_, cd_, last_, 0),
                     K::customer_by_name(cw_, cd_, last_, 4095), 3000, [&](uint64_t key, const char*) {
                       cands_.push_back(uint32_t(key & 4095));
                       return true;
                     });
    if (!ok) return false;
    if (cands_.empty()) { c = c_; return true; }  // no customer of that name here: by id
    std::vector<Cand> v;
    for (uint32_t id : cands_) {
      const char* ci = m.read(kCustomer, K::customer(cw_, cd_, id));
      if (!ci) return false;
      Cand x;
      memcpy(x.first, as<Customer>(ci)->c_first, 16);
      x.id = id;
      v.push_back(x);
    }
    std::sort(v.begin(), v.end(), [](const Cand& a, const Cand& b) { return memcmp(a.first, b.first, 16) < 0; });
    c = v[(v.size() - 1) / 2].id;
    return true;
  }

  template <class Mgr>
  bool payment(Mgr& m) {
    using namespace tpcc;
    char* wi = m.write(kWarehouse, K::warehouse(w_));
    if (!wi) return false;
    as<Warehouse>(wi)->w_ytd += amount_;
    char* di = m.write(kDistrict, K::district(w_, d_));
    if (!di) return false;
    as<District>(di)->d_ytd += amount_;
    uint32_t c = c_;
    if (by_name_ && !customer_by_name(m, c)) return false;
    char* ci = m.write(kCustomer, K::customer(cw_, cd_, c));
    if (!ci) return false;
    Customer* cu = as<Customer>(ci);
    cu->c_balance -= amount_;
    cu->c_ytd_payment += amount_;
    cu->c_payment_cnt++;
    if (memcmp(cu->c_credit, "BC", 2) == 0) {  // clause 2.5.2.2: prepend the payment to C_DATA
      char head[64];
      int n = snprintf(head, sizeof head, "%u %u %u %u %u %.2f|", c, cd_, cw_, d_, w_, amount_);
      memmove(cu->c_data + n, cu->c_data, 500 - size_t(n));
      memcpy(cu->c_data, head, size_t(n));
    }
    char* hi = m.insert(kHistory, history_key(uint32_t(tid_) + 1, h_seq_));
    if (!hi) return false;
    History* h = as<History>(hi);
    *h = History{c, cd_, cw_, d_, w_, 2, amount_, {}};
    memcpy(h->h_data, as<Warehouse>(wi)->w_name, 10);
    memcpy(h->h_data + 14, as<District>(di)->d_name, 10);
    return true;
  }

  template <class Mgr>
  bool order_status(Mgr& m) {
    using namespace tpcc;
    uint32_t c = c_;
    if (by_name_ && !customer_by_name(m, c)) return false;
    const char* ci = m.read(kCustomer, K::customer(cw_, cd_, c));
    if (!ci) return false;
    sink_ += as<Customer>(ci)->c_balance;
    uint64_t last = 0;
    bool ok = m.scan(kOrderByCustomer, K::order_by_customer(w_, d_, c, 0), K::order_by_customer(w_, d_, c, (1u << 24) - 1), 1,
                     [&](uint64_t k, const char*) { last = k; return true; }, /*reverse=*/true);
    if (!ok) return false;
    if (!last) return true;
    uint32_t o = uint32_t(last & ((1u << 24) - 1));
    const char* oi = m.read(kOrder, K::order(w_, d_, o));
    if (!oi) return false;
    uint32_t cnt = as<Order>(oi)->o_ol_cnt;
    for (uint32_t n = 1; n <= cnt; n++) {
      const char* li = m.read(kOrderLine, K::order_line(w_, d_, o, n));
      if (!li) return false;
      sink_ += as<OrderLine>(li)->ol_amount;
    }
    return true;
  }

  template <class Mgr>
  bool delivery(Mgr& m) {
    using namespace tpcc;
    for (uint32_t d = 1; d <= 10; d++) {
      uint64_t key = 0;
      bool ok = m.scan(tpcc::kNewOrder, K::new_order(w_, d, 0), K::new_order(w_, d, (1u << 24) - 1), 1,
                       [&](uint64_t k, const char*) { key = k; return true; });
      if (!ok) return false;
      if (!key) continue;  // no undelivered order in this district: skipped (clause 2.7.4.2)
      if (!m.remove(tpcc::kNewOrder, key)) return false;
      uint32_t o = uint32_t(key & ((1u << 24) - 1));
      char* oi = m.write(kOrder, K::order(w_, d, o));
      if (!oi) return false;
      Order* od = as<Order>(oi);
      od->o_carrier_id = carrier_;
      double sum = 0;
      for (uint32_t n = 1; n <= od->o_ol_cnt; n++) {
        char* li = m.write(kOrderLine, K::order_line(w_, d, o, n));
        if (!li) return false;
        as<OrderLine>(li)->ol_delivery_d = 2;
        sum += as<OrderLine>(li)->ol_amount;
      }
      char* ci = m.write(kCustomer, K::customer(w_, d, od->o_c_id));
      if (!ci) return false;
      as<Customer>(ci)->c_balance += sum;
      as<Customer>(ci)->c_delivery_cnt++;
    }
    return true;
  }

  template <class Mgr>
  bool stock_level(Mgr& m) {
    using namespace tpcc;
    const char* di = m.read(kDistrict, K::district(w_, d_));
    if (!di) return false;
    uint32_t next = as<District>(di)->d_next_o_id;
    uint32_t lo = next > 20 ? next - 20 : 1;
    seen_.clear();
    bool ok = m.scan(kOrderLine, K::order_line(w_, d_, lo, 0), K::order_line(w_, d_, next - 1, 15), 20 * 15,
                     [&](uint64_t, const char* li) {
                       seen_.push_back(as<OrderLine>(li)->ol_i_id);
                       return true;
                     });
    if (!ok) return false;
    std::sort(seen_.begin(), seen_.end());
    seen_.erase(std::unique(seen_.begin(), seen_.end()), seen_.end());
    uint32_t low = 0;
    for (uint32_t i : seen_) {
      const char* si = m.read(kStock, K::stock(w_, i));
      if (!si) return false;
      low += as<Stock>(si)->s_quantity < threshold_;
    }
    sink_ += low;
    return true;
  }

  const Tpcc& b_;
  int tid_;
  Rng r_;
  Kind kind_ = kNewOrder;
  bool rolled_back_ = false, all_local_ = true, by_name_ = false;
  uint32_t w_ = 1, d_ = 1, c_ = 1, cw_ = 1, cd_ = 1, n_ = 0, o_id_ = 0, last_ = 0, carrier_ = 1, threshold_ = 10;
  uint32_t items_[15] = {}, supply_[15] = {}, qty_[15] = {};
  double amount_ = 0, sink_ = 0;
  uint64_t h_seq_ = 0;
  std::vector<uint32_t> cands_, seen_;
};

}  // namespace nvt
