// TPC-C's tables (clause 1.3) as packed tuple layouts, their schemas (the same columns in the
// same order), key encodings, the specification's random functions (clause 2.1.6, 4.3.2), and
// the consistency conditions 1-4 (clause 3.3.2.1-4).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/zipf.h"
#include "storage/schema.h"

namespace nvt::tpcc {

enum Table : uint32_t {
  kWarehouse, kDistrict, kCustomer, kHistory, kNewOrder, kOrder, kOrderLine, kItem, kStock,
  kCustomerByName,   // secondary index (w, d, c_last, c_id): Payment/OrderStatus by last name
  kOrderByCustomer,  // secondary index (w, d, c_id, o_id): OrderStatus's newest order
};
constexpr int kMaxWarehouses = 1000;
constexpr uint32_t kItems = 100000;

// The population's sizes. The default is the specification's (clause 4.3.3.1: 100,000 items;
// per district 3,000 customers, 3,000 orders, the last 900 of them undelivered, 1,000 last
// names); tests load a tiny database with the same rules at a smaller scale. Orders loaded per
// district = customers (O_C_ID is a permutation of the customers).
struct Scale {
  uint32_t items = kItems;
  uint32_t customers = 3000;  // per district, up to 4095 (the customer key has 12 bits)
  uint32_t new_orders = 900;  // per district: the last loaded orders, in NEW-ORDER
  // C_LAST numbers: the first `names` customers take 0..names-1, the others NURand(255, 0, names-1).
  uint32_t names() const { return std::min(1000u, std::max(1u, customers / 3)); }
  uint32_t first_new_order() const { return customers - new_orders + 1; }
};

#pragma pack(push, 1)
struct Warehouse {
  uint32_t w_id; char w_name[10], w_street_1[20], w_street_2[20], w_city[20], w_state[2], w_zip[9];
  double w_tax, w_ytd;
};
struct District {
  uint32_t d_id, d_w_id; char d_name[10], d_street_1[20], d_street_2[20], d_city[20], d_state[2], d_zip[9];
  double d_tax, d_ytd; uint32_t d_next_o_id;
};
struct Customer {
  uint32_t c_id, c_d_id, c_w_id; char c_first[16], c_middle[2], c_last[16], c_street_1[20], c_street_2[20],
      c_city[20], c_state[2], c_zip[9], c_phone[16]; uint64_t c_since; char c_credit[2];
  double c_credit_lim, c_discount, c_balance, c_ytd_payment; uint32_t c_payment_cnt, c_delivery_cnt;
  char c_data[500];
};
struct History {
  uint32_t h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id; uint64_t h_date; double h_amount; char h_data[24];
};
struct NewOrder { uint32_t no_o_id, no_d_id, no_w_id; };
struct Order {
  uint32_t o_id, o_d_id, o_w_id, o_c_id; uint64_t o_entry_d; uint32_t o_carrier_id, o_ol_cnt, o_all_local;
};
struct OrderLine {
  uint32_t ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id; uint64_t ol_delivery_d;
  uint32_t ol_quantity; double ol_amount; char ol_dist_info[24];
};
struct Item { uint32_t i_id, i_im_id; char i_name[24]; double i_price; char i_data[50]; };
struct Stock {
  uint32_t s_i_id, s_w_id, s_quantity; char s_dist[10][24]; double s_ytd; uint32_t s_order_cnt, s_remote_cnt;
  char s_data[50];
};
struct IndexEntry { uint32_t id; };  // the secondary indexes' key says it all; the id repeats it
#pragma pack(pop)

// A schema from its columns (name, bytes), in the packed struct's order.
inline Schema columns(std::initializer_list<std::pair<const char*, uint32_t>> cols) {
  Schema s;
  for (auto& [name, bytes] : cols) s.add(name, bytes);
  return s;
}
inline Schema warehouse_schema() {
  return columns({{"w_id", 4}, {"w_name", 10}, {"w_street_1", 20}, {"w_street_2", 20}, {"w_city", 20},
                  {"w_state", 2}, {"w_zip", 9}, {"w_tax", 8}, {"w_ytd", 8}});
}
inline Schema district_schema() {
  return columns({{"d_id", 4}, {"d_w_id", 4}, {"d_name", 10}, {"d_street_1", 20}, {"d_street_2", 20},
                  {"d_city", 20}, {"d_state", 2}, {"d_zip", 9}, {"d_tax", 8}, {"d_ytd", 8}, {"d_next_o_id", 4}});
}
inline Schema customer_schema() {
  return columns({{"c_id", 4}, {"c_d_id", 4}, {"c_w_id", 4}, {"c_first", 16}, {"c_middle", 2}, {"c_last", 16},
                  {"c_street_1", 20}, {"c_street_2", 20}, {"c_city", 20}, {"c_state", 2}, {"c_zip", 9},
                  {"c_phone", 16}, {"c_since", 8}, {"c_credit", 2}, {"c_credit_lim", 8}, {"c_discount", 8},
                  {"c_balance", 8}, {"c_ytd_payment", 8}, {"c_payment_cnt", 4}, {"c_delivery_cnt", 4},
                  {"c_data", 500}});
}
inline Schema history_schema() {
  return columns({{"h_c_id", 4}, {"h_c_d_id", 4}, {"h_c_w_id", 4}, {"h_d_id", 4}, {"h_w_id", 4}, {"h_date", 8},
                  {"h_amount", 8}, {"h_data", 24}});
}
inline Schema new_order_schema() { return columns({{"no_o_id", 4}, {"no_d_id", 4}, {"no_w_id", 4}}); }
inline Schema order_schema() {
  return columns({{"o_id", 4}, {"o_d_id", 4}, {"o_w_id", 4}, {"o_c_id", 4}, {"o_entry_d", 8}, {"o_carrier_id", 4},
                  {"o_ol_cnt", 4}, {"o_all_local", 4}});
}
inline Schema order_line_schema() {
  return columns({{"ol_o_id", 4}, {"ol_d_id", 4}, {"ol_w_id", 4}, {"ol_number", 4}, {"ol_i_id", 4},
                  {"ol_supply_w_id", 4}, {"ol_delivery_d", 8}, {"ol_quantity", 4}, {"ol_amount", 8},
                  {"ol_dist_info", 24}});
}
inline Schema item_schema() {
  return columns({{"i_id", 4}, {"i_im_id", 4}, {"i_name", 24}, {"i_price", 8}, {"i_data", 50}});
}
inline Schema stock_schema() {
  Schema s = columns({{"s_i_id", 4}, {"s_w_id", 4}, {"s_quantity", 4}});
  for (int i = 1; i <= 10; i++) s.add("s_dist_" + std::string(i < 10 ? "0" : "") + std::to_string(i), 24);
  s.add("s_ytd", 8).add("s_order_cnt", 4).add("s_remote_cnt", 4).add("s_data", 50);
  return s;
}
inline Schema index_schema() { return columns({{"id", 4}}); }
static_assert(sizeof(Customer) == 683 && sizeof(Stock) == 318 && sizeof(OrderLine) == 68);

// Keys: every one below 2^56 (Zen's tuple ID) for up to kMaxWarehouses.
struct Keys {
  static uint64_t dist(uint32_t w, uint32_t d) { return uint64_t(w) * 10 + d; }  // d in 1..10
  static uint64_t warehouse(uint32_t w) { return w; }
  static uint64_t district(uint32_t w, uint32_t d) { return dist(w, d); }
  static uint64_t customer(uint32_t w, uint32_t d, uint32_t c) { return dist(w, d) << 12 | c; }
  static uint64_t order(uint32_t w, uint32_t d, uint32_t o) { return dist(w, d) << 24 | o; }
  static uint64_t new_order(uint32_t w, uint32_t d, uint32_t o) { return order(w, d, o); }
  static uint64_t order_line(uint32_t w, uint32_t d, uint32_t o, uint32_t n) { return order(w, d, o) << 4 | n; }
  static uint64_t item(uint32_t i) { return i; }
  static uint64_t stock(uint32_t w, uint32_t i) { return uint64_t(w) << 17 | i; }
  static uint64_t customer_by_name(uint32_t w, uint32_t d, uint32_t last, uint32_t c) {
    return dist(w, d) << 22 | uint64_t(last) << 12 | c;
  }
  static uint64_t order_by_customer(uint32_t w, uint32_t d, uint32_t c, uint32_t o) {
    return (dist(w, d) << 12 | c) << 24 | o;
  }
};

// Clause 2.1.6: NURand(A, x, y) with the run-time constant C (fixed per A for a run).
inline uint32_t nurand(Rng& r, uint32_t A, uint32_t x, uint32_t y) {
  const uint32_t C = A == 255 ? 123 : A == 1023 ? 259 : 7911;
  uint32_t a = uint32_t(r.below(A + 1)), b = x + uint32_t(r.below(y - x + 1));
  return (((a | b) + C) % (y - x + 1)) + x;
}
inline uint32_t uniform(Rng& r, uint32_t lo, uint32_t hi) { return lo + uint32_t(r.below(hi - lo + 1)); }
// Clause 4.3.2.3: the last name of number n (0..999), up to 15 characters, 0-padded.
inline void last_name(uint32_t n, char out[16]) {
  static const char* syl[] = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"};
  memset(out, 0, 16);
  strcat(out, syl[n / 100]);
  strcat(out, syl[n / 10 % 10]);
  strcat(out, syl[n % 10]);
}
inline void astring(Rng& r, char* out, uint32_t lo, uint32_t hi, uint32_t cap) {
  uint32_t n = std::min(cap, uniform(r, lo, hi));
  memset(out, 0, cap);
  for (uint32_t i = 0; i < n; i++) out[i] = char('a' + r.below(26));
}
inline void nstring(Rng& r, char* out, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) out[i] = char('0' + r.below(10));
}
inline void zip(Rng& r, char out[9]) {
  nstring(r, out, 4);
  memcpy(out + 4, "11111", 5);
}
// 10% of I_DATA and S_DATA hold "ORIGINAL" at a random position (clause 4.3.3.1).
inline void data_original(Rng& r, char* out, uint32_t lo, uint32_t hi, uint32_t cap) {
  astring(r, out, lo, hi, cap);
  if (r.below(10) == 0) {
    uint32_t len = uint32_t(strnlen(out, cap));
    memcpy(out + r.below(len - 8 + 1), "ORIGINAL", 8);
  }
}

