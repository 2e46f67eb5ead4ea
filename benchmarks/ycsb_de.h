// The standard YCSB workloads D and E (Cooper et al., SoCC 2010; papers/zen-vldb21.txt
// Figure 7), on YCSB's table (ycsb.h) with room for inserted rows beyond the loaded ones.
// A transaction has --requests operations (--requests-min..--requests with --requests-min), as
// the testbed's other YCSB mixes do; each is an insert with probability 1 - --read-ratio (the
// workload fixes it at 0.95, so 5% inserts), else
//  - D: a read of one key from the "latest" distribution (ycsb_latest.h: Zipf(--theta) over
//    recency, the newest committed key the most likely); the reads of a transaction are
//    distinct keys;
//  - E: a scan of 1..--scan-length rows (uniform) in key order from a start key drawn as YCSB
//    does: Zipf(--theta) over the loaded rows plus the insert room, scrambled (zipf.h), drawn
//    again while it is not below the committed high-water mark. It needs the ordered index.
// Inserts take new keys from one counter after the loaded range (insert_keys.h says why),
// kept across the transaction's retries; a reader only draws keys below the committed
// high-water mark, so it never picks a key whose insert is still running. --insert-rows (rundb
// sizes it from the run's length by default) is the table's room for them; once it is used up the run stops with an error naming
// the flag (before the engine's table would be full), with nothing half done.
// The DRAM budget is the loaded database / P (as A-C) plus what the insert room and E's ordered
// index add to the indexes and the engine's per-slot metadata, so the tuples get the same DRAM
// as in A-C at the same P.
// Reported: committed transactions by type (committed_by_type: "read" = no insert, "insert" =
// at least one), and per operation in `workload` (all phases).
#pragma once
#include <array>
#include <atomic>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/insert_keys.h"
#include "benchmarks/ycsb.h"
#include "benchmarks/ycsb_latest.h"
#include "storage/engine.h"

namespace nvt {

class YcsbDE : public Ycsb {
 public:
  enum Kind : int { kRead = 0, kInsert = 1 };
  // Committed operations, reported per name (all phases).
  enum Count : size_t { kReads, kScans, kScannedRows, kInserts, kDisorder, kCounts };
  static constexpr const char* kCountNames[kCounts] = {"reads", "scans", "scanned_rows", "inserts",
                                                       "scan_order_violations"};
  static std::vector<std::string> kind_names() { return {"read", "insert"}; }

  explicit YcsbDE(const Options& o)
      : Ycsb(o), opts_(o), scans_(o.workload == "ycsb-e"), room_(insert_room(o)),
        keys_(o.rows, room_, "--insert-rows " + std::to_string(room_) + "; give more or run shorter"),
        latest_(o.rows + room_, o.theta), start_(o.rows + room_, o.theta) {}

  // --insert-rows (rundb sizes it from the run when not given: options.cpp), else 4 x --rows.
  static uint64_t insert_room(const Options& o) { return o.insert_rows ? o.insert_rows : 4 * o.rows; }
  bool scans() const { return scans_; }
  uint64_t capacity() const { return opts_.rows + room_; }
  std::vector<TableInfo> tables() const { return {{kTable, "usertable", schema(), capacity(), scans_}}; }
  std::string layout() const {
    return Ycsb::layout() + " insert_rows=" + std::to_string(room_) + (scans_ ? " ordered" : "");
  }

  // DRAM as in A-C: the loaded table's index and per-slot metadata are inside database / P;
  // what the insert room and E's ordered index add comes on top (system/driver.h).
  std::vector<TableInfo> p_share_tables() const { return Ycsb::tables(); }

  // Every key below it is loaded or committed.
  uint64_t high_water() const { return keys_.high_water(); }
  uint64_t count(Count c) const { return counts_[c].load(); }
  InsertKeys& insert_keys() const { return keys_; }

  // E's scan start: YCSB's scrambled Zipf over every key there may be, below the mark.
  uint64_t scan_start(Rng& r, uint64_t high_water) const {
    uint64_t k;
    do k = start_.next(r);
    while (k >= high_water);
    return k;
  }

