// Input logging (papers/nvcaracal-eurosys23.txt sections 3.1.3, 4.3): before an epoch
// executes, each core writes the inputs of its transactions (serial position and the
// benchmark's input words) to its own log in NVM, rewritten every epoch, and fences; then the
// epoch number is persisted as logged. Recovery replays the crashed epoch from these logs.
// Entry: {j, words, word...}. Header line: {epoch, entries, words used}.
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "storage/device/device.h"

namespace nvt::nvc {

struct alignas(64) LogHeader {
  uint64_t epoch, entries, words;
  uint64_t pad[5];
};

class InputLog {
 public:
  static uint64_t bytes_for(uint64_t words) { return sizeof(LogHeader) + words * 8; }
  uint64_t bytes() const { return bytes_for(cap_); }
  void attach(char* base, uint64_t words) {
    hdr_ = reinterpret_cast<LogHeader*>(base);
    data_ = reinterpret_cast<uint64_t*>(base + sizeof(LogHeader));
    cap_ = words;
  }
  // Rewrite the log with this epoch's inputs: the entries streamed, then the header; all
  // flushed (the caller fences).
  void write(uint64_t epoch, const std::vector<uint64_t>& entries, uint64_t count) {
    if (entries.size() > cap_)
      throw std::runtime_error("input log full: " + std::to_string(entries.size()) + " words, room for " + std::to_string(cap_));
    if (!entries.empty()) dev::nt_copy(data_, entries.data(), entries.size() * 8);
    hdr_->epoch = epoch;
    hdr_->entries = count;
    hdr_->words = entries.size();
    dev::flush(hdr_, sizeof(LogHeader));
  }
  // The logged inputs of `epoch` (empty when this log holds another epoch).
  bool read(uint64_t epoch, std::vector<uint64_t>& out) const {
    dev::read(hdr_, sizeof(LogHeader));
    if (hdr_->epoch != epoch) return false;
    if (hdr_->words > cap_) throw std::runtime_error("input log header is corrupt");
    dev::read(data_, hdr_->words * 8);
    out.assign(data_, data_ + hdr_->words);
    return true;
  }

 private:
  LogHeader* hdr_ = nullptr;
  uint64_t* data_ = nullptr;
  uint64_t cap_ = 0;
};

}  // namespace nvt::nvc
