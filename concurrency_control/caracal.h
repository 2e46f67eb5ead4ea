// Caracal's deterministic concurrency control (papers/nvcaracal-eurosys23.txt section 3.1): not
// a CC method the transaction manager calls per access, but the epoch protocol of the
// nvcaracal engine itself (storage/engines/nvcaracal/): write sets declared before execution,
// PENDING versions appended in serial-id order, readers waiting on PENDING and skipping IGNORE,
// no concurrency-control aborts. This type only names the method so that `CC_ALG=caracal` picks
// it; every other engine refuses it (needs_caracal) and nvcaracal admits nothing else.
#pragma once

namespace nvt::cc {

struct Caracal {
  static constexpr bool kCaracal = true;
  static constexpr const char* name = "caracal";
  static void start(int) {}
  static void stop() {}
};

}  // namespace nvt::cc