  // Committed operations (all phases), the insert keys handed out and the high-water mark.
  nlohmann::json report() const {
    nlohmann::json j;
    for (size_t i = 0; i < kCounts; i++) j[kCountNames[i]] = counts_[i].load();
    j["insert_keys_taken"] = keys_.taken();
    j["insert_room"] = room_;
    j["high_water"] = keys_.high_water();
    return {{"ycsb_de", j}};
  }

  class Worker {
   public:
    // One operation: an insert of `key`, a read of `key` (D), or a scan of `scan` rows from
    // `key` (E).
    struct Op {
      uint64_t key = 0;
      uint32_t scan = 0;
      bool insert = false;
    };

    Worker(const YcsbDE& y, int tid) : y_(y), rng_(y.opts_.seed * 1000003 + uint64_t(tid) + 29) {}
    ~Worker() {
      for (size_t i = 0; i < kCounts; i++) y_.counts_[i].fetch_add(counts_[i]);
    }

    // Draw the next transaction (kept across its retries). Throws when the insert room is used up.
    void next() {
      const Options& o = y_.opts_;
      int n = y_.requests(rng_);
      uint64_t hw = y_.keys_.high_water();
      ops_.clear();
      inserts_ = 0;
      for (int i = 0; i < n; i++) {
        Op op;
        if (rng_.uniform() >= o.read_ratio) {
          op.insert = true;
          op.key = y_.keys_.take();
          inserts_++;
        } else if (y_.scans_) {
          op.key = y_.scan_start(rng_, hw);
          op.scan = 1 + uint32_t(rng_.below(uint64_t(o.scan_length)));
        } else {
          bool dup;
          do {
            op.key = y_.latest_.next(rng_, hw);
            dup = false;
            for (const Op& p : ops_) dup |= !p.insert && p.key == op.key;
          } while (dup);
        }
        ops_.push_back(op);
      }
    }
    const std::vector<Op>& ops() const { return ops_; }

    template <class Mgr>
    bool execute(Mgr& m) {
      uint64_t sink = 0;
      attempt_rows_ = 0;
      for (const Op& op : ops_) {
        if (op.insert) {
          char* d = m.insert(kTable, op.key);
          if (!d) return false;
          y_.fill(rng_, d, op.key, 0);
        } else if (op.scan) {
          uint64_t prev = 0;
          bool first = true;
          bool ok = m.scan(kTable, op.key, ~0ull, op.scan, [&](uint64_t k, const char* img) {
            if (!first && k <= prev) counts_[kDisorder]++;  // the ordered index's promise
            first = false;
            prev = k;
            sink += y_.touch(img);
            attempt_rows_++;
            return true;
          });
          if (!ok) return false;
        } else {
          const char* d = m.read(kTable, op.key);
          if (!d) return false;
          sink += y_.touch(d);
        }
      }
      sink_ += sink;
      return true;
    }

    bool read_only() const { return inserts_ == 0; }
    int kind() const { return inserts_ ? kInsert : kRead; }

    // After a commit returned: its inserted keys are committed (the mark may move), and counted.
    template <class Mgr>
    void acknowledged(Mgr&) {
      for (const Op& op : ops_) {
        if (op.insert) y_.keys_.committed(op.key);
        counts_[op.insert ? kInserts : op.scan ? kScans : kReads]++;
      }
      counts_[kScannedRows] += attempt_rows_;
    }

   private:
    const YcsbDE& y_;
    Rng rng_;
    std::vector<Op> ops_;
    int inserts_ = 0;
    uint64_t attempt_rows_ = 0, sink_ = 0;
    std::array<uint64_t, kCounts> counts_{};
  };

 private:
  const Options& opts_;
  bool scans_;
  uint64_t room_;
  mutable InsertKeys keys_;
  Latest latest_;
  Zipf start_;
  mutable std::array<std::atomic<uint64_t>, kCounts> counts_{};
};

}  // namespace nvt
