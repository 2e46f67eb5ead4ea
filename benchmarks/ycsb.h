// YCSB as papers/zen-vldb21.txt section 4.1 defines it: one table, an 8 B primary key and ten
// 100 B columns of random strings (~1 KB tuples), 16 requests per transaction on distinct keys
// drawn from a Zipfian distribution, each a read with probability --read-ratio, else a write
// that replaces the tuple's columns with fresh random strings.
// Forms of the other papers, by flag:
//  - NVCaracal (nvcaracal-eurosys23 6.2.1): --hot-requests k of the requests go to --hot-rows
//    hot rows (spread over the key space), the others to the rest; --update-bytes N makes a
//    write a read-modify-write of the first N bytes after the key ("YCSB-smallrow":
//    --columns 1 --column-size 56).
//  - MCSI: --requests-min m: each transaction has uniformly m..--requests requests.
//  - Zen+ long-running transactions: threads 0..--long-txn-threads-1 run, after every
//    --long-txn-gap normal transactions, one that scans (reads) or updates --long-txn-rows
//    consecutive rows (a list of sizes is used in turn); with --long-txn-disjoint those rows
//    are the last ones of the table, which normal transactions never draw.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/zipf.h"
#include "storage/access.h"
#include "storage/parallel.h"
#include "storage/schema.h"
#include "system/ack.h"
#include "system/load_progress.h"
#include "system/options.h"

namespace nvt {

class Ycsb {
 public:
  static constexpr uint32_t kTable = 0;
  static constexpr uint32_t kStampOffset = 8;  // first bytes of column f0 (ack mode only)

  explicit Ycsb(const Options& o)
      : o_(o), normal_rows_(o.rows - reserved_rows(o)), zipf_(normal_rows_, o.theta),
        hot_stride_(o.hot_requests > 0 ? std::max<uint64_t>(1, normal_rows_ / o.hot_rows) : 1) {
    schema_.add("key", 8);
    for (int i = 0; i < o.columns; i++) schema_.add("f" + std::to_string(i), uint32_t(o.column_size));
  }

  // Rows kept for the long transactions alone (--long-txn-disjoint): the last ones.
  static uint64_t reserved_rows(const Options& o) {
    if (o.long_txn == "none" || !o.long_txn_disjoint) return 0;
    uint64_t most = 0;
    for (uint64_t n : o.long_txn_sizes) most = std::max(most, n);
    return most;
  }
  // Rows normal transactions draw from: [0, normal_rows()).
  uint64_t normal_rows() const { return normal_rows_; }
  // The hot set: --hot-rows keys spread evenly over the normal rows.
  bool is_hot(uint64_t k) const {
    return o_.hot_requests > 0 && k % hot_stride_ == 0 && k / hot_stride_ < o_.hot_rows;
  }
  uint64_t hot_key(Rng& r) const { return r.below(o_.hot_rows) * hot_stride_; }

  // Committed transactions by kind in the measured phase (results.committed_by_type): normal
  // ones and --long-txn ones, so that Figure 26's slowdown of the normal transactions can be
  // told from the long thread's own loss of commits.
  static std::vector<std::string> kind_names() { return {"normal", "long"}; }

  // What the run did besides commits: long transactions committed (and their rows), all phases.
  nlohmann::json report() const {
    return {{"long_txns_committed", long_commits_.load()}, {"long_txn_rows_committed", long_rows_.load()}};
  }

  std::vector<TableInfo> tables() const { return {{kTable, "usertable", schema_, o_.rows, false, true}}; }
  const Schema& schema() const { return schema_; }
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

  // Requests in the next transaction: --requests, or uniform in --requests-min..--requests.
  int requests(Rng& r) const {
    if (o_.requests_min == 0) return o_.requests;
    return o_.requests_min + int(r.below(uint64_t(o_.requests - o_.requests_min + 1)));
  }

  // Touch every column of a tuple read, as a reader of the row would.
  uint64_t touch(const char* img) const {
    uint64_t sink = 0;
    for (uint32_t off = 8; off < tuple_size(); off += uint32_t(o_.column_size)) sink += uint8_t(img[off]);
    return sink;
  }

  void fill(Rng& r, char* img, uint64_t key, uint64_t stamp) const {
    fill_unstamped(r, img, key);
    if (stamped()) memcpy(img + kStampOffset, &stamp, 8);
  }
  // The deterministic form's rows carry no acknowledgement stamp (it acknowledges epochs), so
  // --ack-file changes nothing of the database.
  void fill_unstamped(Rng& r, char* img, uint64_t key) const {
    memcpy(img, &key, 8);
    random_string(r, img + 8, schema_.tuple_size() - 8);
  }

