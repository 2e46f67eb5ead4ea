// NVCaracal's initialization phase of an epoch (nvcaracal-eurosys23 section 4.1, Algorithm 1;
// Caracal's, section 3.1): each core resets its transient pool, frees the cached versions
// replaced last epoch, runs major GC and eviction; then the insert and append steps give every
// declared write a PENDING version in its row's version array, each array sorted by serial id.
#pragma once
#include <immintrin.h>
#include <stdexcept>
#include <string>

#include "storage/engines/nvcaracal/nvcaracal.h"

namespace nvt::nvc {

// Initialization: transient pool reset, replaced cached versions freed, major GC, eviction.
template <class CC>
void NvCaracal<CC>::init_step(Thread& th) {
  th.transient->reset();
  th.heap_used = 0;
  th.created.clear();
  for (char* p : th.retired) cache_->free(th.core, p);
  th.retired.clear();
  for (Row* r : th.unindex) index_[r->table]->remove(r->key);
  th.unindex.clear();
  major_gc(th);
  evict_cache(th);
  // From here (the insert step on) the pools may hand out the blocks freed up to now: those
  // of committed epochs and this epoch's major GC, durable already.
  if (val_pool_[size_t(th.core)].capacity()) val_pool_[size_t(th.core)].begin_execution();
  row_pool_[size_t(th.core)].begin_execution();
}

// Insert step (section 3.1.2): a new row for serial id `sid`, in this core's row pool, with a
// version array {absent, PENDING}. Nothing reaches NVM until the row's final write (section
// 4: no transient data or cached version for it): a crash before the epoch commits leaves
// its block past the restored bump offset, or on the restored free list.
template <class CC>
auto NvCaracal<CC>::insert(Thread& th, Sid sid, uint32_t table, uint64_t key) -> Row* {
  if (find(table, key)) throw std::runtime_error("insert of key " + std::to_string(key) + " already in " + tables_[table].name);
  uint64_t ref = row_pool_[size_t(th.core)].alloc();
  Row* r = add_row(table, key, row_addr(ref), tables_[table].schema.tuple_size());
  r->born = epoch_;
  VersionArray* va = new_array(th, 4);
  va->n = 2;
  va->v[0].sid = 0;
  va->v[0].value = nullptr;  // no version before the inserter's
  va->v[1].sid = sid;
  va->v[1].value = kPending;
  r->va = va;
  r->va_epoch = epoch_;
  th.created.push_back(r);
  return r;
}

// Append step: a PENDING version for serial id `sid` in the row's version array.
template <class CC>
auto NvCaracal<CC>::append(Thread& th, Sid sid, uint32_t table, uint64_t key) -> Row* {
  Row* r = find(table, key);
  if (!r) throw std::runtime_error("write set names a missing key " + std::to_string(key) + " of table " + tables_[table].name);
  while (r->lock.test_and_set(std::memory_order_acquire)) _mm_pause();
  VersionArray* va = r->va;
  if (r->va_epoch != epoch_ || !va) {
    va = new_array(th, 8);
    va->n = 1;
    va->v[0].sid = 0;
    va->v[0].value = initial_value(th, *r);
    dev::write(va, VersionArray::bytes_for(1));
    r->va = va;
    r->va_epoch = epoch_;
    th.created.push_back(r);
  } else if (va->n == va->cap) {
    VersionArray* bigger = new_array(th, va->cap * 2);
    bigger->n = va->n;
    for (uint32_t i = 0; i < va->n; i++) {
      bigger->v[i] = va->v[i];
    }
    dev::read(va, VersionArray::bytes_for(va->n));
    dev::write(bigger, VersionArray::bytes_for(va->n));
    r->va = va = bigger;
  }
  va->v[va->n].sid = sid;
  va->v[va->n].value = kPending;
  dev::update(&va->v[va->n], sizeof(Version));
  va->n++;
  r->lock.clear(std::memory_order_release);
  return r;
}

// After every core appended: each sorts the arrays it created, by serial id.
template <class CC>
void NvCaracal<CC>::sort_step(Thread& th) {
  for (Row* r : th.created) {
    r->va->sort();
    dev::update(r->va, VersionArray::bytes_for(r->va->n));
  }
}

// In the transient pool (DRAM); all-nvmm's in its NVM heap.
template <class CC>
VersionArray* NvCaracal<CC>::new_array(Thread& th, uint32_t cap) {
  uint64_t bytes = VersionArray::bytes_for(cap);
  auto* va = reinterpret_cast<VersionArray*>(design_ == Design::AllNvmm ? heap_alloc(th, uint32_t(bytes)) : th.transient->alloc(bytes));
  va->cap = cap;
  va->n = 0;
  return va;
}

// The row's value before this epoch: its cached version, else a copy of the persistent row's
// checkpointed version in the transient pool (the final write may reuse that slot later).
template <class CC>
const char* NvCaracal<CC>::initial_value(Thread& th, Row& r) {
  // all-nvmm: the persistent row's checkpointed version itself (a final write goes to the
  // other slot or a new block, so it stays intact through the epoch).
  if (design_ == Design::AllNvmm) return committed_value(th, r);
  if (char* c = r.cached.load(std::memory_order_acquire)) {
    th.cache_hits++;
    dev::read(c, r.len);
    return c;
  }
  const char* v = committed_value(th, r);
  if (!v) return nullptr;  // deleted (recovery's rows before the first major GC)
  char* copy = th.transient->alloc(r.len);
  memcpy(copy, v, r.len);
  dev::write(copy, r.len);
  return copy;
}

}  // namespace nvt::nvc
