// Crash recovery without logs (zen-vldb21 section 3.3.3, Algorithm 2): in a fresh process, every heap
// region's NVM-tuples are scanned on every recovery thread; the newest committed version of
// each tuple is indexed, the rest become free slots. No log is read: the LP bits and Tx-CTS
// decide which versions committed.
#pragma once

#include "storage/engines/zen/zen.h"

namespace nvt::zen {

// Algorithm 2 on every recovery thread, each step split into equal shares: regions' pages in
// shares of kSharePages (a region's shares scanned side by side, merged for its ts-commit),
// index and free-slot lists in slices. Only per-region and per-share work stays serial.
template <class CC>
inline RecoveryReport Zen<CC>::recover(int nthreads) {
  RecoveryReport rep;
  if (!heap_->pages().loaded())
    throw std::runtime_error("NVM image holds no complete Zen database (power failed while loading)");
  const size_t n = size_t(std::max(1, nthreads)), nregions = heap_->regions();
  // Each region's pages, tables in persist order so LP tuples are met early.
  std::vector<std::vector<uint64_t>> rpages(nregions);
  {
    std::vector<std::vector<std::vector<uint64_t>>> part(n, std::vector<std::vector<uint64_t>>(nregions));
    const uint64_t npages = heap_->pages().pages();
    parallel(int(n), [&](int w) {
      for (uint64_t i = npages * uint64_t(w) / n; i < npages * uint64_t(w + 1) / n; i++)
        if (heap_->pages().owner(i).used) part[size_t(w)][heap_->pages().owner(i).region].push_back(i);
    });
    parallel(int(n), [&](int w) {
      for (size_t r = size_t(w); r < nregions; r += n) {
        for (auto& p : part) rpages[r].insert(rpages[r].end(), p[r].begin(), p[r].end());
        std::stable_sort(rpages[r].begin(), rpages[r].end(), [&](uint64_t a, uint64_t b) {
          return tables_[heap_->pages().owner(a).table]->rank < tables_[heap_->pages().owner(b).table]->rank;
        });
      }
    });
  }
  rep.lap("read_page_table");

  // Lines 8-25 over (region, share) items taken in turn by every thread.
  std::vector<std::vector<ScanShare>> shares(nregions);
  std::vector<std::pair<size_t, size_t>> items;
  for (size_t r = 0; r < nregions; r++) {
    shares[r].resize((rpages[r].size() + kSharePages - 1) / kSharePages);
    for (size_t i = 0; i < shares[r].size(); i++) items.push_back({r, i});
  }
  std::vector<std::vector<char*>> freed(n);
  std::vector<std::vector<NvmTuple*>> tombs(n);  // committed tombstones: dropped below if newest
  std::vector<uint64_t> keys(n);                 // keys entered into the indexes
  auto on_items = [&](auto&& f) {
    std::atomic<size_t> next{0};
    parallel(int(n), [&](int w) {
      // The thread's lists and count in locals, put back at the end: neighbouring threads'
      // list headers and counts share cache lines, which bumping them in place would bounce.
      std::vector<char*> my_freed = std::move(freed[size_t(w)]);
      std::vector<NvmTuple*> my_tombs = std::move(tombs[size_t(w)]);
      uint64_t my_keys = 0;
      auto put_free = [&](NvmTuple* t) { my_freed.push_back(reinterpret_cast<char*>(t)); };
      auto index_gc = [&](NvmTuple* t) {
        if (t->table() >= tables_.size() || t->table() != heap_->pages().table_of(t))
          throw std::runtime_error("zen recovery: NVM-tuple names a table its page does not belong to");
        my_keys += update_index_gc(*tables_[t->table()]->index, t, put_free);
        if (t->deleted()) my_tombs.push_back(t);
      };
      for (size_t k; (k = next.fetch_add(1)) < items.size();) f(items[k].first, items[k].second, index_gc, put_free);
      dev::fence();  // line 25 (the discarded slots' flushes)
      freed[size_t(w)] = std::move(my_freed);
      tombs[size_t(w)] = std::move(my_tombs);
      keys[size_t(w)] += my_keys;
    });
  };
  on_items([&](size_t r, size_t i, auto& index_gc, auto& put_free) {
    auto each = [&](auto&& f) {
      for (size_t j = i * kSharePages; j < std::min(rpages[r].size(), (i + 1) * kSharePages); j++) {
        uint64_t p = rpages[r][j];
        uint32_t stride = slot_bytes(tables_[heap_->pages().owner(p).table]->len);
        char* base = heap_->pages().page(p);
        for (uint64_t s = 0; s + stride <= kPageBytes; s += stride) f(base + s);
      }
    };
    scan_share(shares[r][i], each, index_gc, put_free);
  });
  std::vector<uint64_t> ts_commit(nregions);
  for (size_t r = 0; r < nregions; r++) ts_commit[r] = merge_shares(shares[r]).ts_commit;
  on_items([&](size_t r, size_t i, auto& index_gc, auto& put_free) {
    resolve_pending(shares[r][i], ts_commit[r], index_gc, put_free);
  });
  rep.lap("scan_regions_rebuild_indexes");

  uint64_t max_cts = kLoadCts;
  std::unordered_set<char*> lp_slots;
  for (size_t r = 0; r < nregions; r++) {
    ScanResult m = merge_shares(shares[r]);
    max_cts = std::max(max_cts, m.max_cts);
    rep.replayed += m.committed;
    if (char* s = m.lp_slot) {
      heap_->region(r).set_lp(heap_->pages().table_of(s), s);
      lp_slots.insert(s);
    }
  }
  // Deletes: every older version of a key whose newest version is a tombstone is invalidated
  // (Tx-CTS 0) and fenced before the tombstone is freed, so no later recovery resurrects it.
  // A region's LP tuple must keep its Tx-CTS (it sets ts-commit): its key's tombstone stays.
  std::vector<std::vector<NvmTuple*>> keep(n);
  parallel(int(n), [&](int w) {
    for (char* s : freed[size_t(w)]) {
      NvmTuple* t = NvmTuple::at(s);
      if (t->empty() || t->deleted() || t->table() >= tables_.size()) continue;
      uint64_t v = tables_[t->table()]->index->lookup(t->key());
      if (v == HashIndex::kNoValue || !is_nvm_value(v) || !NvmTuple::at(nvm_of(v))->deleted()) continue;
      if (lp_slots.count(s)) { keep[size_t(w)].push_back(NvmTuple::at(nvm_of(v))); continue; }
      t->set_cts(0, false);
      dev::flush(t, kHeaderBytes);
    }
    dev::fence();
  });
  rep.lap("invalidate_deleted");

  // The newest versions that are tombstones leave the index (those of LP keys wait as
  // garbage); what stays are the rows.
  std::unordered_set<NvmTuple*> held;
  for (auto& k : keep) held.insert(k.begin(), k.end());
  std::vector<std::vector<Garbage>> waiting(n);
  std::vector<uint64_t> dropped(n);
  parallel(int(n), [&](int w) {
    for (NvmTuple* t : tombs[size_t(w)]) {
      HashIndex& index = *tables_[t->table()]->index;
      char* s = reinterpret_cast<char*>(t);
      if (index.lookup(t->key()) != nvm_value(s)) continue;  // a newer version won
      index.remove(t->key());
      dropped[size_t(w)]++;
      if (held.count(t)) waiting[size_t(w)].push_back({s, t->table(), t->cts()});
      else freed[size_t(w)].push_back(s);
    }
  });
  for (size_t w = 0; w < n; w++) {
    rep.rows += keys[w] - dropped[w];
    threads_[0].tombstones.insert(threads_[0].tombstones.end(), waiting[w].begin(), waiting[w].end());
  }
  rep.lap("drop_tombstones");

  for (auto& t : tables_) t->rebuild_ordered(int(n));
  rep.lap("rebuild_ordered_indexes");

  heap_->put_free(int(n), freed);
  counter_.store(max_cts + 1);
  rep.lap("rebuild_free_lists");
  return rep;
}

}  // namespace nvt::zen
