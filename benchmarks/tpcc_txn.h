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
    for (uint32_t i = 1; i <= b.S_.items; i++) {
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
    warehouse_row(w);
    stock(w, 1, b.S_.items);
    for (uint32_t d = 1; d <= 10; d++) district(w, d);
  }
  void warehouse_row(uint32_t w) {
    auto* wh = fresh<tpcc::Warehouse>();
    wh->w_id = w;
    address(wh->w_name, wh->w_street_1, wh->w_street_2, wh->w_city, wh->w_state, wh->w_zip);
    wh->w_tax = double(tpcc::uniform(r, 0, 2000)) / 10000;
    wh->w_ytd = 300000;
    put(tpcc::kWarehouse, K::warehouse(w));
  }
  // Warehouse w's STOCK rows of items lo..hi.
  void stock(uint32_t w, uint32_t lo, uint32_t hi) {
    for (uint32_t i = lo; i <= hi; i++) {
      auto* s = fresh<tpcc::Stock>();
      s->s_i_id = i;
      s->s_w_id = w;
      s->s_quantity = tpcc::uniform(r, 10, 100);
      for (auto& d : s->s_dist) tpcc::astring(r, d, 24, 24, 24);
      tpcc::data_original(r, s->s_data, 26, 50, 50);
      put(tpcc::kStock, K::stock(w, i));
    }
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
    const uint32_t C = b.S_.customers, names = b.S_.names(), first_new = b.S_.first_new_order();
    di->d_next_o_id = C + 1;
    put(tpcc::kDistrict, K::district(w, d));
    for (uint32_t c = 1; c <= C; c++) {
      auto* cu = fresh<tpcc::Customer>();
      cu->c_id = c, cu->c_d_id = d, cu->c_w_id = w;
      uint32_t last = c <= names ? c - 1 : tpcc::nurand(r, 255, 0, names - 1);
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
      put(tpcc::kHistory, Tpcc::history_key(0, (uint64_t(w) * 10 + d) * C + c));
    }
    std::vector<uint32_t> perm(C);
    for (uint32_t i = 0; i < C; i++) perm[i] = i + 1;
    for (uint32_t i = C - 1; i > 0; i--) std::swap(perm[i], perm[r.below(i + 1)]);
    for (uint32_t o = 1; o <= C; o++) {
      auto* od = fresh<tpcc::Order>();
      od->o_id = o, od->o_d_id = d, od->o_w_id = w, od->o_c_id = perm[o - 1];
      od->o_entry_d = 1;
      od->o_carrier_id = o < first_new ? tpcc::uniform(r, 1, 10) : 0;
      od->o_ol_cnt = tpcc::uniform(r, 5, 15);
      od->o_all_local = 1;
      uint32_t cnt = od->o_ol_cnt, c = od->o_c_id;
      put(tpcc::kOrder, K::order(w, d, o));
      fresh<tpcc::IndexEntry>()->id = o;
      put(tpcc::kOrderByCustomer, K::order_by_customer(w, d, c, o));
      for (uint32_t n = 1; n <= cnt; n++) {
        auto* ol = fresh<tpcc::OrderLine>();
        ol->ol_o_id = o, ol->ol_d_id = d, ol->ol_w_id = w, ol->ol_number = n;
        ol->ol_i_id = tpcc::uniform(r, 1, b.S_.items);
        ol->ol_supply_w_id = w;
        ol->ol_delivery_d = o < first_new ? 1 : 0;
        ol->ol_quantity = 5;
        ol->ol_amount = o < first_new ? 0 : double(tpcc::uniform(r, 1, 999999)) / 100;
        tpcc::astring(r, ol->ol_dist_info, 24, 24, 24);
        put(tpcc::kOrderLine, K::order_line(w, d, o, n));
      }
      if (o >= first_new) {
        auto* no = fresh<tpcc::NewOrder>();
        no->no_o_id = o, no->no_d_id = d, no->no_w_id = w;
        put(tpcc::kNewOrder, K::new_order(w, d, o));
      }
    }
  }
};