  // One transaction's requests: --requests distinct keys (the hot ones first drawn from the
  // hot set, then shuffled in), each a write with probability 1 - --read-ratio. Returns the
  // number of writes.
  int draw_requests(Rng& r, std::vector<uint64_t>& keys, std::vector<uint8_t>& write) const {
    const Options& o = o_;
    int n = requests(r);
    keys.resize(size_t(n));
    write.resize(size_t(n));
    int nwrites = 0;
    int hot = std::min(n, o.hot_requests);
    for (int i = 0; i < n; i++) {
      uint64_t k;
      bool dup;
      do {
        k = i < hot ? hot_key(r) : zipf_.next(r);
        dup = i >= hot && is_hot(k);  // the cold requests avoid the hot set
        for (int j = 0; j < i; j++) dup |= keys[size_t(j)] == k;
      } while (dup);
      keys[size_t(i)] = k;
      write[size_t(i)] = r.uniform() >= o.read_ratio;
      nwrites += write[size_t(i)];
    }
    if (hot > 0)  // hot requests at random places in the transaction
      for (int i = n - 1; i > 0; i--) std::swap(keys[size_t(i)], keys[r.below(uint64_t(i) + 1)]);
    return nwrites;
  }

  // ---- The deterministic form (ENGINE=nvcaracal, system/epoch_driver.h): a one-shot
  // transaction whose inputs, write set included, are drawn before its epoch runs and can be
  // logged and replayed: {value seed, update bytes, n, request...}, a request = key << 1 |
  // write. The values written come from the seed, and the input carries --update-bytes, so a
  // replay in a process given other flags runs the same transaction.
  uint64_t det_input_words() const { return 3 + uint64_t(o_.requests); }
  uint64_t det_txn_writes() const { return uint64_t(o_.requests); }
  uint64_t det_value_bytes() const { return tuple_size(); }
  void det_draw(Rng& r, uint64_t /*epoch*/, uint64_t /*j*/, std::vector<uint64_t>& in) const {
    thread_local std::vector<uint64_t> keys;
    thread_local std::vector<uint8_t> write;
    draw_requests(r, keys, write);
    in.push_back(r.next());
    in.push_back(uint64_t(o_.update_bytes));
    in.push_back(keys.size());
    for (size_t i = 0; i < keys.size(); i++) in.push_back(keys[i] << 1 | write[i]);
  }
  template <class F>
  void det_write_set(const uint64_t* in, F&& declare) const {
    for (uint64_t i = 0; i < in[2]; i++)
      if (in[3 + i] & 1) declare(kTable, in[3 + i] >> 1);
  }
  template <class Txn>
  bool det_run(const uint64_t* in, Txn& t) const {
    Rng r(in[0]);
    uint64_t sink = 0;
    uint64_t update = in[1];
    for (uint64_t i = 0; i < in[2]; i++) {
      uint64_t k = in[3 + i] >> 1;
      if (!(in[3 + i] & 1)) {
        sink += touch(t.read(kTable, k));
      } else {
        char* d = t.write(kTable, k);
        if (update > 0) {  // read-modify-write: the image holds the current tuple
          sink += uint8_t(d[8]);
          random_string(r, d + 8, size_t(update));
        } else {
          fill_unstamped(r, d, k);
        }
      }
    }
    t.sink(sink);
    return true;
  }

  // The deterministic form's load: each row's bytes from its key's own seed, so the database
  // (and so a run's result) does not depend on the thread count. Key k goes to core k mod n.
  template <class Engine>
  void det_load(Engine& eng, int threads) const {
    parallel(threads, [&](int t) {
      auto& th = eng.thread(t);
      std::vector<char> img(schema_.tuple_size());
      for (uint64_t k = uint64_t(t); k < o_.rows; k += uint64_t(threads)) {
        Rng r(o_.seed * 7919 + k * 0x9E3779B97F4A7C15ull);
        fill_unstamped(r, img.data(), k);
        eng.load(th, kTable, k, img.data());
      }
    });
  }

  template <class Engine>
  void load(Engine& eng, int threads) const {
    parallel(threads, [&](int t) {
      Rng r(o_.seed * 7919 + uint64_t(t));
      auto& th = eng.thread(t);
      std::vector<char> img(schema_.tuple_size());
      uint64_t n = 0;
      for (uint64_t k = uint64_t(t); k < o_.rows; k += uint64_t(threads)) {
        fill(r, img.data(), k, 0);
        eng.load(th, kTable, k, img.data());
        if (++n % 4096 == 0) load_progress(4096);
      }
      load_progress(n % 4096);
    });
  }
  // What load() counts for the progress line.
  std::pair<uint64_t, std::string> load_units() const { return {o_.rows, "rows"}; }

