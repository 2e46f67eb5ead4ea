// NVCaracal's checkers: a row's committed value, an order-independent digest of all of them,
// and the invariants between epochs (check()).
#pragma once
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "storage/engines/nvcaracal/nvcaracal.h"

namespace nvt::nvc {

// The row's value as of the last committed epoch (after a run or recovery: the current one).
template <class CC>
bool NvCaracal<CC>::read_current(uint32_t table, uint64_t key, char* out, uint64_t& version) {
  Row* r = find(table, key);
  if (!r) return false;
  RowHeader h;
  memcpy(&h, r->prow, sizeof h);
  int i = version_at_most(h, ~0ull >> 32);
  if (i < 0 || is_tombstone(h.ref[i])) return false;
  dev::read(r->prow, sizeof h);
  const char* v = value_addr(r->prow, h.ref[i]);
  dev::read(v, h.len);
  memcpy(out, v, h.len);
  version = h.sid[i];
  return true;
}

template <class CC>
template <class F>
void NvCaracal<CC>::for_each_row(uint32_t table, F&& f) {
  uint64_t n = slots_[table]->load();
  std::vector<char> buf(tables_[table].schema.tuple_size());
  for (uint64_t i = 0; i < n; i++) {
    uint64_t ver;
    if (read_current(table, rows_[table].first[i].key, buf.data(), ver)) f(rows_[table].first[i].key, buf.data());
  }
}

// An order-independent digest of every row's committed value (key, bytes): equal digests
// after the same epochs, whatever the thread count or the crashes in between.
template <class CC>
uint64_t NvCaracal<CC>::state_checksum() {
  uint64_t sum = 0;
  for (uint32_t t = 0; t < tables_.size(); t++)
    for_each_row(t, [&](uint64_t key, const char* v) {
      uint64_t h = 0xcbf29ce484222325ull ^ (key * 0x9E3779B97F4A7C15ull) ^ t;
      for (uint32_t i = 0; i < tables_[t].schema.tuple_size(); i++) h = (h ^ uint8_t(v[i])) * 0x100000001b3ull;
      sum += h;
    });
  return sum;
}

// Invariants between epochs (after a run, after recovery): every indexed row's persistent
// header names its table, key and length, is live, has a version of a committed epoch and
// none after it, and its current version lies in its row or a value block in use; no row or
// current value block is on a free list or shared by two rows; free lists hold no block
// twice; this epoch's version arrays are sorted, within their size, nothing left PENDING.
template <class CC>
nlohmann::json NvCaracal<CC>::check() {
  nlohmann::json ex = nlohmann::json::array();
  uint64_t violations = 0;
  auto bad = [&](const std::string& what) {
    if (ex.size() < 10) ex.push_back(what);
    violations++;
  };
  const uint64_t committed = control_->committed.magic == Control::kMagic ? control_->committed.value : 0;
  std::unordered_set<uint64_t> free_rows, free_values, used_rows, used_values;
  auto gather = [&](const std::vector<BlockPool>& pools, std::unordered_set<uint64_t>& into, const char* what) {
    for (auto& p : pools)
      if (p.capacity())
        for (uint64_t b : p.free_list())
          if (!into.insert(b).second) bad(std::string(what) + " free list holds block " + std::to_string(b) + " twice");
  };
  gather(row_pool_, free_rows, "row pool");
  gather(val_pool_, free_values, "value pool");
  std::unordered_set<const Row*> dropped;  // inserted and deleted in the last epoch: leave the index next epoch
  for (auto& th : th_) dropped.insert(th.unindex.begin(), th.unindex.end());
  for (uint32_t t = 0; t < tables_.size(); t++) {
    uint64_t n = slots_[t]->load();
    for (uint64_t i = 0; i < n; i++) {
      Row& r = rows_[t].first[i];
      if (find(t, r.key) != &r || dropped.count(&r)) continue;  // not (or no longer) indexed
      const std::string name = tables_[t].name + " key " + std::to_string(r.key);
      if (r.va_epoch == epoch_ && r.va) {
        const VersionArray& va = *r.va;
        if (va.n > va.cap || va.n == 0) bad(name + ": version array of " + std::to_string(va.n) + " entries, room for " + std::to_string(va.cap));
        for (uint32_t k = 1; k < va.n && k < va.cap; k++) {
          if (va.v[k].load() == kPending) bad(name + ": a version left PENDING after the epoch");
          if (k > 1 && !(va.v[k - 1].sid < va.v[k].sid)) bad(name + ": version array out of serial order");
        }
      } else if (r.va_epoch > epoch_) {
        bad(name + ": version array of a later epoch");
      }
      RowHeader h;
      dev::read(r.prow, sizeof h);
      memcpy(&h, r.prow, sizeof h);
      const uint64_t ref = row_ref(r.prow);
      if (!used_rows.insert(ref).second) bad(name + ": its persistent row is another row's too");
      if (free_rows.count(ref)) bad(name + ": its persistent row is on a free list");
      if (h.live != kLive || h.table != t || h.key != r.key || h.len != r.len) {
        bad(name + ": persistent header not live or names another row");
        continue;
      }
      for (int k = 0; k < 2; k++)
        if (h.sid[k] && epoch_of(h.sid[k]) > committed) bad(name + ": a version of epoch " + std::to_string(epoch_of(h.sid[k])) + " after the committed " + std::to_string(committed));
      int cur = version_at_most(h, committed);
      if (cur < 0) {
        bad(name + ": no committed version");
        continue;
      }
      uint64_t v = h.ref[cur];
      if (is_tombstone(v)) continue;  // deleted: major GC frees it
      if (is_inline(v)) {
        if (v != geo_.inline_slot(0) && v != geo_.inline_slot(1)) bad(name + ": inline version outside the row's two slots");
      } else if (v == 0 || ((v - 1) >> kRefCoreShift) >= val_pool_.size() ||
                 ((v - 1) & ((1ull << kRefCoreShift) - 1)) >= val_pool_[(v - 1) >> kRefCoreShift].bump()) {
        bad(name + ": its value names no block in use");
      } else {
        if (free_values.count(v - 1)) bad(name + ": its value block is on a free list");
        if (!used_values.insert(v - 1).second) bad(name + ": its value block is another row's too");
      }
    }
  }
  return {{"violations", violations}, {"examples", ex}, {"rows_checked", used_rows.size()}};
}

}  // namespace nvt::nvc
