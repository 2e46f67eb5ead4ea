// What MCSI and PGSI share on the single-layer NVM multi-version engine (storage/engines/
// nvmvcc): snapshot reads along a version chain, first-updater-wins updates that CAS a new
// version in at once (papers/mcsi.txt 4.5, Figures 7-9), inline final statuses, and pruning of
// versions no snapshot can see any more. A method supplies, as `Derived`:
//   name, kMaxThreads
//   static std::atomic<uint64_t>& word_of(uint64_t txid, int& off)   the NVM word of a status
//                                                   (2 bits at `off`)
//   static uint64_t stored_status(uint64_t txid)   status array / commit log lookup
//   bool in_snapshot(const Txn&, uint64_t txid) const
//   static bool below_horizon(uint64_t txid)        every present and future snapshot holds it
//   void start_txn(Txn&, int tid)                   txid and snapshot
//   void set_final(Txn&, uint64_t status)          durable commit / abort point
//   void complete(Txn&)                             publish completion (wrote or read only)
#pragma once
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "concurrency_control/cc.h"
#include "storage/device/power_fail.h"
#include "storage/engines/nvmvcc/version.h"

namespace nvt::cc::si {

using nvmvcc::kAborted;
using nvmvcc::kCommitted;
using nvmvcc::kFrozenTxid;
using nvmvcc::kRunning;
using nvmvcc::RecordHead;
using nvmvcc::SiCtx;
using nvmvcc::Version;

// papers/mcsi.txt Figure 11: where a transaction's time goes. TSC cycles per worker thread,
// taken only with --time-breakdown (one predictable branch per timed section otherwise).
// "Other" (index lookups, the workload, retries' backoff) is the driver's rest of the time.
struct Breakdown {
  uint64_t snapshot = 0;  // snapshot generation: MCSI's vector clock / buffer, PGSI's ProcArray
  uint64_t status = 0;    // transaction status storage: MCSI's status arrays, PGSI's clog
  uint64_t access = 0;    // record access: version chains, new versions, payloads made durable
};
inline bool g_breakdown_on = false;
inline thread_local Breakdown t_breakdown;

// Adds the section's cycles to one component; inside a record access, status lookups count as
// status only (the access subtracts what status gained meanwhile).
class Timed {
 public:
  explicit Timed(uint64_t Breakdown::*part) {
    if (!g_breakdown_on) [[likely]] return;
    part_ = part;
    status0_ = t_breakdown.status;
    t0_ = __rdtsc();
  }
  ~Timed() { stop(); }
  void stop() {  // the section ends before the scope does
    if (!part_) [[likely]] return;
    uint64_t d = __rdtsc() - t0_;
    if (part_ == &Breakdown::access) d -= std::min(d, t_breakdown.status - status0_);
    t_breakdown.*part_ += d;
    part_ = nullptr;
  }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  uint64_t Breakdown::*part_ = nullptr;
  uint64_t status0_ = 0, t0_ = 0;
};

struct TxnBase {
  AbortCause cause = AbortCause::None;
  bool started = false;
  int tid = 0;
  uint64_t txid = 0;
  std::vector<Version*> mine;  // versions this transaction put at the head of chains
  uint64_t persist_t0 = 0;     // --time-breakdown: the engine's commit work began (validate)
};

template <class Derived, class Txn>
struct SiBase {
  // Tuples carry no CC metadata of their own: versions carry their creator's txid.
  struct Meta {};
  static constexpr bool kNvMvcc = true;  // runs only on storage/engines/nvmvcc

  // --time-breakdown (the driver reads this worker's cycles at the measured phase's bounds).
  static void enable_breakdown(bool on) { g_breakdown_on = on; }
  static Breakdown breakdown_now() { return t_breakdown; }

  static SiCtx& ctx(Access& a) { return *static_cast<SiCtx*>(a.row.meta); }
  static RecordHead* head(Access& a) { return static_cast<RecordHead*>(a.row.handle); }
  Derived& self() { return static_cast<Derived&>(*this); }

