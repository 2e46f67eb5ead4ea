// NVCaracal's execution phase (nvcaracal-eurosys23 section 4.1, Algorithm 1): reads find the
// version below their serial id in this epoch's version array, or the committed value (cached
// version, else the persistent row); writes publish their version in the transient pool at
// once; an aborted write is IGNOREd. A row's final write of the epoch goes on to final_write.h.
#pragma once
#include <cstring>
#include <stdexcept>
#include <string>

#include "storage/engines/nvcaracal/nvcaracal.h"

namespace nvt::nvc {

// Execution: what a transaction of serial id `sid` reads of a row.
template <class CC>
const char* NvCaracal<CC>::read(Thread& th, Sid sid, uint32_t table, uint64_t key) {
  Row* r = find(table, key);
  if (!r) return nullptr;
  return read_row(th, sid, *r);
}

template <class CC>
const char* NvCaracal<CC>::read_row(Thread& th, Sid sid, Row& r) {
  th.accesses++;
  if (r.va_epoch == epoch_ && r.va) {
    const char* v = r.va->read_below(sid, &th.waits);
    dev::read(r.va->v, sizeof(Version));  // the entry read (DRAM; all-nvmm: NVM)
    if (v == kDeleted) return nullptr;  // deleted by an earlier transaction of the epoch
    if (v) dev::read(v, r.len);  // the version: transient pool, cache pool, or NVM
    return v;
  }
  return read_committed(th, r);
}

// A version's value: the transient pool (DRAM); all-nvmm keeps every version in NVM.
template <class CC>
char* NvCaracal<CC>::new_value(Thread& th, uint32_t len) {
  if (design_ == Design::AllNvmm) return heap_alloc(th, len);
  return th.transient->alloc(len);
}

// The transaction wrote `value` (in the transient pool) as its version: visible at once
// (Caracal makes writes visible before commit; no abort can follow a write). The final
// write of the epoch also goes to the cache pool and the persistent row.
template <class CC>
void NvCaracal<CC>::publish(Thread& th, Row& r, uint32_t i, const char* value) {
  th.versions_written++;
  dev::write(&r.va->v[i], sizeof(Version));
  if (value == kDeleted) {  // a delete has no value: only its final write reaches NVM
    r.va->v[i].store(kDeleted);
    return;
  }
  // The version's value: the transient pool (DRAM), or all-nvmm's heap in NVM (not flushed:
  // nothing recovers it).
  dev::write(value, r.len);
  if (design_ == Design::Hybrid && !r.va->is_final(i)) {
    char* copy = heap_alloc(th, r.len);  // hybrid: every update also persisted to NVM
    memcpy(copy, value, r.len);
    dev::flush(copy, r.len);
  }
  r.va->v[i].store(value);
}

template <class CC>
void NvCaracal<CC>::finalize(Thread& th, Row& r, uint32_t i, const char* value) {
  if (r.va->is_final(i)) write_final(th, r, r.va->v[i].sid, value);
}

// An aborted (or unwritten) declared write: IGNORE; when it was the row's final one, the
// last version not ignored is the final write instead (none when that is the initial one).
template <class CC>
void NvCaracal<CC>::ignore(Thread& th, Row& r, uint32_t i) {
  th.ignored++;
  r.va->v[i].store(kIgnore);
  if (!r.va->is_final(i)) return;
  for (uint32_t k = i; k-- > 1;) {
    const char* v = r.va->wait_written(k);
    if (v == kIgnore) continue;
    write_final(th, r, r.va->v[k].sid, v);
    return;
  }
  if (r.born == epoch_) drop_inserted(th, r);
}

template <class CC>
char* NvCaracal<CC>::heap_alloc(Thread& th, uint32_t len) {
  uint64_t need = (len + 63) / 64 * 64;
  if (th.heap_used + need > th.heap_size) throw std::runtime_error("NVM version heap of core " + std::to_string(th.core) + " is full");
  char* p = th.heap + th.heap_used;
  th.heap_used += need;
  return p;
}

template <class CC>
const char* NvCaracal<CC>::committed_value(Thread& th, Row& r) {
  RowHeader h;
  row_read(r.prow, sizeof h);
  memcpy(&h, r.prow, sizeof h);
  int i = version_at_most(h, epoch_ - 1);
  if (i < 0) throw std::logic_error("row without a committed version");
  if (is_tombstone(h.ref[i])) return nullptr;
  const char* v = value_addr(r.prow, h.ref[i]);
  row_read(v, r.len);
  th.nvm_reads += persist_;
  return v;
}

// A read of a row nobody writes this epoch: the cached version, else the persistent row
// (cached from then on, when the cache pool has room).
template <class CC>
const char* NvCaracal<CC>::read_committed(Thread& th, Row& r) {
  if (char* c = r.cached.load(std::memory_order_acquire)) {
    th.cache_hits++;
    r.cache_epoch.store(epoch_, std::memory_order_relaxed);
    dev::read(c, r.len);
    return c;
  }
  const char* v = committed_value(th, r);
  if (!v || !cached_versions_) return v;
  char* c = cache_->alloc(th.core);
  if (!c) {
    th.cache_full++;
    return v;
  }
  memcpy(c, v, r.len);
  dev::write(c, r.len);
  char* expected = nullptr;
  if (!r.cached.compare_exchange_strong(expected, c, std::memory_order_acq_rel)) {
    cache_->free(th.core, c);
    return expected;
  }
  r.cache_epoch.store(epoch_, std::memory_order_relaxed);
  list_for_eviction(th, r);
  return c;
}

}  // namespace nvt::nvc
