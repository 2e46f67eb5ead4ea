#include "system/ack.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace nvt {

uint64_t image_checksum(const char* p, size_t len) {
  uint64_t x = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) x = (x ^ uint8_t(p[i])) * 0x100000001b3ull;
  return x;
}

AckWriter::AckWriter(const std::string& prefix, int tid) {
  std::string path = prefix + "." + std::to_string(tid);
  fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot write --ack-file " + path + ": " + strerror(errno));
}

AckWriter::~AckWriter() {
  if (fd_ >= 0) close(fd_);
}

void AckWriter::put(const void* p, size_t n) {
  // One write(2) per record: the kernel keeps it even if the process is killed next.
  if (::write(fd_, p, n) != ssize_t(n)) throw std::runtime_error("short write to ack file");
}

void AckWriter::intent(uint64_t txn, const uint64_t* keys, uint32_t n) {
  buf_.resize(1 + 8 + 4 + 8 * size_t(n));
  buf_[0] = 'I';
  memcpy(&buf_[1], &txn, 8);
  memcpy(&buf_[9], &n, 4);
  memcpy(&buf_[13], keys, 8 * size_t(n));
  put(buf_.data(), buf_.size());
}

void AckWriter::ack(uint64_t txn, const std::vector<Entry>& e) {
  uint32_t n = uint32_t(e.size());
  buf_.resize(1 + 8 + 4 + sizeof(Entry) * n);
  buf_[0] = 'A';
  memcpy(&buf_[1], &txn, 8);
  memcpy(&buf_[9], &n, 4);
  memcpy(&buf_[13], e.data(), sizeof(Entry) * n);
  put(buf_.data(), buf_.size());
}

nlohmann::json verify_acks(const std::string& prefix, uint32_t tuple_size,
                           const std::function<bool(uint64_t, char*, uint64_t&)>& read,
                           const std::function<uint64_t(const char*)>& stamp_of) {
  std::unordered_map<uint64_t, std::vector<uint64_t>> intents;
  std::unordered_map<uint64_t, std::vector<AckWriter::Entry>> acks;
  namespace fs = std::filesystem;
  fs::path pp(prefix);
  fs::path dir = pp.has_parent_path() ? pp.parent_path() : fs::path(".");
  std::string base = pp.filename().string() + ".";
  int files = 0;
  for (auto& f : fs::directory_iterator(dir)) {
    std::string name = f.path().filename().string();
    if (name.rfind(base, 0) != 0) continue;
    files++;
    std::ifstream in(f.path(), std::ios::binary);
    std::vector<char> d((std::istreambuf_iterator<char>(in)), {});
    size_t off = 0;
    while (off + 13 <= d.size()) {
      char tag = d[off];
      uint64_t txn;
      uint32_t n;
      memcpy(&txn, &d[off + 1], 8);
      memcpy(&n, &d[off + 9], 4);
      size_t each = tag == 'I' ? 8 : sizeof(AckWriter::Entry);
      if (off + 13 + each * n > d.size()) break;  // a record cut by the kill: never acknowledged
      if (tag == 'I') {
        auto& v = intents[txn];
        v.resize(n);
        memcpy(v.data(), &d[off + 13], 8 * size_t(n));
      } else if (tag == 'A') {
        auto& v = acks[txn];
        v.resize(n);
        memcpy(v.data(), &d[off + 13], each * n);
      } else {
        throw std::runtime_error("corrupt ack file " + f.path().string());
      }
      off += 13 + each * n;
    }
  }
  if (files == 0) throw std::runtime_error("no ack files found for prefix " + prefix);

  std::vector<std::string> violations;
  auto violate = [&](const std::string& s) {
    if (violations.size() < 20) violations.push_back(s);
  };
  uint64_t nviol = 0;
  std::vector<char> img(tuple_size);
  // 1. Every acknowledged write is there, or a later version of the same tuple is.
  uint64_t checked = 0;
  for (auto& [txn, entries] : acks)
    for (auto& e : entries) {
      uint64_t ver = 0;
      checked++;
      if (!read(e.key, img.data(), ver)) { nviol++; violate("acked key " + std::to_string(e.key) + " missing"); continue; }
      if (ver < e.version) {
        nviol++;
        violate("txn " + std::to_string(txn) + " acked version " + std::to_string(e.version) +
                " of key " + std::to_string(e.key) + ", recovered version " + std::to_string(ver));
      } else if (ver == e.version && image_checksum(img.data(), tuple_size) != e.checksum) {
        nviol++;
        violate("key " + std::to_string(e.key) + " version " + std::to_string(ver) + " is torn");
      }
    }
  // 2. No transaction partly visible: if any tuple carries txn X's stamp, each key X meant to
  //    write carries X's stamp or that of another transaction that also wrote it.
  std::unordered_map<uint64_t, uint64_t> stamp;  // key -> stamp, for keys in any intent
  for (auto& [txn, keys] : intents)
    for (uint64_t k : keys) {
      if (stamp.count(k)) continue;
      uint64_t ver = 0;
      stamp[k] = read(k, img.data(), ver) ? stamp_of(img.data()) : ~0ull;
    }
  std::unordered_map<uint64_t, std::set<uint64_t>> writers;  // key -> txns that meant to write
  for (auto& [txn, keys] : intents)
    for (uint64_t k : keys) writers[k].insert(txn);
  uint64_t visible = 0;
  for (auto& [txn, keys] : intents) {
    size_t mine = 0;
    for (uint64_t k : keys) mine += stamp[k] == txn;
    if (mine == 0) {
      if (acks.count(txn)) {
        // Acknowledged yet no tuple shows it: fine only if every key was overwritten since.
        for (uint64_t k : keys)
          if (!writers[k].count(stamp[k]) || stamp[k] == txn) {
            nviol++;
            violate("acked txn " + std::to_string(txn) + " not visible at key " + std::to_string(k));
          }
      }
      continue;
    }
    visible++;
    for (uint64_t k : keys)
      if (stamp[k] != txn && !writers[k].count(stamp[k])) {
        nviol++;
        violate("txn " + std::to_string(txn) + " partly visible: key " + std::to_string(k) +
                " holds stamp " + std::to_string(stamp[k]));
      }
  }
  for (auto& [k, s] : stamp)
    if (s != 0 && s != ~0ull && !intents.count(s)) {
      nviol++;
      violate("key " + std::to_string(k) + " holds a stamp no transaction wrote");
    }
  return {{"ack_files", files},
          {"acked_txns", acks.size()},
          {"acked_writes_checked", checked},
          {"intents", intents.size()},
          {"visible_txns", visible},
          {"violations", nviol},
          {"examples", violations}};
}

}  // namespace nvt
