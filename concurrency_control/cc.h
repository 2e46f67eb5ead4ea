// The concurrency-control contract. A CC method is a type with:
//   static constexpr const char* name;
//   struct Meta;   per-tuple metadata; the engine stores it where its design says and charges
//                  it through the device model (the CC calls dev::read/update on it)
//   struct Txn;    per-transaction state in DRAM (holds `cause` on abort)
//   static void start(int threads) / stop();   process-wide services (e.g. Silo's epochs)
//   void begin(Txn&);
//   const char* read(Txn&, Access&);     acquire/observe; returns the image the workload reads
//                                        (the tuple or a private copy), nullptr to abort
//   bool write(Txn&, Access&);           acquire for writing and fill a.local with the current
//                                        image (the workload then edits a.local); false aborts
//   bool upgrade(Txn&, Access&);         a read access becomes a write
//   bool validate(Txn&, Access*, size_t) commit phase 1: after it, the engine persists and
//                                        installs the writes; false aborts
//   void finish(Txn&, Access*, size_t)   commit phase 2: publish and release
//   void abort(Txn&, Access*, size_t)    release everything
// The transaction manager (system/txn_manager.h) calls these; no virtual calls anywhere.
#pragma once
#include <cstring>

#include "storage/access.h"
#include "storage/device/device.h"

namespace nvt::cc {

// Copy a tuple image into a private buffer, charged as a read of the tuple.
inline void copy_tuple(char* dst, const char* src, uint32_t len) {
  dev::read(src, len);
  memcpy(dst, src, len);
}

}  // namespace nvt::cc
