// The DRAM budget and its ledger. Every engine keeps two kinds of DRAM (DESIGN.md, "one DRAM
// rule"):
//   Data      tuples or pages held in DRAM for speed (Met-Cache, FOEDUS's volatile pages and
//             snapshot cache, MMDB's DRAM rows, WBL's cache, NVCaracal's cached versions):
//             at most the data cap, database / P, for every engine.
//   Overhead  what an engine keeps beside data (indexes, allocator metadata, log buffers,
//             pools, working memory): listed, never turned into cache.
// Both count against the whole budget (data cap plus the allowances); going over either is an
// error naming what asked, never a silent spill into NVM. Engines size their caches from
// data_left(), not left().
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace nvt::dev {

struct BudgetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class DramUse { Overhead, Data };
inline const char* dram_use_name(DramUse u) { return u == DramUse::Data ? "data" : "overhead"; }

class DramBudget {
 public:
  // `data_cap`: the most the Data entries may hold together (database / P); the default leaves
  // data bounded by the whole budget only (tests, --dram-size without P).
  explicit DramBudget(uint64_t budget, uint64_t data_cap = std::numeric_limits<uint64_t>::max())
      : budget_(budget), data_cap_(data_cap) {}
  // Allocate zeroed, 64 B aligned DRAM charged to `what`. Throws BudgetError when over budget
  // (or, for Data, over the data cap).
  void* alloc(uint64_t bytes, const std::string& what, DramUse use = DramUse::Overhead);
  void free(void* p, uint64_t bytes, const std::string& what);
  // Charge without allocating (memory owned elsewhere: a std::vector, a hash map).
  void charge(uint64_t bytes, const std::string& what, DramUse use = DramUse::Overhead);
  // Give back what charge() took (the memory owned elsewhere was released).
  void uncharge(uint64_t bytes, const std::string& what);
  uint64_t budget() const { return budget_; }
  uint64_t used() const { return used_.load(); }
  uint64_t left() const { uint64_t u = used(); return u >= budget_ ? 0 : budget_ - u; }
  uint64_t data_cap() const { return data_cap_; }
  uint64_t data_used() const { return data_used_.load(); }
  // What a cache may still take: under both the data cap and the whole budget.
  uint64_t data_left() const {
    uint64_t d = data_used();
    return std::min(left(), d >= data_cap_ ? 0 : data_cap_ - d);
  }
  std::map<std::string, uint64_t> breakdown() const;
  // Each ledger entry's kind (an entry keeps the kind of its first charge).
  std::map<std::string, DramUse> kinds() const;

 private:
  uint64_t budget_, data_cap_;
  std::atomic<uint64_t> used_{0}, data_used_{0};
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> by_what_;
  std::map<std::string, DramUse> kind_;
};

}  // namespace nvt::dev
