// What an engine's check() reports (storage/engine.h): how many invariants the recovered image
// violates, with the first ten as examples. Called with each violation found.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nvt {

struct Violations {
  static constexpr uint64_t kExamples = 10;
  uint64_t count = 0;
  std::vector<std::string> examples;

  void operator()(const std::string& what) {
    if (++count <= kExamples) examples.push_back(what);
  }
  nlohmann::json json() const { return {{"violations", count}, {"examples", examples}}; }
};

}  // namespace nvt
