// PGSI: the PostgreSQL / N2DB style snapshot isolation that papers/mcsi.txt compares MCSI with
// (section 2.3, Table 2), on the same single-layer NVM multi-version engine:
//   - one global clock hands out xids;
//   - a global active-transaction list; a snapshot is (xmax = the clock, the active xids),
//     taken under the one lock that also guards xid assignment, so snapshot generation blocks
//     transaction starts (and ends);
//   - a commit log (clog) in NVM, 2 bits per xid, written by every thread (CAS on shared
//     words, then flush and fence).
// Visibility, first-updater-wins updates, inline statuses and pruning: si_common.h.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "concurrency_control/si_common.h"

namespace nvt::cc {

struct PgsiTxn : si::TxnBase {
  uint64_t xmax = 0;         // xids >= xmax started after the snapshot
  uint32_t nactive = 0;      // xids running when the snapshot was taken
  uint64_t active[64] = {};
};

struct Pgsi : si::SiBase<Pgsi, PgsiTxn> {
  static constexpr const char* name = "pgsi";
  using Txn = PgsiTxn;
  static constexpr int kMaxThreads = 64;
  static constexpr uint64_t kPerWord = 31;   // as MCSI's words: 2 bits each, top bit unused
  static constexpr uint64_t kWords = 64 * 1024;  // a ring of ~2M xids
  static constexpr uint64_t kHorizonEvery = 64;
  static constexpr uint64_t kNvmStateBytes = kWords * 8;
  static constexpr uint64_t kNone = 0;

  struct alignas(64) Proc { uint64_t xid = kNone; uint64_t xmin = 0; };
  struct State {
    std::atomic<uint64_t>* clog = nullptr;  // NVM
    int threads = 1;
    alignas(64) std::atomic_flag lock = ATOMIC_FLAG_INIT;  // ProcArrayLock
    uint64_t next_xid = 1;                                  // the global clock, under `lock`
    uint64_t starts = 0;
    Proc procs[kMaxThreads];                                // the active-transaction list
    alignas(64) std::atomic<uint64_t> horizon{1};
    std::atomic<uint64_t> lock_waits{0};
  };
  static inline State* st = nullptr;

  static void attach(char* nvm, int threads, bool fresh) {
    check_workers(threads);
    static State state_storage;
    st = &state_storage;
    st->clog = reinterpret_cast<std::atomic<uint64_t>*>(nvm);
    if (fresh) clear_persistent();
    st->threads = threads;
    st->next_xid = 1;
    st->starts = 0;
    for (auto& p : st->procs) p = Proc{};
    st->horizon = 1;
    st->lock_waits = 0;
  }
  static void clear_persistent() {
    memset(static_cast<void*>(st->clog), 0, kNvmStateBytes);
    dev::persist(st->clog, kNvmStateBytes);
  }

  static void lock() {
    uint32_t spins = 0;
    bool waited = false;
    while (st->lock.test_and_set(std::memory_order_acquire)) { waited = true; relax(spins); }
    if (waited) st->lock_waits.fetch_add(1, std::memory_order_relaxed);
    dev::update(&st->lock, 8);
  }
  static void unlock() { st->lock.clear(std::memory_order_release); }

  // ---- clog ---------------------------------------------------------------------------------
  static std::atomic<uint64_t>& word_of(uint64_t xid, int& off) {
    off = int(xid % kPerWord) * 2;
    return st->clog[(xid / kPerWord) % kWords];
  }
  // Shared words: CAS the 2 bits in, flush, and with `fence` make them durable.
  static void set_clog(uint64_t xid, uint64_t s, bool fence) {
    int off;
    std::atomic<uint64_t>& w = word_of(xid, off);
    uint64_t mask = 3ull << off, cur = w.load(std::memory_order_relaxed);
    uint64_t mine = 0;
    do mine = (cur & ~mask) | (s << off);
    while (!w.compare_exchange_weak(cur, mine, std::memory_order_acq_rel));
    dev::read(&w, 8);  // the CAS reads the word; the flush counts its write (device.h's rule)
    dev::flush(&w, 8);
    if (!fence) return;
    // Another thread's bits may have been set (and made durable) while this copy was in
    // flight; a flushed line lands as it was when flushed, so persist again until the word
    // is what was last persisted here.
    for (uint64_t v = mine;;) {
      dev::fence();
      uint64_t now = w.load(std::memory_order_acquire);
      if (now == v) break;
      v = now;
      dev::flush(&w, 8);
    }
  }
  static uint64_t stored_status(uint64_t xid) {
    int off;
    std::atomic<uint64_t>& w = word_of(xid, off);
    dev::read(&w, 8);
    uint64_t s = (w.load(std::memory_order_acquire) >> off) & 3;
    return s == 0 ? si::kRunning : s;  // a cleared slot: in progress
  }

  // ---- snapshots ----------------------------------------------------------------------------
  bool in_snapshot(const Txn& t, uint64_t xid) const {
    if (xid >= t.xmax) return false;
    for (uint32_t i = 0; i < t.nactive; i++)
      if (t.active[i] == xid) return false;
    return true;
  }
  static bool below_horizon(uint64_t xid) {
    return xid == si::kFrozenTxid || xid < st->horizon.load(std::memory_order_acquire);
  }

  void start_txn(Txn& t, int tid) {
    if (tid >= st->threads) throw std::logic_error("pgsi: worker id beyond the threads attached");
    si::Timed snapshot(&si::Breakdown::snapshot);
    lock();
    t.txid = st->next_xid++;
    t.xmax = st->next_xid;
    t.nactive = 0;
    uint64_t xmin = t.txid;
    for (int i = 0; i < st->threads; i++) {
      uint64_t x = st->procs[i].xid;
      if (x == kNone) continue;
      t.active[t.nactive++] = x;
      xmin = std::min(xmin, x);
    }
    dev::read(st->procs, sizeof(Proc) * size_t(st->threads));
    st->procs[tid] = Proc{t.txid, xmin};
    if (++st->starts % kHorizonEvery == 0) {
      uint64_t h = st->next_xid;
      for (int i = 0; i < st->threads; i++)
        if (st->procs[i].xid != kNone) h = std::min(h, st->procs[i].xmin);
      st->horizon.store(h, std::memory_order_release);
    }
    unlock();
    snapshot.stop();
    si::Timed status(&si::Breakdown::status);
    // The slot may hold a status from xid - ring size: clear it, durably. Fenced at once, not
    // left to the fence before this transaction's first version: the word is shared, and a
    // flushed line (as it was when flushed) landing at a later fence would roll back another
    // thread's commit bit made durable in between (the device model's power-failure mode does
    // exactly that; crash torture found it).
    set_clog(t.txid, 0, true);
  }

  void set_final(Txn& t, uint64_t s) { set_clog(t.txid, s, true); }
  void complete(Txn& t) {
    lock();
    st->procs[t.tid].xid = kNone;
    unlock();
  }

  static nlohmann::json stats() {
    return {{"xids", st->next_xid - 1}, {"lock_waits", st->lock_waits.load()}};
  }
};

}  // namespace nvt::cc
