// A small Zen database of accounts for the Zen tests (test_zen.cpp, test_zen_lrt.cpp).
#pragma once
#include <map>
#include <string>
#include <utility>

#include "storage/engines/zen/zen.h"
#include "tests/unit/engine_util.h"

namespace nvt::test {

// A small Zen database of accounts (tests/unit/engine_util.h), fresh or over a reopened image.
template <class CC>
struct ZenDb : PairDb<Pair<zen::Zen, CC>> {
  using Base = PairDb<Pair<zen::Zen, CC>>;
  using Base::eng;
  using Base::eo;
  using Base::tables;

  ZenDb(const std::string& path, const DbOptions& o, bool reopen = false)
      : Base(path, account_tables(o.rows), "unit-test accounts " + std::to_string(o.rows), o, reopen) {}
  void load(int64_t balance) {
    char img[kTuple];
    for (uint64_t k = 0; k < tables[0].capacity; k++) {
      initial_image(img, k, balance);
      eng->load(eng->thread(int(k % uint64_t(eo.threads))), 0, k, img);
    }
    eng->after_load();
  }
  int64_t total() {
    int64_t t = 0;
    char img[kTuple];
    uint64_t v;
    for (uint64_t k = 0; k < tables[0].capacity; k++)
      if (eng->read_current(0, k, img, v)) t += balance_of(img);
    return t;
  }
  std::map<uint64_t, std::pair<std::string, uint64_t>> snapshot() {
    std::map<uint64_t, std::pair<std::string, uint64_t>> s;
    char img[kTuple];
    for (uint64_t k = 0; k < tables[0].capacity; k++) {
      uint64_t v = 0;
      if (eng->read_current(0, k, img, v)) s[k] = {std::string(img, kTuple), v};
    }
    return s;
  }
  uint64_t stat(const char* name) { return eng->stats()[name].template get<uint64_t>(); }
};

}  // namespace nvt::test