// Each transaction's inputs: what a terminal enters (clause 2.4.1-2.8.1). Worker::next() draws
// them at random as the specification says; tests give them explicitly through Worker::set().
namespace tpcc {
struct NewOrderIn {
  uint32_t w = 1, d = 1, c = 1, ol_cnt = 0;  // ol_cnt: 5..15 lines
  uint32_t items[15] = {}, supply[15] = {}, qty[15] = {};  // an item id above the scale's: rollback
  uint32_t o_id = 0;  // deterministic mix: the order id taken before the run; 0: D_NEXT_O_ID
};
struct PaymentIn {
  uint32_t w = 1, d = 1, c_w = 1, c_d = 1;  // the terminal's district; the customer's
  uint32_t c = 1, last = 0;  // the customer by id, or by last name number when by_name
  bool by_name = false;
  double amount = 0;
  uint64_t h_key = 0;  // HISTORY's key; 0: the terminal's next (a deterministic input names it)
};
struct OrderStatusIn {
  uint32_t w = 1, d = 1, c = 1, last = 0;
  bool by_name = false;
  uint32_t o_id = 0;  // a deterministic engine: the customer's last order, found before the run (0: none)
};
struct DeliveryIn {
  uint32_t w = 1, carrier = 1;
  uint32_t o_id[10] = {};  // a deterministic engine: each district's oldest NEW-ORDER, found before the run (0: none)
};
struct StockLevelIn { uint32_t w = 1, d = 1, threshold = 10; };

// What each transaction returns to its terminal (the output screens of clause 2.4.3-2.8.3, the
// parts tests check), valid after a committed execute().
struct NewOrderOut {
  uint32_t o_id = 0;
  double total = 0;  // sum(OL_AMOUNT) * (1 - C_DISCOUNT) * (1 + W_TAX + D_TAX)
};
struct PaymentOut { uint32_t c = 0; double c_balance = 0; };  // the customer paid (by name: the middle one)
struct OrderStatusOut {
  uint32_t c = 0;
  double c_balance = 0;
  uint32_t o_id = 0, o_carrier_id = 0, ol_cnt = 0;  // o_id 0: the customer has no order
  struct Line { uint32_t i_id, supply_w_id, quantity; double amount; uint64_t delivery_d; } lines[15] = {};
};
struct DeliveryOut { uint32_t o_id[10] = {}; };  // the order delivered per district; 0: none (skipped)
struct StockLevelOut { uint32_t low_stock = 0; };
struct Outputs {
  NewOrderOut new_order;
  PaymentOut payment;
  OrderStatusOut order_status;
  DeliveryOut delivery;
  StockLevelOut stock_level;
};
}  // namespace tpcc

// One terminal: next() draws a transaction and its inputs (kept across retries), or set() gives
// them; execute() runs it through the transaction manager and fills out().
class Tpcc::Worker {
 public:
  // Every transaction's inputs (the one drawn last is used).
  struct Inputs {
    tpcc::NewOrderIn new_order;
    tpcc::PaymentIn payment;
    tpcc::OrderStatusIn order_status;
    tpcc::DeliveryIn delivery;
    tpcc::StockLevelIn stock_level;
  };
  Worker(const Tpcc& b, int tid) : b_(b), tid_(tid), r_(b.o_.seed * 1000003 + uint64_t(tid) + 11) {}

