// The engine-CC pairs a typed test instantiates: Pair<Engine, CC> and the list of the pairs
// with inserts and ordered scans (MMDB and Zen, each with NO_WAIT and SILO).
#pragma once
#include <gtest/gtest.h>

#include "concurrency_control/no_wait.h"
#include "concurrency_control/silo.h"
#include "storage/engines/mmdb/mmdb.h"
#include "storage/engines/zen/zen.h"

namespace nvt::test {

template <class E, class C>
struct Pair {
  using Engine = E;
  using CC = C;
};

using InsertPairs = ::testing::Types<Pair<mmdb::Mmdb<cc::NoWait>, cc::NoWait>, Pair<mmdb::Mmdb<cc::Silo>, cc::Silo>,
                                     Pair<zen::Zen<cc::NoWait>, cc::NoWait>, Pair<zen::Zen<cc::Silo>, cc::Silo>>;

}  // namespace nvt::test
