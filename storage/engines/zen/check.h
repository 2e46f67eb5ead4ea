// Zen's invariants at quiescence (after recovery, for tests and --check): every indexed
// NVM-tuple carries its own tuple ID and a committed Tx-CTS; every heap slot is exactly one of
// indexed, free, or awaiting reclamation.
#pragma once

#include "storage/engines/zen/zen.h"

namespace nvt::zen {

// Invariants at quiescence (after recovery): every indexed NVM-tuple carries its own tuple ID
// and a committed Tx-CTS; every heap slot is exactly one of indexed, free, or awaiting
// reclamation: none lost, none both in use and free.
template <class CC>
inline nlohmann::json Zen<CC>::check() const {
  Violations fail;
  std::unordered_set<const char*> live;
  for (uint32_t ti = 0; ti < tables_.size(); ti++)
    tables_[ti]->index->for_each([&](uint64_t key, uint64_t v) {
      const char* s = is_nvm_value(v) ? nvm_of(v) : reinterpret_cast<Entry*>(v)->nvm;
      const NvmTuple* n = reinterpret_cast<const NvmTuple*>(s);
      if (n->key() != key || n->table() != ti || n->empty() || n->deleted())
        fail("key " + std::to_string(key) + " indexes a slot holding another tuple or none");
      if (!live.insert(s).second) fail("slot indexed twice");
    });
  heap_->check_slots(live, threads_, fail);
  return fail.json();
}

}  // namespace nvt::zen
