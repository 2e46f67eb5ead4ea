// Persistent row garbage collection (nvcaracal-eurosys23 sections 4.4 and 5.3): minor GC reuses
// a stale inline version's slot in the final write itself (final_write.h); major GC, here, at the
// next epoch's initialization, drops the stale version of rows that could not, and frees the
// rows deleted last epoch.
#pragma once
#include <cstring>
#include <utility>
#include <vector>

#include "storage/engines/nvcaracal/nvcaracal.h"

namespace nvt::nvc {

// Major GC (section 4.4): rows given a second version last epoch lose the stale one; a row
// whose second version is a tombstone (deleted last epoch) goes whole: its row block too.
// The freed blocks are made durable on the free lists before any header changes (a crash
// after that sees the block free and still named by a stale version: recovery does not free
// it twice, and skips a freed row); the headers are fenced before execution.
template <class CC>
void NvCaracal<CC>::major_gc(Thread& th) {
  if (th.gc_now.empty()) return;
  BlockPool& vp = val_pool_[size_t(th.core)];
  BlockPool& rp = row_pool_[size_t(th.core)];
  std::vector<std::pair<Row*, RowHeader>> todo;
  std::vector<Row*> retire;
  todo.reserve(th.gc_now.size());
  for (Row* r : th.gc_now) {
    RowHeader h;
    row_read(r->prow, sizeof h);
    memcpy(&h, r->prow, sizeof h);
    if (!h.sid[1]) continue;
    if (!is_inline(h.ref[0]) && !recovered_free_.count(h.ref[0] - 1)) vp.free(h.ref[0] - 1);
    if (is_tombstone(h.ref[1])) {
      rp.free(row_ref(r->prow));
      retire.push_back(r);
    } else {
      todo.push_back({r, h});
    }
  }
  if (persist_) {
    if (vp.capacity()) vp.persist_gc(epoch_);
    if (!retire.empty()) rp.persist_gc(epoch_);
    dev::fence();
  }
  for (Row* r : retire) {
    RowHeader dead{};
    memcpy(r->prow, &dead, sizeof dead);
    row_flush(r->prow, sizeof dead);
    index_[r->table]->remove(r->key);
    th.major_gc++;
  }
  for (auto& [r, h] : todo) {
    RowHeader nh = h;
    nh.sid[0] = h.sid[1];
    nh.ref[0] = h.ref[1];
    nh.sid[1] = 0;
    nh.ref[1] = 0;
    store_header(reinterpret_cast<RowHeader*>(r->prow), nh);
    row_flush(r->prow, sizeof nh);
    th.major_gc++;
  }
  // Fenced before execution: another core's final write may change the same header this
  // epoch, and a line this core flushed may land until this core fences (it would then
  // roll that write back).
  if (persist_) dev::fence();
  th.gc_now.clear();
}

}  // namespace nvt::nvc
