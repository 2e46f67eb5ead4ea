// NVCaracal's counters and pool sizes (Figure 8: transient, cache, persistent rows and values;
// the NVM side by structure).
#pragma once
#include <cstdint>

#include "storage/engines/nvcaracal/nvcaracal.h"

namespace nvt::nvc {

template <class CC>
auto NvCaracal<CC>::totals() const -> Totals {
  Totals s;
  for (auto& t : th_) {
    s.versions_written += t.versions_written;
    s.final_writes += t.final_writes;
    s.ignored += t.ignored;
    s.waits += t.waits;
    s.minor_gc += t.minor_gc;
    s.major_gc += t.major_gc;
    s.evicted += t.evicted;
    s.cache_full += t.cache_full;
    s.cache_hits += t.cache_hits;
    s.nvm_reads += t.nvm_reads;
    s.accesses += t.accesses;
  }
  return s;
}

// Pool sizes (Figure 8): transient (peak of an epoch), cache, persistent rows and values.
template <class CC>
nlohmann::json NvCaracal<CC>::pool_bytes() const {
  uint64_t transient = 0, rows = 0, values = 0, reserved = 0;
  for (auto& t : th_) transient += t.transient->peak();
  for (auto& p : row_pool_) rows += p.in_use() * geo_.row_bytes, reserved += p.bump() * geo_.row_bytes;
  for (auto& p : val_pool_) values += p.in_use() * block_bytes_;
  // persistent_rows: rows in use; _reserved: the row pools' bump offsets (what free lists
  // may hand out again included).
  return {{"transient", transient}, {"cache", cache_->bytes_in_use()}, {"persistent_rows", rows},
          {"persistent_rows_reserved", reserved}, {"persistent_values", values}};
}

// NVM in use by structure (Figure 8's NVMM side; the DRAM side is the budget's breakdown):
// persistent rows and values in use, the input logs and version heaps as sized.
template <class CC>
nlohmann::json NvCaracal<CC>::nvm_breakdown() const {
  uint64_t rows = 0, values = 0, logs = 0, heaps = 0;
  for (auto& p : row_pool_) rows += p.in_use() * geo_.row_bytes;
  for (auto& p : val_pool_) values += p.in_use() * block_bytes_;
  for (auto& l : log_) logs += l.bytes();
  for (auto& t : th_) heaps += t.heap_size;
  nlohmann::json j = {{"nvcaracal persistent rows", rows}, {"nvcaracal persistent values", values}};
  if (input_log_) j["nvcaracal input logs"] = logs;
  if (heaps) j["nvcaracal version heaps"] = heaps;
  return j;
}

}  // namespace nvt::nvc