  static void start(int threads) {
    if (threads > Derived::kMaxThreads)
      throw std::invalid_argument(std::string(Derived::name) + ": at most " +
                                  std::to_string(Derived::kMaxThreads) + " threads");
  }
  static void stop() {}
  // The engine attaches the status words for 1 to kMaxThreads workers.
  static void check_workers(int threads) {
    if (threads < 1 || threads > Derived::kMaxThreads)
      throw std::invalid_argument(std::string(Derived::name) + ": at most " +
                                  std::to_string(Derived::kMaxThreads) + " worker threads, got " +
                                  std::to_string(threads));
  }

  // Recovery in a fresh process: the status the image holds.
  static uint64_t recovered_status(uint64_t txid) {
    if (txid == kFrozenTxid) return kCommitted;
    int off;
    std::atomic<uint64_t>& word = Derived::word_of(txid, off);
    dev::read(&word, 8);  // recovery reads the image through the device model too
    uint64_t w = word.load();
    return (w >> off) & 3;
  }
  static uint64_t current_status(uint64_t txid) {
    return txid == kFrozenTxid ? kCommitted : Derived::stored_status(txid);
  }

  // A creator's status: the inlined final one when there, else the status array / clog. The
  // inline field is read again after the array: the owner inlines before its slot is reused,
  // so a slot already reused is caught there.
  static uint64_t status(Version* v) {
    dev::read(v, sizeof *v);
    uint64_t id = v->txid.load(std::memory_order_acquire);
    if (id == kFrozenTxid) return kCommitted;
    if (uint32_t s = v->inl.load(std::memory_order_acquire)) return s;
    uint64_t s;
    {
      Timed tm(&Breakdown::status);
      s = Derived::stored_status(id);
    }
    if (uint32_t s2 = v->inl.load(std::memory_order_acquire)) return s2;
    return s;
  }

  bool visible(const Txn& t, Version* v) {
    uint64_t st = status(v);
    uint64_t id = v->txid.load(std::memory_order_relaxed);
    return st == kCommitted && (id == kFrozenTxid || self().in_snapshot(t, id));
  }

  void begin(Txn& t) {
    t.cause = AbortCause::None;
    t.started = false;
    t.mine.clear();
  }

  void ensure(Txn& t, Access& a) {
    if (t.started) return;
    t.started = true;
    t.tid = ctx(a).tid;
    self().start_txn(t, t.tid);
  }

  // The first committed version inserted before the snapshot (Figure 7). None, or a tombstone:
  // the record is not in this snapshot (inserted after it, or deleted), a missing key (User).
  const char* read(Txn& t, Access& a) {
    ensure(t, a);
    Timed tm(&Breakdown::access);
    SiCtx& c = ctx(a);
    RecordHead* h = head(a);
    dev::read(h, sizeof *h);
    for (uint64_t r = h->latest.load(std::memory_order_acquire); r;) {
      Version* v = c.heap->at(r);
      if (visible(t, v)) {
        if (v->tombstone()) break;
        dev::read(v->data(), a.len);
        return v->data();
      }
      c.chain_steps++;
      r = v->prev;
    }
    t.cause = AbortCause::User;
    return nullptr;
  }

