// Persisting a row's final write of an epoch (nvcaracal-eurosys23 sections 4.1 and 5.3): only
// the last version a row gets in an epoch reaches NVM, into the persistent row's free version
// slot (or a value block) and its header, fenced at the epoch commit (epoch_commit.h); the
// cached version follows it. Rows inserted this epoch get their first header here.
#pragma once
#include <cstring>
#include <stdexcept>

#include "storage/engines/nvcaracal/nvcaracal.h"

namespace nvt::nvc {

// The row's final write of the epoch: a cached version first (readers in later epochs find
// it in DRAM), then the persistent row: the value into the slot the stale version held (or a
// free one), then the header in one flushed line. Fenced at the epoch commit.
// A delete's final write is a tombstone version (no value), the cached version dropped; the
// next epoch's major GC frees the row. A row inserted and deleted in one epoch never reaches
// NVM: its block goes back at once, its key out of the index at the next epoch (readers of
// this epoch still reach its version array).
template <class CC>
void NvCaracal<CC>::write_final(Thread& th, Row& r, Sid sid, const char* value) {
  th.final_writes++;
  const bool deleted = value == kDeleted;
  if (r.born == epoch_ && deleted) {
    drop_inserted(th, r, false);
    th.unindex.push_back(&r);
    return;
  }
  if (r.born == epoch_) {  // a row inserted this epoch: its first version, the whole header
    RowHeader nh{};
    nh.sid[0] = sid;
    nh.ref[0] = place_value(th, r.len, 0, true);
    nh.key = r.key;
    nh.table = r.table;
    nh.len = r.len;
    nh.live = kLive;
    write_value(r.prow, nh.ref[0], value, r.len);
    memcpy(r.prow, &nh, sizeof nh);  // nobody reads it before the epoch commits
    row_flush(r.prow, sizeof nh);
    return;
  }
  // The cached version becomes the new value, or goes: one left behind when the cache pool
  // has no block (its free blocks may sit on another core's list) would be the next epoch's
  // initial version, a lost update.
  char* c = nullptr;
  if (!deleted && cached_versions_ && !(c = cache_->alloc(th.core))) th.cache_full++;
  if (c) {
    memcpy(c, value, r.len);
    dev::write(c, r.len);
    r.cache_epoch.store(epoch_, std::memory_order_relaxed);
  }
  if (char* old = r.cached.exchange(c, std::memory_order_acq_rel)) th.retired.push_back(old);
  if (c) list_for_eviction(th, r);
  RowHeader h;
  row_read(r.prow, sizeof h);
  memcpy(&h, r.prow, sizeof h);
  if (h.sid[1] && epoch_of(h.sid[1]) >= epoch_) h.sid[1] = 0, h.ref[1] = 0;  // a replay's own earlier try
  RowHeader nh = h;
  if (!h.sid[1]) {
    nh.sid[1] = sid;
    nh.ref[1] = deleted ? kTombstone : place_value(th, r.len, h.ref[0], false);
  } else if (minor_gc_ && is_inline(h.ref[0])) {  // minor GC: the stale version's slot is reused
    nh.sid[0] = h.sid[1];
    nh.ref[0] = h.ref[1];
    nh.sid[1] = sid;
    nh.ref[1] = deleted ? kTombstone : h.ref[0];
    th.minor_gc++;
  } else {
    throw std::logic_error("persistent row with two versions left by major GC");
  }
  if (!deleted) write_value(r.prow, nh.ref[1], value, r.len);
  store_header(reinterpret_cast<RowHeader*>(r.prow), nh);
  row_flush(r.prow, sizeof nh);
  if (deleted || !minor_gc_ || !is_inline(nh.ref[0])) th.gc_next.push_back(&r);
}

// An inserted row left without a version (its inserter aborted, or a later transaction of
// the epoch deleted it): its header marked dead, its block back to the free list (reused
// after the epoch commits), its key out of the index (now, or by the caller later).
template <class CC>
void NvCaracal<CC>::drop_inserted(Thread& th, Row& r, bool unindex) {
  RowHeader nh{};
  memcpy(r.prow, &nh, sizeof nh);
  row_flush(r.prow, sizeof nh);
  row_pool_[size_t(th.core)].free(row_ref(r.prow));
  if (unindex) index_[r.table]->remove(r.key);
}

// Where a new version of len bytes goes: an inline slot (the one `other` does not use) or a
// new block of this core's value pool.
template <class CC>
uint64_t NvCaracal<CC>::place_value(Thread& th, uint32_t len, uint64_t other, bool first) {
  if (geo_.fits_inline(len)) return first ? geo_.inline_slot(0) : geo_.other_inline(other);
  return val_pool_[size_t(th.core)].alloc() + 1;
}

template <class CC>
void NvCaracal<CC>::write_value(char* prow, uint64_t ref, const char* img, uint32_t len) {
  char* dst = value_addr(prow, ref);
  memcpy(dst, img, len);
  row_flush(dst, len);
}

}  // namespace nvt::nvc
