// OCC: Kung and Robinson's optimistic concurrency control with backward validation, in
// DBx1000's parallel-validation form. A transaction notes the transaction number tnc at start,
// reads private copies and writes private images. At commit it enters one global critical
// section, and fails validation (cause Validation) if its accesses intersect
//   - the write set of any transaction that finished (got a number) after it started, or
//   - the write set of any transaction that validated but has not finished (the active list),
// otherwise it joins the active list. Its writes are then installed outside the critical
// section, and finish() enters it again to take the next number, record the write set in the
// history and leave the active list. Read-only transactions validate but take no number.
// Every write is a read-modify-write in this contract, so the read set is every access.
//
// Per tuple only a word: the number of its last writer, with kLock set while that writer
// installs, so a read copies an image no installer is halfway through.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "concurrency_control/cc.h"

namespace nvt::cc {

struct Occ {
  static constexpr const char* name = "occ";
  static constexpr uint64_t kLock = 1ull << 63;
  static constexpr uint64_t kHistory = 4096;  // finished write sets kept for validation
  enum : uint8_t { kNone = 0, kLocked = 1 };

  struct Meta {
    std::atomic<uint64_t> word{0};  // kLock | number of the last writer
  };

  // A tuple's identity that survives engines moving its metadata (Zen's copy-on-write).
  struct RowId {
    uint64_t key;
    uint32_t table;
    bool operator==(const RowId&) const = default;
  };
  // A set of rows with a 64-bit Bloom filter for the common empty intersection.
  struct RowSet {
    std::vector<RowId> rows;
    uint64_t bloom = 0;
    static uint64_t bit(const RowId& r) { return 1ull << ((r.key * 0x9e3779b97f4a7c15ull + r.table) >> 58); }
    void clear() { rows.clear(); bloom = 0; }
    void add(const RowId& r) { rows.push_back(r); bloom |= bit(r); }
    bool intersects(const RowSet& o) const {
      if (!(bloom & o.bloom)) return false;
      for (const RowId& r : rows)
        if ((bit(r) & o.bloom) && std::find(o.rows.begin(), o.rows.end(), r) != o.rows.end()) return true;
      return false;
    }
  };

  struct Txn {
    AbortCause cause = AbortCause::None;
    uint64_t start_tn = 0;
    RowSet reads, writes;  // reused across transactions
    bool active = false;   // validated, in the active list until finish()
  };

  static void start(int) {}
  static void stop() {}
  static Meta* meta(Access& a) { return static_cast<Meta*>(a.row.meta); }

  void begin(Txn& t) {
    t.cause = AbortCause::None;
    t.start_tn = global().tnc.load(std::memory_order_acquire);
  }

  const char* read(Txn&, Access& a) {
    stable_copy(meta(a)->word, kLock, a);
    return a.local;
  }
  bool write(Txn&, Access& a) {
    stable_copy(meta(a)->word, kLock, a);
    return true;
  }
  bool upgrade(Txn&, Access&) { return true; }  // the copy is already there

  bool validate(Txn& t, Access* acc, size_t n) {
    t.reads.clear();
    t.writes.clear();
    for (size_t i = 0; i < n; i++) {
      RowId r{acc[i].key, acc[i].table};
      t.reads.add(r);
      if (acc[i].type != AccessType::Read) t.writes.add(r);
    }
    {
      Global& g = global();
      std::lock_guard guard(g.mu);
      uint64_t finish_tn = g.tnc.load(std::memory_order_relaxed);
      bool ok = finish_tn - t.start_tn < kHistory;  // else its history is gone: cannot validate
      for (uint64_t tn = t.start_tn + 1; ok && tn <= finish_tn; tn++)
        ok = !g.history[tn % kHistory].intersects(t.reads);
      for (size_t i = 0; ok && i < g.active.size(); i++) ok = !g.active[i]->writes.intersects(t.reads);
      if (!ok) {
        t.cause = AbortCause::Validation;
        return false;
      }
      if (t.writes.rows.empty()) return true;
      g.active.push_back(&t);
      t.active = true;
    }
    // No other active transaction writes these rows, so the lock bit is ours at once; it only
    // keeps readers from copying an image while it is installed.
    for (size_t i = 0; i < n; i++) {
      if (acc[i].type == AccessType::Read) continue;
      std::atomic<uint64_t>& w = meta(acc[i])->word;
      dev::update(&w, sizeof w);
      w.fetch_or(kLock, std::memory_order_acquire);
      acc[i].held = kLocked;
    }
    return true;
  }

  void finish(Txn& t, Access* acc, size_t n) {
    if (!t.active) return;  // read-only
    uint64_t tn;
    {
      Global& g = global();
      std::lock_guard guard(g.mu);
      tn = g.tnc.load(std::memory_order_relaxed) + 1;
      RowSet& h = g.history[tn % kHistory];
      h.rows.assign(t.writes.rows.begin(), t.writes.rows.end());
      h.bloom = t.writes.bloom;
      g.active.erase(std::find(g.active.begin(), g.active.end(), &t));
      t.active = false;
      g.tnc.store(tn, std::memory_order_release);  // after the history holds its write set
    }
    for (size_t i = 0; i < n; i++) {
      if (acc[i].held != kLocked) continue;
      std::atomic<uint64_t>& w = meta(acc[i])->word;
      dev::write(&w, sizeof w);
      w.store(tn, std::memory_order_release);
      acc[i].held = kNone;
    }
  }

  // Only a failed validation or an earlier abort gets here: nothing is locked or active.
  void abort(Txn&, Access*, size_t) {}

 private:
  struct Global {
    std::mutex mu;  // the critical section
    std::atomic<uint64_t> tnc{0};  // changes only in the critical section
    RowSet history[kHistory];  // history[tn % kHistory]: write set of transaction tn
    std::vector<const Txn*> active;
  };
  static Global& global() {
    static Global g;
    return g;
  }
};

}  // namespace nvt::cc
