// MCSI, multi-clock snapshot isolation (papers/mcsi.txt sections 3-4), on the single-layer NVM
// multi-version engine (storage/engines/nvmvcc):
//   - txid = clock_id (10 bits, the worker) << 54 | clock_ts (54 bits, the worker's own clock);
//   - a completed-timestamp array (one cache line per worker) holds each worker's last
//     completed clock_ts; a snapshot is a scan of it (a vector clock);
//   - snapshots are generated under a try-lock, one at a time, and appended to a snapshot
//     buffer; a transaction whose try-lock fails takes the newest buffered snapshot;
//   - per-worker status arrays in NVM, single writer, 2 bits per transaction, 31 per 64-bit
//     word whose top bit is the dirty bit of Algorithm 1 (readers help persist a dirty word);
//   - updates: first updater wins, new versions CAS-installed (si_common.h).
// Versions no snapshot can reach are pruned: every 64th generated snapshot also computes the
// horizon, the oldest snapshot any worker uses or may still take.
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "concurrency_control/si_common.h"

namespace nvt::cc {

struct McsiTxn : si::TxnBase {
  uint64_t ts = 0;
  uint64_t snap_seq = 0;
  uint64_t snap[64] = {};  // last completed clock_ts per worker, as of the snapshot
};

struct Mcsi : si::SiBase<Mcsi, McsiTxn> {
  static constexpr const char* name = "mcsi";
  using Txn = McsiTxn;
  static constexpr int kMaxThreads = 64;
  static constexpr int kTsBits = 54;
  static constexpr uint64_t kTsMask = (1ull << kTsBits) - 1;
  static constexpr uint64_t kDirty = 1ull << 63;
  static constexpr uint64_t kPerWord = 31;
  static constexpr uint64_t kWords = 1024;  // status words per worker: a ring of 31744 txns
  static constexpr uint64_t kBuffer = 256;  // buffered snapshots
  static constexpr uint64_t kGcEvery = 64;  // snapshots between horizon computations
  static constexpr uint64_t kIdle = ~0ull, kAcquiring = ~0ull - 1;

  // NVM the engine reserves for the status arrays.
  static constexpr uint64_t kNvmStateBytes = kMaxThreads * kWords * 8;

  struct alignas(64) Slot { std::atomic<uint64_t> v{0}; };
  struct alignas(64) BufEntry {
    std::atomic<uint64_t> seq{0};  // 2 * snapshot seq + 2 when complete, odd while written
    std::atomic<uint64_t> ts[kMaxThreads];
  };
  struct State {
    std::atomic<uint64_t>* status = nullptr;  // NVM: kMaxThreads x kWords words
    int threads = 1;
    Slot clock[kMaxThreads];       // next clock_ts per worker
    Slot completed[kMaxThreads];   // the completed-timestamp array
    Slot published[kMaxThreads];   // seq of the snapshot a worker uses, kIdle, kAcquiring
    Slot horizon[kMaxThreads];     // every present and future snapshot covers these
    std::atomic_flag gen_lock = ATOMIC_FLAG_INIT;
    alignas(64) std::atomic<uint64_t> latest{0};
    BufEntry buffer[kBuffer];
    std::atomic<uint64_t> generated{0}, buffered_used{0}, helped{0};
  };
  static inline State* st = nullptr;

  static uint64_t clock_id(uint64_t txid) { return txid >> kTsBits; }
  static uint64_t clock_ts(uint64_t txid) { return txid & kTsMask; }

  // The engine hands over the status arrays' NVM; fresh: zero them.
  static void attach(char* nvm, int threads, bool fresh) {
    check_workers(threads);
    static State state_storage;
    st = &state_storage;
    st->status = reinterpret_cast<std::atomic<uint64_t>*>(nvm);
    if (fresh) clear_persistent();
    reset(threads);
  }
  static void clear_persistent() {
    memset(static_cast<void*>(st->status), 0, kNvmStateBytes);
    dev::persist(st->status, kNvmStateBytes);
  }
  static void reset(int threads) {
    st->threads = threads;
    for (int i = 0; i < kMaxThreads; i++) {
      st->clock[i].v = 1;
      st->completed[i].v = 0;
      st->published[i].v = kIdle;
      st->horizon[i].v = 0;
    }
    st->latest = 0;
    for (auto& e : st->buffer) e.seq = 0;
    BufEntry& e0 = st->buffer[0];  // snapshot 0: nothing completed
    for (auto& x : e0.ts) x = 0;
    e0.seq = 2;
    st->generated = st->buffered_used = st->helped = 0;
  }