  void next() {
    uint32_t x = uint32_t(r_.below(uint64_t(b_.cum_[kKinds - 1])));
    Kind kind = kNewOrder;
    while (x >= uint32_t(b_.cum_[kind])) kind = Kind(kind + 1);
    const uint32_t W = uint32_t(b_.W_), C = b_.S_.customers, names = b_.S_.names();
    const uint32_t w = 1 + uint32_t(r_.below(W));  // the terminal's warehouse: any, uniformly
    const uint32_t d = tpcc::uniform(r_, 1, 10);
    switch (kind) {
      case kNewOrder: {
        tpcc::NewOrderIn in;
        in.w = w, in.d = d;
        in.c = tpcc::nurand(r_, 1023, 1, C);
        in.ol_cnt = tpcc::uniform(r_, 5, 15);
        bool rollback = !b_.deterministic_ && tpcc::uniform(r_, 1, 100) == 1;
        for (uint32_t i = 0; i < in.ol_cnt; i++) {
          uint32_t it;
          bool dup;
          do {  // distinct items: one stock access each
            it = tpcc::nurand(r_, 8191, 1, b_.S_.items);
            dup = false;
            for (uint32_t j = 0; j < i; j++) dup |= in.items[j] == it;
          } while (dup);
          in.items[i] = it;
          in.supply[i] = w;
          if (W > 1 && r_.below(100) < uint64_t(b_.o_.neworder_remote_pct))
            do in.supply[i] = tpcc::uniform(r_, 1, W); while (in.supply[i] == w);
          in.qty[i] = tpcc::uniform(r_, 1, 10);
        }
        if (rollback) in.items[in.ol_cnt - 1] = b_.S_.items + 1;  // an unused item: clause 2.4.1.5
        if (b_.deterministic_) in.o_id = b_.next_o_id_[K::dist(w, d)].fetch_add(1);
        set(in);
        break;
      }
      case kPayment: {
        tpcc::PaymentIn in;
        in.w = in.c_w = w, in.d = in.c_d = d;
        if (W > 1 && r_.below(100) < uint64_t(b_.o_.payment_remote_pct)) {
          do in.c_w = tpcc::uniform(r_, 1, W); while (in.c_w == w);
          in.c_d = tpcc::uniform(r_, 1, 10);
        }
        in.by_name = !b_.deterministic_ && r_.below(100) < 60;
        in.c = tpcc::nurand(r_, 1023, 1, C);
        in.last = tpcc::nurand(r_, 255, 0, names - 1);
        in.amount = double(tpcc::uniform(r_, 100, 500000)) / 100;
        set(in);
        break;
      }
      case kOrderStatus: {
        tpcc::OrderStatusIn in;
        in.w = w, in.d = d;
        in.by_name = !b_.deterministic_ && r_.below(100) < 60;
        in.c = tpcc::nurand(r_, 1023, 1, C);
        in.last = tpcc::nurand(r_, 255, 0, names - 1);
        set(in);
        break;
      }
      case kDelivery:
        set(tpcc::DeliveryIn{w, tpcc::uniform(r_, 1, 10)});
        break;
      case kStockLevel:
        set(tpcc::StockLevelIn{w, d, tpcc::uniform(r_, 10, 20)});
        break;
      default:
        break;
    }
  }

  // The next transaction with the given inputs (tests; next() uses them too).
  void set(const tpcc::NewOrderIn& in) { start(kNewOrder); in_.new_order = in; }
  void set(const tpcc::PaymentIn& in) {
    start(kPayment);
    in_.payment = in;
    h_seq_++;  // HISTORY's key: this terminal's next payment
  }
  void set(const tpcc::OrderStatusIn& in) { start(kOrderStatus); in_.order_status = in; }
  void set(const tpcc::DeliveryIn& in) { start(kDelivery); in_.delivery = in; }
  void set(const tpcc::StockLevelIn& in) { start(kStockLevel); in_.stock_level = in; }

  uint32_t kind() const { return kind_; }

  // A drawn transaction as a value, for the soft partition's dispatcher (system/dispatcher.h).
  // Every table's partition key is the warehouse id (journal 4.2.2: a foreign key for related
  // tables): the terminal's, a NewOrder's supplying warehouses, a Payment's customer's.
  struct Drawn {
    Kind kind = kNewOrder;
    Inputs in;
  };
  Drawn take_drawn() const { return {kind_, in_}; }
  void adopt(const Drawn& d) {
    switch (d.kind) {
      case kNewOrder: return set(d.in.new_order);
      case kPayment: return set(d.in.payment);  // this terminal's next HISTORY key
      case kOrderStatus: return set(d.in.order_status);
      case kDelivery: return set(d.in.delivery);
      default: return set(d.in.stock_level);
    }
  }
  // Warehouse w's key is w - 1: with threads split evenly over the nodes, the partition map's
  // start (partition p on node p mod nodes) then matches where the loader put each warehouse
  // (its thread's heap region, on that thread's node).
  static void partition_keys(const Drawn& d, std::vector<uint64_t>& out) {
    auto w = [&](uint32_t id) { out.push_back(uint64_t(id) - 1); };
    switch (d.kind) {
      case kNewOrder:
        w(d.in.new_order.w);
        for (uint32_t i = 0; i < d.in.new_order.ol_cnt; i++) w(d.in.new_order.supply[i]);
        return;
      case kPayment: w(d.in.payment.w), w(d.in.payment.c_w); return;
      case kOrderStatus: w(d.in.order_status.w); return;
      case kDelivery: w(d.in.delivery.w); return;
      default: w(d.in.stock_level.w); return;
    }
  }

  // NewOrder's 1% rollback: the transaction ended as specified (counted, not retried).
  bool rolled_back() const { return rolled_back_; }
  const tpcc::Outputs& out() const { return out_; }
  // The HISTORY key of the last payment (set or drawn) of this terminal.
  uint64_t history_key() const { return Tpcc::history_key(uint32_t(tid_) + 1, h_seq_); }

