// Software prefetch of a transaction's known requests. A YCSB transaction knows its 16 keys
// before it runs; touching them one after another costs two dependent cache misses each (index
// slot, then tuple). Prefetching every index slot first, then every tuple the slots point to,
// overlaps those misses. Charges nothing to the device model: the accesses themselves are
// charged when the transaction makes them, exactly as without prefetch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

#include "storage/hash_index.h"

namespace nvt {

inline void prefetch_lines(const void* p, size_t len) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < len; off += 64) __builtin_prefetch(c + off);
}

// `target(value)` maps an index value to the {address, bytes} a lookup of it will touch.
template <class Target>
void prefetch_batch(const HashIndex& idx, const uint64_t* keys, size_t n, Target&& target) {
  for (size_t i = 0; i < n; i++) idx.prefetch(keys[i]);
  for (size_t i = 0; i < n; i++) {
    uint64_t v = idx.lookup(keys[i]);
    if (v == HashIndex::kNoValue) continue;
    auto [p, len] = target(v);
    prefetch_lines(p, len);
  }
}

}  // namespace nvt
