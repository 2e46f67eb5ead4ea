// Acknowledgement files for restart tests: before a commit a worker records its intent (the
// keys it will write), after the commit returns it records each written tuple's installed
// version and image checksum. Written with write(2) so that a killed process loses nothing it
// acknowledged. verify_acks() checks a recovered database against them.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nvt {

uint64_t image_checksum(const char* p, size_t len);

class AckWriter {
 public:
  AckWriter(const std::string& prefix, int tid);
  ~AckWriter();
  void intent(uint64_t txn, const uint64_t* keys, uint32_t n);
  struct Entry {
    uint64_t key, version, checksum;
  };
  void ack(uint64_t txn, const std::vector<Entry>& e);

 private:
  void put(const void* p, size_t n);
  int fd_ = -1;
  std::vector<char> buf_;
};

// read(key, out, version) returns the recovered tuple; stamp_of(image) the txn id a write
// stamped into it (0 for loaded rows). Returns a JSON summary with "violations".
nlohmann::json verify_acks(const std::string& prefix, uint32_t tuple_size,
                           const std::function<bool(uint64_t, char*, uint64_t&)>& read,
                           const std::function<uint64_t(const char*)>& stamp_of);

}  // namespace nvt