  // One worker's request stream and its transactions.
  class Worker {
   public:
    Worker(const Ycsb& y, int tid)
        : y_(y), tid_(tid), rng_(y.o_.seed * 1000003 + uint64_t(tid)),
          long_thread_(y.o_.long_txn != "none" && tid < y.o_.long_txn_threads) {
      if (!y.o_.ack_file.empty()) ack_ = std::make_unique<AckWriter>(y.o_.ack_file, tid);
    }

    // Draw the next transaction's requests (kept across its retries after aborts).
    void next() {
      txn_id_ = (uint64_t(tid_ + 1) << 40) | ++seq_;
      is_long_ = long_thread_ && since_long_ >= y_.o_.long_txn_gap;
      if (is_long_) return next_long();
      since_long_++;
      nwrites_ = y_.draw_requests(rng_, keys_, write_);
    }

    const std::vector<uint64_t>& keys() const { return keys_; }
    bool is_long() const { return is_long_; }
    int kind() const { return is_long_ ? 1 : 0; }

    // A drawn transaction as a value, for the soft partition's dispatcher (system/dispatcher.h),
    // which may hand it to another worker: its requests, and their partition keys (the primary
    // key). The adopting worker gives it a transaction id of its own.
    struct Drawn {
      std::vector<uint64_t> keys;
      std::vector<uint8_t> write;
      int nwrites = 0;
    };
    Drawn take_drawn() { return {std::move(keys_), std::move(write_), nwrites_}; }
    void adopt(Drawn&& d) {
      keys_ = std::move(d.keys);
      write_ = std::move(d.write);
      nwrites_ = d.nwrites;
      is_long_ = false;
      txn_id_ = (uint64_t(tid_ + 1) << 40) | ++seq_;
    }
    static void partition_keys(const Drawn& d, std::vector<uint64_t>& out) {
      out.insert(out.end(), d.keys.begin(), d.keys.end());
    }

    template <class Mgr>
    bool execute(Mgr& m) {
      if (ack_ && nwrites_) log_intent();
      uint64_t sink = 0;
      if (y_.o_.prefetch) m.prefetch(kTable, keys_.data(), keys_.size());
      for (size_t i = 0; i < keys_.size(); i++) {
        uint64_t k = keys_[i];
        if (!write_[i]) {
          const char* d = m.read(kTable, k);
          if (!d) return false;
          sink += y_.touch(d);
        } else {
          char* d = m.write(kTable, k);
          if (!d) return false;
          if (y_.o_.update_bytes > 0) {  // read-modify-write: the image holds the current tuple
            sink += uint8_t(d[8]);
            random_string(rng_, d + 8, size_t(y_.o_.update_bytes));
            if (y_.stamped()) memcpy(d + kStampOffset, &txn_id_, 8);
          } else {
            y_.fill(rng_, d, k, txn_id_);
          }
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
      if (is_long_) {
        since_long_ = 0;
        y_.long_commits_.fetch_add(1, std::memory_order_relaxed);
        y_.long_rows_.fetch_add(keys_.size(), std::memory_order_relaxed);
      }
      if (!ack_ || !nwrites_) return;
      entries_.clear();
      for (auto& a : m.accesses())
        if (a.type == AccessType::Write)
          entries_.push_back({a.key, a.version, image_checksum(a.local, a.len)});
      ack_->ack(txn_id_, entries_);
    }

   private:
    // A long transaction: the next size in turn, consecutive rows from a random start.
    void next_long() {
      const Options& o = y_.o_;
      uint64_t rows = o.long_txn_sizes[long_seq_++ % o.long_txn_sizes.size()];
      uint64_t lo = o.long_txn_disjoint ? y_.normal_rows_ : 0;
      uint64_t start = lo + rng_.below(o.rows - lo - rows + 1);
      bool update = o.long_txn == "update";
      keys_.resize(rows);
      write_.assign(rows, update);
      for (uint64_t i = 0; i < rows; i++) keys_[i] = start + i;
      nwrites_ = update ? int(std::min<uint64_t>(rows, 1u << 30)) : 0;
    }

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
    bool long_thread_, is_long_ = false;
    uint64_t since_long_ = 0, long_seq_ = 0;
    std::unique_ptr<AckWriter> ack_;
    std::vector<uint64_t> wkeys_;
    std::vector<AckWriter::Entry> entries_;
  };

 private:
  bool stamped() const { return !o_.ack_file.empty(); }

  const Options& o_;
  Schema schema_;
  uint64_t normal_rows_;
  Zipf zipf_;
  uint64_t hot_stride_;
  mutable std::atomic<uint64_t> long_commits_{0}, long_rows_{0};
};

}  // namespace nvt
