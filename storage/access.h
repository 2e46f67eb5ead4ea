// What a transaction touched: the unit the transaction manager, the engine and the CC method
// pass between them. One per distinct tuple a transaction reads or writes.
#pragma once
#include <cstdint>

namespace nvt {

enum class AccessType : uint8_t { Read, Write, Insert, Delete };

// Why a transaction aborted; reported per cause in the output.
enum class AbortCause : uint8_t {
  None, ReadConflict, WriteConflict, Validation, Deadlock, Wound, User,
  NvmSpace,  // the engine had no NVM space for the writes yet (reclamation held back)
  DramSpace, // the engine had no DRAM page for the write yet (FOEDUS: volatile pool full until
             // the gleaner drops pages)
  kCount
};
const char* cause_name(AbortCause c);

// An engine's reference to a tuple: its current image and its CC metadata, wherever the
// engine's design keeps them (DRAM, NVM-volatile or NVM-persistent).
struct RowRef {
  char* data = nullptr;
  void* meta = nullptr;
  void* handle = nullptr;  // engine-private (e.g. MMDB row header, Zen Met-Cache entry)
};

struct Access {
  AccessType type;
  uint32_t table;
  uint64_t key;
  uint32_t len;          // tuple size
  RowRef row;
  const char* image = nullptr;  // what read() handed the workload
  char* local = nullptr; // private image: the after-image of a write, the copy of an OCC read
  uint64_t tid = 0;      // CC: timestamp/TID observed when read
  uint64_t version = 0;  // engine: version installed at commit
  uint8_t held = 0;      // CC: which lock this transaction holds on the tuple
};

}  // namespace nvt