  template <class Mgr>
  bool execute(Mgr& m) {
    switch (kind_) {
      case kNewOrder: return new_order(m, in_.new_order, out_.new_order);
      case kPayment: return payment(m, in_.payment, out_.payment);
      case kOrderStatus: return order_status(m, in_.order_status, out_.order_status);
      case kDelivery: return delivery(m, in_.delivery, out_.delivery);
      case kStockLevel: return stock_level(m, in_.stock_level, out_.stock_level);
      default: return false;
    }
  }

  template <class Mgr>
  void acknowledged(Mgr&) {}

 private:
  // A deterministic transaction (Mgr::kNoScans, system/epoch_driver.h) declares its keys before
  // it runs, so it cannot scan: what the scans would find comes in its inputs, found by the
  // epoch's serial pass (benchmarks/tpcc_det.h), or through point reads.
  template <class Mgr>
  static constexpr bool kNoScans = requires { Mgr::kNoScans; };

  void start(Kind k) {
    kind_ = k;
    rolled_back_ = false;
  }

  template <class Mgr>
  bool new_order(Mgr& m, const tpcc::NewOrderIn& in, tpcc::NewOrderOut& out) {
    using namespace tpcc;
    const uint32_t w = in.w, d = in.d, c = in.c, n = in.ol_cnt;
    if constexpr (kNoScans<Mgr>) {  // the rollback is known from the inputs: nothing declared, nothing read
      for (uint32_t i = 0; i < n; i++)
        if (in.items[i] > b_.S_.items) {
          m.user_abort();
          rolled_back_ = true;
          return false;
        }
    }
    const char* wi = m.read(kWarehouse, K::warehouse(w));
    if (!wi) return false;
    double w_tax = as<Warehouse>(wi)->w_tax;
    char* di = m.write(kDistrict, K::district(w, d));
    if (!di) return false;
    District* dist = as<District>(di);
    uint32_t next = dist->d_next_o_id;  // a copy: std::max would bind a reference to a packed field
    uint32_t o = in.o_id ? in.o_id : next;
    dist->d_next_o_id = std::max(next, o + 1);
    double d_tax = dist->d_tax;
    const char* ci = m.read(kCustomer, K::customer(w, d, c));
    if (!ci) return false;
    double discount = as<Customer>(ci)->c_discount;
    bool all_local = true;
    for (uint32_t i = 0; i < n; i++) all_local &= in.supply[i] == w;
    char* oi = m.insert(kOrder, K::order(w, d, o));
    if (!oi) return false;
    *as<Order>(oi) = Order{o, d, w, c, 1, 0, n, all_local ? 1u : 0u};
    char* ni = m.insert(tpcc::kNewOrder, K::new_order(w, d, o));
    if (!ni) return false;
    *as<NewOrder>(ni) = NewOrder{o, d, w};
    char* xi = m.insert(kOrderByCustomer, K::order_by_customer(w, d, c, o));
    if (!xi) return false;
    as<IndexEntry>(xi)->id = o;
    double total = 0;
    for (uint32_t i = 0; i < n; i++) {
      const uint32_t item = in.items[i], supply = in.supply[i], qty = in.qty[i];
      const char* ii = m.read(kItem, K::item(item));
      if (!ii) {
        if (item > b_.S_.items) {  // the 1% rollback
          m.user_abort();
          rolled_back_ = true;
        }
        return false;
      }
      double price = as<Item>(ii)->i_price;
      char* si = m.write(kStock, K::stock(supply, item));
      if (!si) return false;
      Stock* s = as<Stock>(si);
      s->s_quantity = s->s_quantity >= qty + 10 ? s->s_quantity - qty : s->s_quantity - qty + 91;
      s->s_ytd += qty;
      s->s_order_cnt++;
      if (supply != w) s->s_remote_cnt++;
      char* li = m.insert(kOrderLine, K::order_line(w, d, o, i + 1));
      if (!li) return false;
      OrderLine* ol = as<OrderLine>(li);
      ol->ol_o_id = o, ol->ol_d_id = d, ol->ol_w_id = w, ol->ol_number = i + 1;
      ol->ol_i_id = item;
      ol->ol_supply_w_id = supply;
      ol->ol_quantity = qty;
      ol->ol_amount = qty * price;
      memcpy(ol->ol_dist_info, s->s_dist[d - 1], 24);
      total += ol->ol_amount;
    }
    out.o_id = o;
    out.total = total * (1 - discount) * (1 + w_tax + d_tax);
    return true;
  }

