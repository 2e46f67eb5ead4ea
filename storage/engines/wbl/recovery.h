// WBL's recovery: read the last durable {cp, cd} record; every version above cp never
// committed and is erased; per key the newest committed version is kept; indexes, heads and
// free lists rebuilt on every recovery thread. No redo, no undo.
#pragma once

#include "storage/engines/wbl/wbl.h"

namespace nvt::wbl {

template <class CC>
inline RecoveryReport Wbl<CC>::recover(int nthreads) {
  RecoveryReport rep;
  if (!heap_->pages().loaded())
    throw std::runtime_error("NVM image holds no complete WBL database (power failed while loading)");
  nthreads = std::max(1, nthreads);
  const LogRecord last = last_record();
  if (!last.valid()) throw std::runtime_error("NVM image holds no complete WBL log record");
  const uint64_t cp = last.cp, cd = std::max(last.cd, last.cp);
  seq_ = last.seq;
  rep.lap("read_wbl_log");

  // Scan every version: above cp is never committed (erased), else the newest per key wins.
  std::vector<uint64_t> used;
  for (uint64_t i = 0; i < heap_->pages().pages(); i++)
    if (heap_->pages().owner(i).used) used.push_back(i);
  const size_t nw = size_t(nthreads);
  std::vector<std::vector<char*>> freed(nw);
  std::vector<std::vector<Version*>> tombs(nw);  // committed tombstones: dropped below if newest
  std::vector<uint64_t> committed(nw, 0), discarded(nw, 0), max_cts(nw, 0);
  std::atomic<size_t> next{0};
  std::atomic<bool> foreign{false};
  parallel(nthreads, [&](int w) {
    // The thread's lists and counts in locals, put back at the end (neighbouring threads' share
    // cache lines: bumping them in place would bounce the lines between the cores).
    std::vector<char*> my_freed;
    std::vector<Version*> my_tombs;
    uint64_t my_committed = 0, my_discarded = 0, my_max_cts = 0;
    auto put_free = [&](zen::NvmTuple* t) { my_freed.push_back(reinterpret_cast<char*>(t)); };
    for (size_t i; (i = next.fetch_add(1)) < used.size();) {
      uint64_t p = used[i];
      uint32_t table = heap_->pages().owner(p).table;
      if (table >= tables_.size()) { foreign = true; continue; }
      uint32_t stride = slot_bytes(tables_[table]->len);
      char* base = heap_->pages().page(p);
      for (uint64_t s = 0; s + stride <= kPageBytes; s += stride) {
        Version* v = Version::at(base + s);
        dev::read(v, kVersionHeader);
        uint64_t c = v->cts();
        if (c == 0) { put_free(v->tuple()); continue; }
        if (c > cp) {  // in (cp, cd]: its transaction never committed
          v->set_cts(0);
          dev::flush(v, 8);
          put_free(v->tuple());
          my_discarded++;
          continue;
        }
        if (v->table() != table) { foreign = true; continue; }
        my_max_cts = std::max(my_max_cts, c);
        zen::update_index_gc(*tables_[table]->index, v->tuple(), put_free);
        if (v->deleted()) my_tombs.push_back(v);
        my_committed++;
      }
    }
    dev::fence();
    freed[size_t(w)] = std::move(my_freed);
    tombs[size_t(w)] = std::move(my_tombs);
    committed[size_t(w)] = my_committed, discarded[size_t(w)] = my_discarded, max_cts[size_t(w)] = my_max_cts;
  });
  if (foreign) throw std::runtime_error("wbl recovery: a version names a table its page does not belong to");
  dev::crash_point("wbl.recovery_scanned");
  rep.lap("scan_versions_rebuild_indexes");

  // Deletes: a committed tombstone wins over its key's older versions; those are erased and
  // fenced before the tombstone is freed, so no later recovery resurrects them.
  parallel(nthreads, [&](int w) {
    for (char* s : freed[size_t(w)]) {
      Version* v = Version::at(s);
      if (v->cts() == 0 || v->deleted() || v->table() >= tables_.size()) continue;
      uint64_t x = tables_[v->table()]->index->lookup(v->key());
      if (x == HashIndex::kNoValue || !Version::at(zen::nvm_of(x))->deleted()) continue;
      v->set_cts(0);
      dev::flush(v, 8);
    }
    dev::fence();
  });
  parallel(nthreads, [&](int w) {
    for (Version* v : tombs[size_t(w)]) {
      char* s = reinterpret_cast<char*>(v);
      HashIndex& index = *tables_[v->table()]->index;
      if (index.lookup(v->key()) != zen::nvm_value(s)) continue;  // a newer version won
      index.remove(v->key());
      freed[size_t(w)].push_back(s);
    }
  });
  dev::crash_point("wbl.recovery_deletes");
  rep.lap("resolve_deletes");

  // Heads: each live tuple keeps its head id; its CC metadata starts fresh (in parallel over
  // parts of each table's index). Then the ordered indexes (a thread per table) and free lists.
  struct Part { uint32_t table; uint64_t lo, hi; };
  std::vector<Part> parts;
  std::vector<std::unique_ptr<std::atomic<uint8_t>[]>> taken(tables_.size());
  for (uint32_t ti = 0; ti < tables_.size(); ti++) {
    Table& t = *tables_[ti];
    taken[ti].reset(new std::atomic<uint8_t>[t.info.capacity]());
    const uint64_t n = t.index->slot_count(), step = 1 << 16;
    for (uint64_t lo = 0; lo < n; lo += step) parts.push_back({ti, lo, std::min(n, lo + step)});
  }
  std::vector<uint64_t> tops(tables_.size() * nw, 0), rows(nw, 0);
  std::atomic<bool> shared_head{false};
  next = 0;
  parallel(nthreads, [&](int w) {
    uint64_t my_rows = 0;  // in a local, as the scan's counts
    for (size_t i; (i = next.fetch_add(1)) < parts.size();) {
      Table& t = *tables_[parts[i].table];
      uint64_t top = 0;
      t.index->for_each_in(parts[i].lo, parts[i].hi, [&](uint64_t, uint64_t x) {
        uint32_t hid = Version::at(zen::nvm_of(x))->head();
        if (hid >= t.info.capacity || taken[parts[i].table][hid].exchange(1)) { shared_head = true; return; }
        top = std::max<uint64_t>(top, uint64_t(hid) + 1);
        new (head(t, hid)) Meta();
        dev::write(head(t, hid), sizeof(Meta));
        my_rows++;
      });
      uint64_t& tw = tops[parts[i].table * nw + size_t(w)];
      tw = std::max(tw, top);
    }
    rows[size_t(w)] = my_rows;
  });
  if (shared_head) throw std::runtime_error("wbl recovery: two tuples share a head, or a head id is out of range");
  for (uint64_t r : rows) rep.rows += r;
  rep.lap("rebuild_heads");
  // Free heads below each table's top, highest first (each thread a slice, joined in order).
  for (uint32_t ti = 0; ti < tables_.size(); ti++) {
    Table& t = *tables_[ti];
    uint64_t top = 0;
    for (size_t w = 0; w < nw; w++) top = std::max(top, tops[ti * nw + w]);
    t.head_next.store(top);
    std::vector<std::vector<uint32_t>> slice(nw);
    parallel(nthreads, [&](int w) {
      for (uint64_t h = top * uint64_t(w + 1) / nw; h-- > top * uint64_t(w) / nw;)
        if (!taken[ti][h].load(std::memory_order_relaxed)) slice[size_t(w)].push_back(uint32_t(h));
    });
    t.free_heads.clear();
    for (size_t w = nw; w-- > 0;) t.free_heads.insert(t.free_heads.end(), slice[w].begin(), slice[w].end());
    t.rebuild_ordered(nthreads);
  }
  heap_->put_free(nthreads, freed);
  uint64_t top = cd;
  for (int w = 0; w < nthreads; w++) {
    recovered_versions_ += committed[size_t(w)];
    discarded_versions_ += discarded[size_t(w)];
    top = std::max(top, max_cts[size_t(w)]);
  }
  counter_.store(top + 1);
  last_c_ = top + 1;
  dev::crash_point("wbl.recovery_before_record");
  // Every version up to `top` is now committed or erased (fenced above): say so, so that the
  // next run's records start from a clean bound.
  append_record(top, top);
  cp_.store(top);
  cd_.store(top);
  recovery_cp_ = cp;
  recovery_cd_ = cd;
  rep.lap("rebuild_ordered_indexes_free_lists");
  return rep;
}

}  // namespace nvt::wbl
