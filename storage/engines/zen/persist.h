// Log-free persistent transactions (zen-vldb21 section 3.3, Algorithm 1): every tuple a commit
// changes goes to a free slot with the Tx-CTS in its header, all lines flushed but the LP
// tuple's header line, one sfence, then the LP bit set and its line flushed without a fence (the
// thread's next fence completes it). The durable point and sync() follow from that rule.
#pragma once

#include "storage/engines/zen/zen.h"

namespace nvt::zen {

// Algorithm 1. Returns the Tx-CTS (0 for a read-only transaction, which persists nothing).
template <class CC>
inline uint64_t Zen<CC>::persist(Thread& th, Access* acc, size_t n) {
  th.written.clear();
  NvmHeap::count_need(th.need, acc, n);
  size_t lp = n;
  for (size_t i = 0; i < n; i++) {
    if (acc[i].type == AccessType::Read) continue;
    if (lp == n || tables_[acc[i].table]->rank < tables_[acc[lp].table]->rank) lp = i;
  }
  Shared& sh = shared_[th.tid];
  if (lp == n) {
    // Read-only: no fence, but a thread that only reads for long must not hold back the
    // reclamation of what its last read-write commit superseded.
    if (sh.unfenced.load(std::memory_order_relaxed) && ++th.ro_since_fence >= kIdleFenceAfter) {
      sync(th);
      th.idle_fences++;
    }
    th.durable_token = counter_.load(std::memory_order_seq_cst) - 1;  // what it read is at most this
    return 0;
  }
  const uint64_t cts = counter_.fetch_add(1, std::memory_order_acq_rel);
  HeapRegion& r = heap_->pick(th.regions, th.need);
  const bool reorder = dev::fault_is(dev::Fault::ReorderLP);
  char* lp_slot = nullptr;
  for (size_t i = 0; i < n; i++) {
    Access& a = acc[i];
    if (a.type == AccessType::Read) continue;
    char* slot = take(th, r, a.table);  // never the slot of the tuple's previous version
    const bool del = a.type == AccessType::Delete;
    write_header(slot, cts, reorder && i == lp, a.table, a.key, del);  // reorder: injected bug
    if (!del) memcpy(NvmTuple::at(slot)->data(), a.local, a.len);
    a.version = cts;
    th.written.push_back({&a, slot});
    if (i == lp) { lp_slot = slot; continue; }
    uint32_t bytes = kHeaderBytes + (del ? 0 : a.len);
    if (dev::fault_is(dev::Fault::DropFlush) && bytes > kLineBytes) bytes -= kLineBytes;
    dev::flush(slot, bytes);
  }
  // The LP tuple: every line but the one holding its header.
  char* line = header_line(lp_slot);
  char* end = lp_slot + kHeaderBytes + acc[lp].len;
  if (reorder) dev::flush(line, kLineBytes);
  if (end > line + kLineBytes) dev::flush(line + kLineBytes, size_t(end - line - kLineBytes));
  dev::crash_point("zen.before_fence");
  if (th.exclusive) dev::crash_point("zen.exclusive_persist");  // the privileged's versions, unfenced
  if (!dev::fault_is(dev::Fault::DropFence)) dev::fence();
  dev::crash_point("zen.after_fence");
  sh.unfenced.store(cts, std::memory_order_seq_cst);  // the previous LP is durable now
  th.ro_since_fence = 0;
  th.durable_token = cts;
  if (!reorder) {
    NvmTuple::at(lp_slot)->set_cts(cts, true);
    dev::flush(line, kLineBytes);  // no fence: the next one (any of this thread) completes it
  }
  dev::crash_point("zen.after_lp_flush");
  r.set_lp(acc[lp].table, lp_slot);
  return cts;
}

template <class CC>
inline std::pair<uint64_t, uint64_t> Zen<CC>::durable_point() const {
  uint64_t m = counter_.load(std::memory_order_seq_cst);  // first: as global_min()
  for (int t = 0; t < nthreads_; t++) {
    uint64_t u = shared_[t].unfenced.load(std::memory_order_seq_cst);
    if (u && u < m) m = u;
  }
  return {m - 1, __rdtsc()};
}

// Make this thread's last commit durable (the "communication thread" sfence of section 3.3.1,
// for whoever acknowledges commits to clients).
template <class CC>
inline void Zen<CC>::sync(Thread& th) {
  Shared& sh = shared_[th.tid];
  if (!sh.unfenced.load(std::memory_order_relaxed)) return;
  dev::fence();
  sh.unfenced.store(0, std::memory_order_seq_cst);
  th.ro_since_fence = 0;
}

}  // namespace nvt::zen