  // The customer by last name: the one at position ceil(n/2) in C_FIRST order (clause 2.5.2.2).
  template <class Mgr>
  bool customer_by_name(Mgr& m, uint32_t w, uint32_t d, uint32_t last, uint32_t& c) {
    using namespace tpcc;
    struct Cand { char first[16]; uint32_t id; };
    cands_.clear();
    bool ok = m.scan(kCustomerByName, K::customer_by_name(w, d, last, 0), K::customer_by_name(w, d, last, 4095),
                     b_.S_.customers, [&](uint64_t key, const char*) {
                       cands_.push_back(uint32_t(key & 4095));
                       return true;
                     });
    if (!ok) return false;
    if (cands_.empty()) return true;  // no customer of that name here: by id
    std::vector<Cand> v;
    for (uint32_t id : cands_) {
      const char* ci = m.read(kCustomer, K::customer(w, d, id));
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
  bool payment(Mgr& m, const tpcc::PaymentIn& in, tpcc::PaymentOut& out) {
    using namespace tpcc;
    char* wi = m.write(kWarehouse, K::warehouse(in.w));
    if (!wi) return false;
    as<Warehouse>(wi)->w_ytd += in.amount;
    char* di = m.write(kDistrict, K::district(in.w, in.d));
    if (!di) return false;
    as<District>(di)->d_ytd += in.amount;
    uint32_t c = in.c;
    if constexpr (kNoScans<Mgr>) {  // a deterministic transaction: resolved in its inputs
      if (in.by_name) throw std::logic_error("payment by name on a transaction that cannot scan");
    } else {
      if (in.by_name && !customer_by_name(m, in.c_w, in.c_d, in.last, c)) return false;
    }
    char* ci = m.write(kCustomer, K::customer(in.c_w, in.c_d, c));
    if (!ci) return false;
    Customer* cu = as<Customer>(ci);
    cu->c_balance -= in.amount;
    cu->c_ytd_payment += in.amount;
    cu->c_payment_cnt++;
    if (memcmp(cu->c_credit, "BC", 2) == 0) {  // clause 2.5.2.2: prepend the payment to C_DATA
      char head[64];
      int n = snprintf(head, sizeof head, "%u %u %u %u %u %.2f|", c, in.c_d, in.c_w, in.d, in.w, in.amount);
      memmove(cu->c_data + n, cu->c_data, 500 - size_t(n));
      memcpy(cu->c_data, head, size_t(n));
    }
    char* hi = m.insert(kHistory, in.h_key ? in.h_key : history_key());
    if (!hi) return false;
    History* h = as<History>(hi);
    *h = History{c, in.c_d, in.c_w, in.d, in.w, 2, in.amount, {}};
    // H_DATA: W_NAME and D_NAME separated by 4 spaces (clause 2.5.2.2).
    char hd[sizeof h->h_data + 1];
    snprintf(hd, sizeof hd, "%.10s    %.10s", as<Warehouse>(wi)->w_name, as<District>(di)->d_name);
    memcpy(h->h_data, hd, strlen(hd));
    out.c = c;
    out.c_balance = cu->c_balance;
    return true;
  }

  template <class Mgr>
  bool order_status(Mgr& m, const tpcc::OrderStatusIn& in, tpcc::OrderStatusOut& out) {
    using namespace tpcc;
    const uint32_t w = in.w, d = in.d;
    uint32_t c = in.c;
    uint32_t o = 0;
    if constexpr (kNoScans<Mgr>) {
      if (in.by_name) throw std::logic_error("order status by name on a transaction that cannot scan");
      o = in.o_id;
    } else {
      if (in.by_name && !customer_by_name(m, w, d, in.last, c)) return false;
    }
    const char* ci = m.read(kCustomer, K::customer(w, d, c));
    if (!ci) return false;
    out = {};
    out.c = c;
    out.c_balance = as<Customer>(ci)->c_balance;
    if constexpr (!kNoScans<Mgr>) {
      uint64_t last = 0;
      bool ok = m.scan(kOrderByCustomer, K::order_by_customer(w, d, c, 0), K::order_by_customer(w, d, c, (1u << 24) - 1), 1,
                       [&](uint64_t k, const char*) { last = k; return true; }, /*reverse=*/true);
      if (!ok) return false;
      o = uint32_t(last & ((1u << 24) - 1));
    }
    if (!o) return true;
    const char* oi = m.read(kOrder, K::order(w, d, o));
    if (!oi) return false;
    out.o_id = o;
    out.o_carrier_id = as<Order>(oi)->o_carrier_id;
    out.ol_cnt = as<Order>(oi)->o_ol_cnt;
    for (uint32_t n = 1; n <= out.ol_cnt && n <= 15; n++) {
      const char* li = m.read(kOrderLine, K::order_line(w, d, o, n));
      if (!li) return false;
      const OrderLine* ol = as<OrderLine>(li);
      out.lines[n - 1] = {ol->ol_i_id, ol->ol_supply_w_id, ol->ol_quantity, ol->ol_amount, ol->ol_delivery_d};
    }
    return true;
  }

  template <class Mgr>
  bool delivery(Mgr& m, const tpcc::DeliveryIn& in, tpcc::DeliveryOut& out) {
    using namespace tpcc;
    const uint32_t w = in.w;
    out = {};
    for (uint32_t d = 1; d <= 10; d++) {
      uint64_t key = 0;
      if constexpr (kNoScans<Mgr>) {
        if (in.o_id[d - 1]) key = K::new_order(w, d, in.o_id[d - 1]);
      } else {
        bool ok = m.scan(tpcc::kNewOrder, K::new_order(w, d, 0), K::new_order(w, d, (1u << 24) - 1), 1,
                         [&](uint64_t k, const char*) { key = k; return true; });
        if (!ok) return false;
      }
      if (!key) continue;  // no undelivered order in this district: skipped (clause 2.7.4.2)
      if (!m.remove(tpcc::kNewOrder, key)) return false;
      uint32_t o = uint32_t(key & ((1u << 24) - 1));
      char* oi = m.write(kOrder, K::order(w, d, o));
      if (!oi) return false;
      Order* od = as<Order>(oi);
      od->o_carrier_id = in.carrier;
      double sum = 0;
      for (uint32_t n = 1; n <= od->o_ol_cnt; n++) {
        char* li = m.write(kOrderLine, K::order_line(w, d, o, n));
        if (!li) return false;
        as<OrderLine>(li)->ol_delivery_d = 2;
        sum += as<OrderLine>(li)->ol_amount;
      }
      char* ci = m.write(kCustomer, K::customer(w, d, od->o_c_id));
      if (!ci) return false;
      as<Customer>(ci)->c_balance += sum;
      as<Customer>(ci)->c_delivery_cnt++;
      out.o_id[d - 1] = o;
    }
    return true;
  }

  template <class Mgr>
  bool stock_level(Mgr& m, const tpcc::StockLevelIn& in, tpcc::StockLevelOut& out) {
    using namespace tpcc;
    const uint32_t w = in.w, d = in.d;
    const char* di = m.read(kDistrict, K::district(w, d));
    if (!di) return false;
    uint32_t next = as<District>(di)->d_next_o_id;
    uint32_t lo = next > 20 ? next - 20 : 1;
    seen_.clear();
    if constexpr (kNoScans<Mgr>) {  // the last 20 orders by point reads: their ids have no gaps
      for (uint32_t o = lo; o < next; o++) {
        const char* oi = m.read(kOrder, K::order(w, d, o));
        if (!oi) return false;
        for (uint32_t n = 1, cnt = as<Order>(oi)->o_ol_cnt; n <= cnt && n <= 15; n++) {
          const char* li = m.read(kOrderLine, K::order_line(w, d, o, n));
          if (!li) return false;
          seen_.push_back(as<OrderLine>(li)->ol_i_id);
        }
      }
    } else {
      bool ok = m.scan(kOrderLine, K::order_line(w, d, lo, 0), K::order_line(w, d, next - 1, 15), 20 * 15,
                       [&](uint64_t, const char* li) {
                         seen_.push_back(as<OrderLine>(li)->ol_i_id);
                         return true;
                       });
      if (!ok) return false;
    }
    std::sort(seen_.begin(), seen_.end());
    seen_.erase(std::unique(seen_.begin(), seen_.end()), seen_.end());
    uint32_t low = 0;
    for (uint32_t i : seen_) {
      const char* si = m.read(kStock, K::stock(w, i));
      if (!si) return false;
      low += as<Stock>(si)->s_quantity < in.threshold;
    }
    out.low_stock = low;
    return true;
  }


  const Tpcc& b_;
  int tid_;
  Rng r_;
  Kind kind_ = kNewOrder;
  bool rolled_back_ = false;
  Inputs in_;
  tpcc::Outputs out_;
  uint64_t h_seq_ = 0;
  std::vector<uint32_t> cands_, seen_;
};

}  // namespace nvt
