#include "storage/engines/mmdb/checkpoint.h"

#include <cstring>
#include <stdexcept>

#include "storage/device/device.h"
#include "storage/device/power_fail.h"

namespace nvt::mmdb {

namespace {
constexpr uint64_t kHeaderArea = 64 * 1024;
static_assert(sizeof(CkptHeader) <= kHeaderArea);
}  // namespace

Checkpoint::Checkpoint(dev::NvmImage& nvm, const std::vector<CheckpointTable>& tables) {
  if (tables.size() > kMaxTables) throw std::invalid_argument("too many tables to checkpoint");
  uint64_t off = kHeaderArea;
  for (auto& t : tables) {
    uint64_t rec = sizeof(CkptRecord) + (t.tuple_size + 7) / 8 * 8;
    offset_.push_back(off);
    rec_.push_back(rec);
    off += rec * t.capacity;
  }
  for (int s = 0; s < 2; s++)
    slot_[s] = nvm.region("mmdb.ckpt." + std::to_string(s), off, dev::RegionKind::Persistent).base;
  CheckpointReader r = newest();
  if (r.valid) next_seq_ = r.h_->seq + 1;
}

uint64_t Checkpoint::checksum(const CkptHeader& h) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  const auto* w = reinterpret_cast<const uint64_t*>(&h);
  for (size_t i = 2; i < sizeof h / 8; i++) x = (x ^ w[i]) * 0x100000001b3ull;  // skip seq, sum
  return (x ^ h.seq) | 1;
}

CheckpointWriter Checkpoint::begin() {
  CheckpointWriter w;
  w.slot_ = slot_[next_seq_ % 2];
  auto* h = reinterpret_cast<CkptHeader*>(w.slot_);
  h->seq = 0;
  h->checksum = 0;
  dev::persist(h, 16);
  w.offset_ = offset_;
  w.rec_ = rec_;
  w.rows_.assign(offset_.size(), 0);
  return w;
}

char* CheckpointWriter::row(uint32_t table, uint64_t key, uint32_t) {
  cur_ = reinterpret_cast<CkptRecord*>(slot_ + offset_[table] + rows_[table] * rec_[table]);
  rows_[table]++;
  cur_->key = key;
  return reinterpret_cast<char*>(cur_ + 1);
}

void Checkpoint::commit(CheckpointWriter& w, const std::vector<uint64_t>& start_lsn) {
  if (start_lsn.size() > kMaxLogs) throw std::invalid_argument("too many logs");
  for (size_t t = 0; t < w.rows_.size(); t++)
    dev::flush(w.slot_ + w.offset_[t], w.rows_[t] * w.rec_[t]);
  dev::fence();
  dev::crash_point("mmdb.checkpoint_before_header");
  auto* h = reinterpret_cast<CkptHeader*>(w.slot_);
  CkptHeader nh{};
  nh.ntables = uint32_t(w.rows_.size());
  nh.nlogs = uint32_t(start_lsn.size());
  for (size_t i = 0; i < start_lsn.size(); i++) nh.start_lsn[i] = start_lsn[i];
  for (size_t t = 0; t < w.rows_.size(); t++) nh.rows[t] = w.rows_[t];
  nh.seq = next_seq_;
  nh.checksum = checksum(nh);
  memcpy(h, &nh, sizeof nh);
  dev::persist(h, sizeof nh);
  next_seq_++;
}

CheckpointReader Checkpoint::newest() const {
  CheckpointReader r;
  int best = -1;
  for (int s = 0; s < 2; s++) {
    const CkptHeader* h = header(s);
    dev::read(h, sizeof *h);
    if (h->seq == 0 || h->checksum != checksum(*h) || h->ntables != offset_.size()) continue;
    if (best < 0 || h->seq > header(best)->seq) best = s;
  }
  if (best < 0) return r;
  r.valid = true;
  r.slot_ = slot_[best];
  r.h_ = header(best);
  r.offset_ = offset_;
  r.rec_ = rec_;
  return r;
}

}  // namespace nvt::mmdb
