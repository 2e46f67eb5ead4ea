// WBL's commit: a commit timestamp within the durable grant cd, every modified tuple a new
// version in a free slot (the previous one stays intact), flushed and fenced; the CC's changed
// per-tuple heads persisted between CC calls. Durable once a group commit's cp covers it.
#pragma once

#include "storage/engines/wbl/wbl.h"

namespace nvt::wbl {

// The commit: returns the commit timestamp (0 for a read-only transaction).
template <class CC>
inline uint64_t Wbl<CC>::persist(Thread& th, Access* acc, size_t n) {
  persist_meta(th, 0);  // what validation wrote (locks, read timestamps)
  th.written.clear();
  if (!NvmHeap::count_need(th.need, acc, n)) {
    // Read-only: durable once what it read is, every version it read has a timestamp at
    // most the newest handed out (conservative: one load, no per-read tracking).
    th.last_cts = counter_.load(std::memory_order_seq_cst) - 1;
    return 0;
  }
  Shared& sh = shared_[th.tid];
  // Published before the timestamp is taken: the group commit reads the clock first, so it
  // never sets cp at or above a timestamp whose versions are still being written.
  sh.inflight.store(counter_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
  const uint64_t cts = counter_.fetch_add(1, std::memory_order_seq_cst);
  await_grant(th, cts);
  const uint64_t txn = (uint64_t(th.tid) + 1) << 48 | (++th.txn_seq & ((1ull << 48) - 1));
  HeapRegion& r = heap_->pick(th.regions, th.need);
  try {
    for (size_t i = 0; i < n; i++) {
      Access& a = acc[i];
      if (a.type == AccessType::Read) continue;
      Entry* e = static_cast<Entry*>(a.row.handle);
      char* slot = take(th, r, a.table);  // never the slot of the tuple's previous version
      const bool del = a.type == AccessType::Delete;
      Version* v = Version::at(slot);
      // A reused slot holds a superseded version whose successor is durable: the new,
      // uncommitted timestamp goes in before anything else changes (as Zen's header).
      v->set_cts(cts);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      v->set_id(zen::NvmTuple::make_id(a.table, a.key, del));
      v->txn = txn;
      v->link = prev_ref(e->nvm) << 32 | e->meta.hid;
      if (!del) memcpy(v->data(), a.local, a.len);
      a.version = cts;
      th.written.push_back({&a, slot});
      th.versions++;
      if (!dev::fault_is(dev::Fault::DropFlush)) dev::flush(slot, kVersionHeader + (del ? 0 : a.len));
    }
  } catch (...) {
    // NVM full mid-commit: erase what was written before the timestamp can be covered by cp.
    for (auto& w : th.written) {
      Version::at(w.second)->set_cts(0);
      dev::flush(w.second, 8);
      r.put(w.first->table, w.second);
    }
    dev::fence();
    th.written.clear();
    sh.inflight.store(0, std::memory_order_seq_cst);
    throw;
  }
  dev::crash_point("wbl.before_version_fence");
  if (!dev::fault_is(dev::Fault::DropFence)) dev::fence();
  dev::crash_point("wbl.versions_persisted");  // between the version persist and the record
  sh.inflight.store(0, std::memory_order_seq_cst);
  th.last_cts = cts;
  if (!running_.load(std::memory_order_acquire)) group_commit(true);  // no group-commit thread
  return cts;
}

template <class CC>
inline std::pair<uint64_t, uint64_t> Wbl<CC>::durable_point() const {
  uint64_t cp = cp_.load(std::memory_order_acquire);
  return {cp, cp_tsc_.load(std::memory_order_relaxed)};
}

// Acknowledge: wait until a durable record covers this thread's last commit.
template <class CC>
inline void Wbl<CC>::sync(Thread& th) {
  while (cp_.load(std::memory_order_acquire) < th.last_cts) {
    if (!running_.load(std::memory_order_acquire)) { group_commit(true); continue; }
    dev::pay_debt();
    std::this_thread::yield();
  }
}

// Persist the heads (from tracked[from] on) whose CC metadata changed since their snapshot:
// each one flushed and fenced on its own, as a persist per metadata write (what the Zen
// paper's WBL does; one fence for several tuples' metadata would be an optimization WBL does
// not describe).
template <class CC>
inline void Wbl<CC>::persist_meta(Thread& th, size_t from) {
  for (size_t i = from; i < th.tracked.size(); i++) {
    Tracked& t = th.tracked[i];
    bool changed = false;
    for (uint32_t w = 0; w < kMetaWords; w++) {
      uint64_t v = std::atomic_ref<uint64_t>(reinterpret_cast<uint64_t*>(t.head)[w]).load(std::memory_order_relaxed);
      if (v != t.snap[w]) { t.snap[w] = v; changed = true; }
    }
    if (!changed) continue;
    dev::flush_written(t.head, kHeadStride);
    dev::fence();
    th.meta_flushes++;
    th.meta_fences++;
  }
}

}  // namespace nvt::wbl
