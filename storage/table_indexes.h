// A table's indexes in DRAM, as every engine keeps them: the hash index (key -> the engine's
// handle of the tuple) and, for a TableInfo::ordered table, the ordered index of its keys for
// range scans; with what a load, a committed insert or delete and a scan do to them. An engine's
// Table derives from it (info, index and ordered are its members).
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/device/dram_budget.h"
#include "storage/hash_index.h"
#include "storage/ordered_index.h"
#include "storage/schema.h"

namespace nvt {

struct TableIndexes {
  TableInfo info;
  std::unique_ptr<HashIndex> index;
  std::unique_ptr<OrderedIndex> ordered;  // only for tables with TableInfo::ordered

  // The table `ti`, its indexes' DRAM charged as index.<name> and ordered_index.<name>.
  void make_indexes(const TableInfo& ti, dev::DramBudget& dram) {
    info = ti;
    index = std::make_unique<HashIndex>(ti.capacity, dram, "index." + ti.name);
    if (ti.ordered) ordered = std::make_unique<OrderedIndex>(ti.capacity, dram, "ordered_index." + ti.name);
  }

  // A loaded tuple's key (hash index only): a key loaded twice is the loader's error.
  void index_loaded(uint64_t key, uint64_t value) {
    if (!index->insert(key, value))
      throw std::runtime_error("duplicate key " + std::to_string(key) + " in " + info.name);
  }
  // A key that became live (a load, a committed insert) enters the ordered index.
  void order_key(uint64_t key) {
    if (ordered) ordered->insert(key);
  }
  // A key that stopped being live leaves the ordered index.
  void unorder_key(uint64_t key) {
    if (ordered) ordered->remove(key);
  }
  // A committed delete whose key leaves both indexes.
  void drop_key(uint64_t key) {
    index->remove(key);
    unorder_key(key);
  }

  // Recovery: the ordered index again, from the hash index's keys whose values keep(value)
  // accepts, on `threads` threads.
  template <class Keep = bool (*)(uint64_t)>
  void rebuild_ordered(int threads, Keep&& keep = [](uint64_t) { return true; }) {
    if (ordered) ordered->rebuild_from(*index, threads, keep);
  }

  // Keys in [lo, hi] from the ordered index (at most `limit`, descending if `reverse`).
  void scan(uint64_t lo, uint64_t hi, size_t limit, std::vector<uint64_t>& out, bool reverse) const {
    if (!ordered) throw std::logic_error("scan on table " + info.name + " without an ordered index");
    ordered->range(lo, hi, limit, out, reverse);
  }
};

}  // namespace nvt
