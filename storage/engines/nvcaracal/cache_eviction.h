// Evicting cached versions (nvcaracal-eurosys23 sections 4.2 and 5.2): a cached version is on
// the eviction list of the epoch that cached it; K + 1 epochs later, unless used since (then it
// moves to the list of its last epoch), it goes back to the cache pool.
#pragma once
#include <vector>

#include "storage/engines/nvcaracal/nvcaracal.h"

namespace nvt::nvc {

// Epoch-based eviction (section 5.2): the list of epoch - K - 1; a row used since moves to
// the list of its last epoch.
template <class CC>
void NvCaracal<CC>::evict_cache(Thread& th) {
  if (epoch_ < cache_epochs_ + 1) return;
  uint64_t old = epoch_ - cache_epochs_ - 1;
  auto& list = th.evict_lists[old % (cache_epochs_ + 2)];
  std::vector<Row*> keep;
  for (Row* r : list) {
    uint64_t used = r->cache_epoch.load(std::memory_order_relaxed);
    char* c = r->cached.load(std::memory_order_relaxed);
    if (!c) { r->listed = false; continue; }
    if (used <= old) {
      r->cached.store(nullptr, std::memory_order_relaxed);
      cache_->free(th.core, c);
      r->listed = false;
      th.evicted++;
    } else if (used % (cache_epochs_ + 2) == old % (cache_epochs_ + 2)) {
      keep.push_back(r);
    } else {
      th.evict_lists[used % (cache_epochs_ + 2)].push_back(r);
    }
  }
  list.swap(keep);
}

template <class CC>
void NvCaracal<CC>::list_for_eviction(Thread& th, Row& r) {
  if (!r.listed.exchange(true)) th.evict_lists[epoch_ % (cache_epochs_ + 2)].push_back(&r);
}

}  // namespace nvt::nvc
