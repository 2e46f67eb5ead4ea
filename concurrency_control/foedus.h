// FOEDUS's concurrency control (foedus-sigmod15 section 6.2, Algorithm 2): Silo's decentralized
// OCC (silo.h: read set of TIDs, write set locked in address order, the epoch as serialization
// point) plus a pointer set. A read that found no volatile page followed the snapshot pointer
// into immutable snapshot pages: it has no TID to validate, so the engine hands over the dual
// pointer it followed instead (RowRef::handle, RowRef::meta null), and the transaction aborts at
// pre-commit if a volatile page was installed there meanwhile (someone may have written under
// it). Only the first pointer from the volatile world into the snapshot world is recorded:
// everything below a snapshot page is stable. The epoch is FOEDUS's own (storage/engines/foedus/
// epoch.h), advanced by the engine's log writer, so commit TIDs and log epochs agree.
// The ordered tree's records carry flags in their TID words (epoch.h): a record a split moved
// (kTidMoved) fails validation whoever holds it; a delete commits as an absent record
// (kTidAbsent) with its commit TID; an insert's record was absent and being inserted until then.
// Co-designed with the FOEDUS engine's layout: only that engine admits it (kFoedus).
#pragma once
#include <algorithm>
#include <vector>

#include "concurrency_control/silo.h"
#include "storage/engines/foedus/dual_pointer.h"
#include "storage/engines/foedus/epoch.h"

namespace nvt::cc {

struct Foedus : Silo {
  static constexpr const char* name = "foedus";
  static constexpr bool kFoedus = true;

  struct Txn : Silo::Txn {
    std::vector<const foedus::DualPointer*> pointers;  // the pointer set
  };

  static void start(int) {}  // the engine's log writer advances the epoch
  static void stop() {}

  void begin(Txn& t) {
    Silo::begin(t);
    t.pointers.clear();
  }

  const char* read(Txn& t, Access& a) {
    if (a.row.meta) return Silo::read(t, a);
    // A record of a snapshot page, already copied out by the engine: immutable, no TID to watch;
    // the pointer that led into the snapshot world is watched instead.
    memcpy(a.local, a.row.data, a.len);
    auto* p = static_cast<const foedus::DualPointer*>(a.row.handle);
    if (std::find(t.pointers.begin(), t.pointers.end(), p) == t.pointers.end()) t.pointers.push_back(p);
    a.tid = 0;
    return a.local;
  }
  // Writes always reach a volatile page (the engine installs one first), so they are Silo's.
  bool write(Txn& t, Access& a) { return Silo::write(t, a); }

  bool validate(Txn& t, Access* acc, size_t n) {
    if (!validate_at(t, acc, n, foedus::g_epoch, foedus::kTidBits)) return false;
    // A record a split copied elsewhere: this copy is no longer the record (read or written).
    for (size_t i = 0; i < n; i++)
      if (acc[i].row.meta && (meta(acc[i])->word.load(std::memory_order_acquire) & foedus::kTidMoved)) {
        t.cause = AbortCause::Validation;
        return false;
      }
    // Write set locked, read set verified: now the pointer set (Algorithm 2's last check).
    for (const foedus::DualPointer* p : t.pointers)
      if (p->volatile_page.load(std::memory_order_acquire) != nullptr) {
        t.cause = AbortCause::Validation;
        return false;
      }
    // The engine logs and installs with the commit TID.
    for (size_t i = 0; i < n; i++) acc[i].version = t.commit_tid;
    return true;
  }

  // Publish and release; a delete leaves an absent record (a tombstone) with its commit TID.
  void finish(Txn& t, Access* acc, size_t n) {
    for (size_t i = 0; i < n; i++) {
      if (acc[i].held != kLocked) continue;
      Meta* m = meta(acc[i]);
      dev::write(m, sizeof *m);
      m->word.store(t.commit_tid | (acc[i].type == AccessType::Delete ? foedus::kTidAbsent : 0), std::memory_order_release);
      acc[i].held = kNone;
    }
  }
};

}  // namespace nvt::cc
