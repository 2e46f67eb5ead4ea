// An array storage (array_storage.h) as transactions and checkers read it: follow the dual
// pointers from the volatile root (foedus-sigmod15 sections 4-5); a read that meets a pointer
// with no volatile page continues in the snapshot world, a write installs volatile pages down
// to the leaf instead.
#pragma once
#include <cstdint>
#include <cstring>

#include "storage/access.h"
#include "storage/device/device.h"
#include "storage/engines/foedus/array_storage.h"
#include "storage/engines/foedus/dual_pages.h"
#include "storage/schema.h"

namespace nvt::foedus {

struct ArrayStorage {
  ArrayStorage(const TableInfo& ti, const ArrayShape& s) : info(ti), shape(s) {}
  TableInfo info;
  ArrayShape shape;
  Page* root = nullptr;  // always volatile
};

// A read of a snapshot record below dual pointer `d` (at `level`): a copy in the worker's
// copy space, and the CC watches `d` (its pointer set).
inline bool array_snapshot_read(Worker& th, DualPages& pages, ArrayStorage& s, DualPointer& d, int level,
                                uint64_t leaf, uint64_t key, RowRef& ref) {
  const ArrayShape& sh = s.shape;
  SnapshotPtr sp = d.snapshot_page.load(std::memory_order_acquire);
  char* copy = th.copy_space(sh.g.len);
  for (;; level--) {
    bool leaf_level = level == 0;
    SnapshotPtr next = 0;
    pages.with_snapshot_page(th, sp, [&](const Page* p) {
      if (leaf_level) {
        memcpy(copy, const_cast<Page*>(p)->payload(sh.slot_in_leaf(key), sh.g.slot), sh.g.len);
      } else {
        next = const_cast<Page*>(p)->child(sh.child_slot(level, leaf))->snapshot_page.load(std::memory_order_relaxed);
      }
    });
    if (leaf_level) break;
    sp = next;
  }
  th.snapshot_reads++;
  ref = RowRef{copy, nullptr, &d};
  return true;
}

inline bool array_lookup(Worker& th, DualPages& pages, ArrayStorage& s, uint64_t key, RowRef& ref, bool for_write) {
  const ArrayShape& sh = s.shape;
  if (key >= sh.capacity) return false;
  uint64_t leaf = sh.leaf_of(key);
  Page* p = s.root;
  for (int level = sh.root_level(); level > 0; level--) {
    DualPointer& d = *p->child(sh.child_slot(level, leaf));
    dev::read(&d, sizeof d);
    Page* v = d.volatile_page.load(std::memory_order_acquire);
    if (!v) {
      if (!for_write) return array_snapshot_read(th, pages, s, d, level - 1, leaf, key, ref);
      if (!(v = pages.install(th, d))) {
        pages.refuse(th);
        return false;
      }
    }
    p = v;
  }
  uint64_t slot = sh.slot_in_leaf(key);
  ref = RowRef{p->payload(slot, sh.g.slot), p->tid(slot, sh.g.slot), nullptr};
  th.volatile_reads++;
  return true;
}

// The current image of a record (checkers, at quiescence): volatile if installed, else the
// snapshot page read directly in NVM. version = its TID.
inline bool array_read_current(const DualPages& pages, const ArrayStorage& s, uint64_t key, char* out,
                               uint64_t& version) {
  const ArrayShape& sh = s.shape;
  if (key >= sh.capacity) return false;
  uint64_t leaf = sh.leaf_of(key), slot = sh.slot_in_leaf(key);
  Page* p = s.root;
  int level = sh.root_level();
  for (; level > 0; level--) {
    DualPointer& d = *p->child(sh.child_slot(level, leaf));
    Page* v = d.volatile_page.load();
    if (!v) break;
    p = v;
  }
  if (level > 0) {  // snapshot world from here down
    SnapshotPtr sp = p->child(sh.child_slot(level, leaf))->snapshot_page.load();
    for (level--;; level--) {
      p = const_cast<Page*>(pages.read_snapshot_page(sp));
      if (level == 0) break;
      sp = p->child(sh.child_slot(level, leaf))->snapshot_page.load();
    }
  }
  memcpy(out, p->payload(slot, sh.g.slot), sh.g.len);
  version = p->tid(slot, sh.g.slot)->load() & ~(1ull << 63);
  return true;
}

}  // namespace nvt::foedus
