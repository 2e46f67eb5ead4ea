// FOEDUS's fixed-size pages (foedus-sigmod15 sections 4-5, Appendix D.1). Volatile pages (DRAM)
// and snapshot pages (NVM) have one layout, so installing a volatile page is one copy of the
// snapshot page and the gleaner writes snapshot pages as it would copy volatile ones:
//   header (64 B) then either
//   interior: DualPointer[fanout]; in a snapshot page every volatile half is null
//   leaf:     records of [TID word (8 B: the CC's Meta, lock bit clear in snapshots)][payload]
// Records live in the page with their TID (D.1): no per-record allocation, no indirection.
#pragma once
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "storage/engines/foedus/dual_pointer.h"

namespace nvt::foedus {

struct PageHeader {
  uint32_t storage;     // table id
  uint16_t level;       // 0 = leaf
  uint16_t pad = 0;
  uint64_t index;       // position among the pages of its level (its key range)
  uint64_t snapshot_epoch = 0;  // snapshot pages: the epoch the snapshot covers
  uint64_t reserved[5] = {};
};
static_assert(sizeof(PageHeader) == 64);

struct Page {
  PageHeader hdr;
  char* body() { return reinterpret_cast<char*>(this + 1); }
  const char* body() const { return reinterpret_cast<const char*>(this + 1); }
  DualPointer* child(uint64_t i) { return reinterpret_cast<DualPointer*>(body()) + i; }
  // Leaf records: TID word then payload, `slot` bytes each.
  std::atomic<uint64_t>* tid(uint64_t i, uint32_t slot) {
    return reinterpret_cast<std::atomic<uint64_t>*>(body() + i * slot);
  }
  char* payload(uint64_t i, uint32_t slot) { return body() + i * slot + 8; }
};

// Page geometry for one table at one page size.
struct Geometry {
  uint32_t page_size = 4096;
  uint32_t len = 0;        // tuple bytes
  uint32_t slot = 0;       // record: TID + payload, 8 B aligned
  uint64_t per_leaf = 0;   // records per leaf page
  uint64_t fanout = 0;     // dual pointers per interior page

  static bool power_of_two(uint64_t x) { return x && !(x & (x - 1)); }
  Geometry(uint32_t page, uint32_t tuple, const std::string& table) : page_size(page), len(tuple) {
    if (!power_of_two(page) || page < 256)
      throw std::invalid_argument("--page-size " + std::to_string(page) + " is not a power of two of at least 256 B");
    slot = 8 + (tuple + 7) / 8 * 8;
    if (sizeof(PageHeader) + slot > page)
      throw std::invalid_argument("--page-size " + std::to_string(page) + " cannot hold one record of table " + table +
                                  " (" + std::to_string(slot) + " B with its TID, after a " +
                                  std::to_string(sizeof(PageHeader)) + " B page header)");
    per_leaf = (page - sizeof(PageHeader)) / slot;
    fanout = (page - sizeof(PageHeader)) / sizeof(DualPointer);
  }
};

}  // namespace nvt::foedus