template <class T>
const T* as(const char* img) { return reinterpret_cast<const T*>(img); }
template <class T>
T* as(char* img) { return reinterpret_cast<T*>(img); }

// Consistency conditions 1-4. `cond3` off for the deterministic mix: order ids taken from its
// counter by transactions the run stopped before they committed leave gaps.
template <class Engine>
nlohmann::json check_consistency(Engine& eng, int W, bool cond3) {
  uint64_t bad = 0;
  std::vector<std::string> ex;
  auto fail = [&](const std::string& s) { if (++bad <= 10) ex.push_back(s); };
  std::vector<char> buf(1024);
  uint64_t ver;
  auto get = [&](uint32_t t, uint64_t k) { return eng.read_current(t, k, buf.data(), ver) ? buf.data() : nullptr; };
  uint64_t orders = 0, lines = 0, new_orders = 0;
  for (uint32_t w = 1; w <= uint32_t(W); w++) {
    const char* wi = get(kWarehouse, Keys::warehouse(w));
    if (!wi) { fail("warehouse " + std::to_string(w) + " missing"); continue; }
    double w_ytd = as<Warehouse>(wi)->w_ytd, d_sum = 0;
    for (uint32_t d = 1; d <= 10; d++) {
      std::string at = "w" + std::to_string(w) + " d" + std::to_string(d) + ": ";
      const char* di = get(kDistrict, Keys::district(w, d));
      if (!di) { fail(at + "district missing"); continue; }
      d_sum += as<District>(di)->d_ytd;
      uint32_t next = as<District>(di)->d_next_o_id;
      uint32_t max_o = 0, max_no = 0, min_no = ~0u, no_count = 0;
      uint64_t ol_sum = 0, ol_count = 0;
      for (uint32_t o = 1; o < next + 64; o++) {  // past next too: no order may be there
        const char* oi = get(kOrder, Keys::order(w, d, o));
        if (!oi) continue;
        max_o = o;
        orders++;
        ol_sum += as<Order>(oi)->o_ol_cnt;
        for (uint32_t n = 1; n <= 15; n++) ol_count += get(kOrderLine, Keys::order_line(w, d, o, n)) != nullptr;
        if (get(kNewOrder, Keys::new_order(w, d, o))) {
          no_count++;
          max_no = std::max(max_no, o);
          min_no = std::min(min_no, o);
        }
      }
      lines += ol_count;
      new_orders += no_count;
      if (next - 1 != max_o)  // condition 2
        fail(at + "D_NEXT_O_ID - 1 = " + std::to_string(next - 1) + " but max(O_ID) = " + std::to_string(max_o));
      if (no_count && max_no != max_o)
        fail(at + "max(NO_O_ID) = " + std::to_string(max_no) + " but max(O_ID) = " + std::to_string(max_o));
      if (cond3 && no_count && max_no - min_no + 1 != no_count)  // condition 3
        fail(at + "NEW-ORDER ids " + std::to_string(min_no) + ".." + std::to_string(max_no) + " but " +
             std::to_string(no_count) + " rows");
      if (ol_sum != ol_count)  // condition 4
        fail(at + "sum(O_OL_CNT) = " + std::to_string(ol_sum) + " but " + std::to_string(ol_count) + " order lines");
    }
    if (std::abs(w_ytd - d_sum) > 0.01)  // condition 1 (amounts are cents: sums of doubles agree to far less)
      fail("w" + std::to_string(w) + ": W_YTD = " + std::to_string(w_ytd) + " but sum(D_YTD) = " + std::to_string(d_sum));
  }
  return {{"violations", bad}, {"examples", ex}, {"conditions", cond3 ? "1,2,3,4" : "1,2,4"},
          {"orders", orders}, {"order_lines", lines}, {"new_orders", new_orders}};
}

}  // namespace nvt::tpcc
