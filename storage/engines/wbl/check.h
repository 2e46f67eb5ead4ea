// WBL's invariants at quiescence (after recovery, for tests and --check).
#pragma once

#include "storage/engines/wbl/wbl.h"

namespace nvt::wbl {

// Invariants at quiescence (after recovery): every indexed version carries its own tuple ID, a
// committed timestamp at or below the durable cp and a head of its own; every heap slot is
// exactly one of indexed, free, awaiting reclamation or a held tombstone.
template <class CC>
inline nlohmann::json Wbl<CC>::check() const {
  Violations fail;
  std::unordered_set<const char*> live;
  const uint64_t cp = cp_.load();
  for (uint32_t ti = 0; ti < tables_.size(); ti++) {
    std::unordered_set<uint32_t> heads;
    tables_[ti]->index->for_each([&](uint64_t key, uint64_t v) {
      const char* s = zen::is_nvm_value(v) ? zen::nvm_of(v) : reinterpret_cast<Entry*>(v)->nvm;
      if (!s) return;  // an insert not committed
      const Version* x = reinterpret_cast<const Version*>(s);
      if (x->key() != key || x->table() != ti || x->cts() == 0 || x->deleted())
        fail("key " + std::to_string(key) + " indexes a slot holding another tuple or none");
      if (x->cts() > cp) fail("key " + std::to_string(key) + " indexes a version above cp");
      if (!heads.insert(x->head()).second) fail("key " + std::to_string(key) + " shares its head");
      if (!live.insert(s).second) fail("slot indexed twice");
    });
  }
  heap_->check_slots(live, threads_, fail);
  return fail.json();
}

}  // namespace nvt::wbl
