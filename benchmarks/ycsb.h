// YCSB as papers/zen-vldb21.txt section 4.1 defines it: one table, an 8 B primary key and ten
// 100 B columns of random strings (~1 KB tuples), 16 requests per transaction on distinct keys
// drawn from a Zipfian distribution, each a read with probability --read-ratio, else a write
// that replaces the tuple's columns with fresh random strings.
#pragma once
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/zipf.h"
#include "storage/access.h"
#include "storage/schema.h"
#include "system/ack.h"
#include "system/options.h"

namespace nvt {

class Ycsb {
 public:
  static constexpr uint32_t kTable = 0;
  static constexpr uint32_t kStampOffset = 8;  // first bytes of column f0 (ack mode only)

  explicit Ycsb(const Options& o) : o_(o), zipf_(o.rows, o.theta) {
    schema_.add("key", 8);
    for (int i = 0; i < o.columns; i++) schema_.add("f" + std::to_string(i), uint32_t(o.column_size));
  }

  std::vector<TableInfo> tables() const { return {{kTable, "usertable", schema_, o_.rows}}; }
  uint64_t database_bytes() const { return o_.rows * schema_.tuple_size(); }
  uint32_t tuple_size() const { return schema_.tuple_size(); }
  std::string layout() const {
    return "ycsb rows=" + std::to_string(o_.rows) + " usertable(" + schema_.describe() + ")";
  }
  static uint64_t stamp_of(const char* img) {
    uint64_t s;
    memcpy(&s, img + kStampOffset, 8);
    return s;
  }

  // Random printable strings ('0'..'o'), 8 characters per 64-bit draw.
  static void random_string(Rng& r, char* dst, size_t len) {
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
      uint64_t x = (r.next() & 0x3f3f3f3f3f3f3f3full) + 0x3030303030303030ull;
      memcpy(dst + i, &x, 8);
    }
    uint64_t x = (r.next() & 0x3f3f3f3f3f3f3f3full) + 0x3030303030303030ull;
    memcpy(dst + i, &x, len - i);
  }

  void fill(Rng& r, char* img, uint64_t key, uint64_t stamp) const {
    memcpy(img, &key, 8);
    random_string(r, img + 8, schema_.tuple_size() - 8);
    if (!o_.ack_file.empty()) memcpy(img + kStampOffset, &stamp, 8);
  }

  template <class Engine>
  void load(Engine& eng, int threads) const {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; t++)
      ts.emplace_back([&, t] {
        Rng r(o_.seed * 7919 + uint64_t(t));
        auto& th = eng.thread(t);
        std::vector<char> img(schema_.tuple_size());
        for (uint64_t k = uint64_t(t); k < o_.rows; k += uint64_t(threads)) {
          fill(r, img.data(), k, 0);
          eng.load(th, kTable, k, img.data());
        }
      });
    for (auto& t : ts) t.join();
  }

  // One worker's request stream and its transactions.
  class Worker {
   public:
    Worker(const Ycsb& y, int tid)
        : y_(y), tid_(tid), rng_(y.o_.seed * 1000003 + uint64_t(tid)),
          keys_(size_t(y.o_.requests)), write_(size_t(y.o_.requests)) {
      if (!y.o_.ack_file.empty()) ack_ = std::make_unique<AckWriter>(y.o_.ack_file, tid);
    }

    // Draw the next transaction's requests (kept across its retries after aborts).
    void next() {
      int n = y_.o_.requests;
      nwrites_ = 0;
      for (int i = 0; i < n; i++) {
        uint64_t k;
        bool dup;
        do {
          k = y_.zipf_.next(rng_);
          dup = false;
          for (int j = 0; j < i; j++) dup |= keys_[size_t(j)] == k;
        } while (dup);
        keys_[size_t(i)] = k;
        write_[size_t(i)] = rng_.uniform() >= y_.o_.read_ratio;
        nwrites_ += write_[size_t(i)];
      }
      txn_id_ = (uint64_t(tid_ + 1) << 40) | ++seq_;
    }

    template <class Mgr>
    bool execute(Mgr& m) {
      if (ack_ && nwrites_) log_intent();
      uint64_t sink = 0;
      for (size_t i = 0; i < keys_.size(); i++) {
        uint64_t k = keys_[i];
        if (!write_[i]) {
          const char* d = m.read(kTable, k);
          if (!d) return false;
          for (uint32_t off = 8; off < y_.tuple_size(); off += uint32_t(y_.o_.column_size))
            sink += uint8_t(d[off]);  // touch every column, as a reader of the row would
        } else {
          char* d = m.write(kTable, k);
          if (!d) return false;
          y_.fill(rng_, d, k, txn_id_);
        }
      }
      sink_ += sink;
      return true;
    }

    // No write among the drawn requests.
    bool read_only() const { return nwrites_ == 0; }

    // After a commit returns: acknowledge its writes.
    template <class Mgr>
    void acknowledged(Mgr& m) {
      if (!ack_ || !nwrites_) return;
      entries_.clear();
      for (auto& a : m.accesses())
        if (a.type == AccessType::Write)
          entries_.push_back({a.key, a.version, image_checksum(a.local, a.len)});
      ack_->ack(txn_id_, entries_);
    }

   private:
    void log_intent() {
      wkeys_.clear();
      for (size_t i = 0; i < keys_.size(); i++)
        if (write_[i]) wkeys_.push_back(keys_[i]);
      ack_->intent(txn_id_, wkeys_.data(), uint32_t(wkeys_.size()));
    }

    const Ycsb& y_;
    int tid_;
    Rng rng_;
    std::vector<uint64_t> keys_;
    std::vector<uint8_t> write_;
    int nwrites_ = 0;
    uint64_t txn_id_ = 0, seq_ = 0, sink_ = 0;
    std::unique_ptr<AckWriter> ack_;
    std::vector<uint64_t> wkeys_;
    std::vector<AckWriter::Entry> entries_;
  };

 private:
  const Options& o_;
  Schema schema_;
  Zipf zipf_;
};

}  // namespace nvt