  // First updater wins (Figure 8): no committed version after the visible one, and no
  // running one (it is assumed to commit); aborted ones are passed over. Then the new version,
  // its header persisted, goes in front by CAS against the head read before the check
  // (Figure 9); a.local is its payload in NVM, persisted at commit. An update or delete needs
  // the record in the snapshot (else a missing key: User); an insert needs it absent there (no
  // visible version, or a tombstone), else it is a duplicate (WriteConflict, as a present key
  // is on the other engines). Inserts and deletes are updates otherwise (section 3): an insert
  // of a key another transaction inserts or deletes concurrently is a write-write conflict.
  bool write(Txn& t, Access& a) {
    ensure(t, a);
    Timed tm(&Breakdown::access);
    SiCtx& c = ctx(a);
    RecordHead* h = head(a);
    dev::read(h, sizeof *h);
    uint64_t top = h->latest.load(std::memory_order_acquire);
    Version* vis = nullptr;
    for (uint64_t r = top; r;) {
      Version* v = c.heap->at(r);
      uint64_t st = status(v);
      uint64_t id = v->txid.load(std::memory_order_relaxed);
      if (st == kCommitted && (id == kFrozenTxid || self().in_snapshot(t, id))) { vis = v; break; }
      if (st != kAborted) { t.cause = AbortCause::WriteConflict; return false; }
      c.chain_steps++;
      r = v->prev;
    }
    const bool insert = a.type == AccessType::Insert;
    const bool absent = !vis || vis->tombstone();
    if (insert != absent) {
      t.cause = insert ? AbortCause::WriteConflict : AbortCause::User;
      return false;
    }
    uint64_t ref = c.heap->alloc(c.tid);
    if (!ref) { t.cause = AbortCause::NvmSpace; return false; }
    Version* nv = c.heap->at(ref);
    nv->txid.store(t.txid, std::memory_order_relaxed);
    nv->prev = top;
    nv->inl.store(0, std::memory_order_relaxed);
    nv->flags = 0;
    nv->seq = vis ? vis->seq + 1 : 0;
    if (!insert) copy_tuple(nv->data(), vis->data(), a.len);  // an insert starts zeroed
    dev::persist(nv, sizeof *nv);  // flushed stores are counted by the flush (device.h)
    dev::crash_point("nvmvcc.version_header");
    if (!h->latest.compare_exchange_strong(top, ref, std::memory_order_acq_rel)) {
      c.heap->free(c.tid, ref);
      t.cause = AbortCause::WriteConflict;
      return false;
    }
    dev::persist(&h->latest, sizeof h->latest);
    dev::crash_point("nvmvcc.head_cas");
    c.versions_created++;
    t.mine.push_back(nv);
    a.local = nv->data();
    prune(c, nv);
    return true;
  }
  bool upgrade(Txn& t, Access& a) { return write(t, a); }

  // Conflicts were settled at write. With --time-breakdown, the engine's commit work from here
  // to finish() (the new versions' payloads made durable) counts as record access.
  bool validate(Txn& t, Access*, size_t) {
    if (g_breakdown_on) [[unlikely]] t.persist_t0 = __rdtsc();
    return true;
  }

  void finish(Txn& t, Access*, size_t) {
    if (g_breakdown_on && t.persist_t0) [[unlikely]] {
      t_breakdown.access += __rdtsc() - t.persist_t0;
      t.persist_t0 = 0;
    }
    end(t, kCommitted);
  }
  void abort(Txn& t, Access*, size_t) { end(t, kAborted); }

 private:
  void end(Txn& t, uint64_t st) {
    if (!t.started) return;
    t.persist_t0 = 0;
    if (!t.mine.empty()) {
      Timed tm(&Breakdown::status);  // the final status, then inlined durably
      self().set_final(t, st);
      dev::crash_point("nvmvcc.commit_status");
      // Inline the final status (4.4), durably before completion: once completed, a version
      // may be pruned and its slot reused by another thread, and a flushed line lands as it was
      // when flushed (the device model's power-failure mode), so an inline flush still in
      // flight could overwrite the reused slot's new header (crash torture found it).
      for (Version* v : t.mine) {
        v->inl.store(uint32_t(st), std::memory_order_release);
        dev::flush(&v->inl, sizeof v->inl);
      }
      dev::fence();
    }
    Timed tm(&Breakdown::snapshot);  // completion feeds later snapshots
    self().complete(t);
    t.started = false;
    t.mine.clear();
  }

  // While this transaction's running version heads the chain no other updater gets in, so
  // pruning below it is exclusive. The first version every present and future snapshot sees
  // ends the chain; readers stop there or above, so what lies below is unreachable.
  void prune(SiCtx& c, Version* nv) {
    uint64_t r = nv->prev;
    Version* keep = nullptr;
    while (r) {
      Version* v = c.heap->at(r);
      if (status(v) == kCommitted && Derived::below_horizon(v->txid.load(std::memory_order_relaxed))) {
        keep = v;
        break;
      }
      r = v->prev;
    }
    if (!keep || !keep->prev) return;
    r = keep->prev;
    keep->prev = 0;
    dev::write(&keep->prev, sizeof keep->prev);
    while (r) {
      dev::read(&c.heap->at(r)->prev, sizeof(uint64_t));  // the unlinked chain is walked in NVM
      uint64_t next = c.heap->at(r)->prev;
      c.heap->free(c.tid, r);
      c.versions_pruned++;
      r = next;
    }
  }
};

}  // namespace nvt::cc::si