  // ---- Algorithm 1: a persistent 64-bit MRSW word -------------------------------------------
  static std::atomic<uint64_t>& word_of(uint64_t txid, int& offset) {
    uint64_t ts = clock_ts(txid);
    offset = int(ts % kPerWord) * 2;
    return st->status[clock_id(txid) * kWords + (ts / kPerWord) % kWords];
  }
  static void set_status(uint64_t txid, uint64_t s) {
    int off;
    std::atomic<uint64_t>& w = word_of(txid, off);
    uint64_t mask = 3ull << off;
    uint64_t old_val = w.load(std::memory_order_relaxed);
    uint64_t new_val = (old_val & ~mask) | (s << off);
    w.store(new_val | kDirty, std::memory_order_release);
    dev::persist(&w, 8);  // counted by the flush alone (device.h's rule)
    w.store(new_val & ~kDirty, std::memory_order_release);
  }
  static uint64_t stored_status(uint64_t txid) {
    int off;
    std::atomic<uint64_t>& w = word_of(txid, off);
    dev::read(&w, 8);
    uint64_t res = w.load(std::memory_order_acquire);
    if (res & kDirty) {  // a concurrent set not yet persisted: help
      // If the owner moved on while this copy was in flight, persist again: a flushed line
      // lands as it was when flushed (the device model's power-failure mode), so a helper
      // descheduled between its flush and fence could otherwise roll back a newer status.
      for (uint64_t v = res & ~kDirty;;) {
        dev::persist(&w, 8);
        uint64_t now = w.load(std::memory_order_acquire) & ~kDirty;
        if (now == v) break;
        v = now;
      }
      st->helped.fetch_add(1, std::memory_order_relaxed);
    }
    return (res >> off) & 3;
  }

  // ---- snapshots ----------------------------------------------------------------------------
  bool in_snapshot(const Txn& t, uint64_t txid) const {
    return clock_ts(txid) <= t.snap[clock_id(txid)];
  }
  static bool below_horizon(uint64_t txid) {
    return txid == si::kFrozenTxid ||
           clock_ts(txid) <= st->horizon[clock_id(txid)].v.load(std::memory_order_acquire);
  }

  void start_txn(Txn& t, int tid) {
    if (tid >= st->threads) throw std::logic_error("mcsi: worker id beyond the threads attached");
    t.ts = st->clock[tid].v.load(std::memory_order_relaxed);
    st->clock[tid].v.store(t.ts + 1, std::memory_order_relaxed);
    t.txid = (uint64_t(tid) << kTsBits) | t.ts;
    si::Timed status(&si::Breakdown::status);
    set_status(t.txid, si::kRunning);
    status.stop();
    si::Timed snapshot(&si::Breakdown::snapshot);
    st->published[tid].v.store(kAcquiring);  // seq_cst: see horizon()
    if (!st->gen_lock.test_and_set(std::memory_order_acquire)) {
      generate(t);
      st->published[tid].v.store(t.snap_seq);
      if (t.snap_seq % kGcEvery == 0) horizon();
      st->gen_lock.clear(std::memory_order_release);
    } else {
      buffered(t);
      st->published[tid].v.store(t.snap_seq);
    }
  }

  // Under the lock: scan the completed-timestamp array into the next buffer entry.
  static void generate(Txn& t) {
    uint64_t seq = st->latest.load(std::memory_order_relaxed) + 1;
    BufEntry& e = st->buffer[seq % kBuffer];
    e.seq.store(2 * seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    for (int i = 0; i < st->threads; i++) {
      uint64_t v = st->completed[i].v.load(std::memory_order_acquire);
      e.ts[i].store(v, std::memory_order_relaxed);
      t.snap[i] = v;
    }
    dev::read(st->completed, sizeof(Slot) * size_t(st->threads));
    e.seq.store(2 * seq + 2, std::memory_order_release);
    st->latest.store(seq, std::memory_order_release);
    t.snap_seq = seq;
    st->generated.fetch_add(1, std::memory_order_relaxed);
  }
  // The newest buffered snapshot, copied consistently (seqlock per entry).
  static void buffered(Txn& t) {
    for (;;) {
      uint64_t seq = st->latest.load(std::memory_order_acquire);
      if (copy_entry(seq, t.snap)) {
        t.snap_seq = seq;
        st->buffered_used.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
  }
  static bool copy_entry(uint64_t seq, uint64_t* out) {
    BufEntry& e = st->buffer[seq % kBuffer];
    if (e.seq.load(std::memory_order_acquire) != 2 * seq + 2) return false;
    for (int i = 0; i < st->threads; i++) out[i] = e.ts[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    return e.seq.load(std::memory_order_relaxed) == 2 * seq + 2;
  }
  // Under the lock, after publishing the snapshot just made (the newest): the oldest snapshot
  // in use. A worker still acquiring may end with an older buffered one: skip this round.
  static void horizon() {
    uint64_t h = st->latest.load();
    for (int i = 0; i < st->threads; i++) {
      uint64_t p = st->published[i].v.load();
      if (p == kAcquiring) return;
      h = std::min(h, p);
    }
    uint64_t snap[kMaxThreads];
    if (!copy_entry(h, snap)) return;
    for (int i = 0; i < st->threads; i++)
      if (snap[i] > st->horizon[i].v.load(std::memory_order_relaxed))
        st->horizon[i].v.store(snap[i], std::memory_order_release);
  }

  // ---- commit and abort ---------------------------------------------------------------------
  void set_final(Txn& t, uint64_t s) { set_status(t.txid, s); }
  // Publish clock_ts as the last completed timestamp (read-only transactions included: their
  // status word stays `running`, but they created no version, so no reader ever asks).
  void complete(Txn& t) {
    st->completed[t.tid].v.store(t.ts, std::memory_order_release);
    dev::write(&st->completed[t.tid], 8);
    st->published[t.tid].v.store(kIdle, std::memory_order_release);
  }

  static nlohmann::json stats() {
    return {{"snapshots_generated", st->generated.load()},
            {"snapshots_from_buffer", st->buffered_used.load()},
            {"dirty_words_helped", st->helped.load()}};
  }
};

}  // namespace nvt::cc
