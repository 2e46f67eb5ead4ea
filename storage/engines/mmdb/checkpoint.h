// MMDB's checkpoints in NVM: two slots used alternately, so a crash while one is written leaves
// the other, older one complete. A slot is valid once its header (sequence, per-log start LSNs,
// row counts, checksum) is durable; the header is invalidated before the slot is rewritten.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "storage/device/device.h"
#include "storage/device/nvm_image.h"

namespace nvt::mmdb {

constexpr uint32_t kMaxLogs = 256;
constexpr uint32_t kMaxTables = 32;

struct CheckpointTable {
  uint32_t tuple_size;
  uint64_t capacity;
};

struct CkptHeader {
  uint64_t seq;
  uint64_t checksum;
  uint32_t ntables;
  uint32_t nlogs;
  uint64_t start_lsn[kMaxLogs];
  uint64_t rows[kMaxTables];
};

struct CkptRecord {
  uint64_t key;
  uint64_t version;
  // followed by the tuple image, padded to 8
};

class CheckpointWriter {
 public:
  char* row(uint32_t table, uint64_t key, uint32_t len);
  void set_version(uint64_t v) { cur_->version = v; }

 private:
  friend class Checkpoint;
  char* slot_ = nullptr;
  std::vector<uint64_t> offset_, rows_, rec_;
  CkptRecord* cur_ = nullptr;
};

class CheckpointReader {
 public:
  bool valid = false;
  uint64_t start_lsn(uint32_t log) const { return log < h_->nlogs ? h_->start_lsn[log] : 0; }
  // Records of `table` (one per row slot the table had, in slot order).
  uint64_t rows(uint32_t table) const { return table < h_->ntables ? h_->rows[table] : 0; }
  // Visit this worker's share of every table: f(table, slot, key, version, image). The records
  // go in runs of kRun dealt to the nt workers in turn, not in nt halves: a table's first slots
  // are DRAM rows and the rest NVM rows, which cost differently to fill, so contiguous shares
  // would give one worker the DRAM and another only NVM. Runs, not strides: no two threads
  // write neighbouring rows.
  static constexpr uint64_t kRun = 2048;
  template <class F>
  void for_each(int tid, int nt, F&& f) const {
    for (uint32_t t = 0; t < h_->ntables; t++)
      for (uint64_t b = uint64_t(tid) * kRun; b < h_->rows[t]; b += uint64_t(nt) * kRun)
        for (uint64_t i = b; i < std::min(b + kRun, h_->rows[t]); i++) {
          auto* r = reinterpret_cast<const CkptRecord*>(slot_ + offset_[t] + i * rec_[t]);
          dev::read(r, rec_[t]);  // recovery's reads are charged like any other (issue 17)
          f(t, i, r->key, r->version, reinterpret_cast<const char*>(r + 1));
        }
  }

 private:
  friend class Checkpoint;
  const char* slot_ = nullptr;
  const CkptHeader* h_ = nullptr;
  std::vector<uint64_t> offset_, rec_;
};

class Checkpoint {
 public:
  Checkpoint(dev::NvmImage& nvm, const std::vector<CheckpointTable>& tables);
  CheckpointWriter begin();  // invalidates the older slot and returns a writer into it
  void commit(CheckpointWriter& w, const std::vector<uint64_t>& start_lsn);
  CheckpointReader newest() const;

 private:
  static uint64_t checksum(const CkptHeader& h);
  const CkptHeader* header(int s) const { return reinterpret_cast<const CkptHeader*>(slot_[s]); }
  char* slot_[2];
  std::vector<uint64_t> offset_, rec_;
  uint64_t next_seq_ = 1;
};

}  // namespace nvt::mmdb
