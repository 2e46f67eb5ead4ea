// Maps config.h's ENGINE and CC_ALG names to types, and rejects a pair the engine does not
// support at compile time with a message naming it.
#pragma once
#include "config.h"
#include "concurrency_control/no_wait.h"
#include "concurrency_control/silo.h"
#include "concurrency_control/wait_die.h"
#include "concurrency_control/dl_detect.h"
#include "concurrency_control/occ.h"
#include "concurrency_control/tictoc.h"
#include "concurrency_control/hstore.h"
#include "concurrency_control/mcsi.h"
#include "concurrency_control/pgsi.h"
#include "concurrency_control/mvcc.h"
#include "concurrency_control/hekaton.h"
#include "concurrency_control/cicada.h"
#include "concurrency_control/foedus.h"
#include "concurrency_control/caracal.h"
#include "storage/engines/mmdb/mmdb.h"
#include "storage/engines/zen/zen.h"
#include "storage/engines/nvmvcc/nvmvcc.h"
#include "storage/engines/wbl/wbl.h"
#include "storage/engines/foedus/foedus.h"
// The staged engine's headers only where it is built (the Makefile defines this for
// ENGINE=nvcaracal), so the other pairs compile what they did.
#ifdef NVT_ENGINE_NVCARACAL
#include "storage/engines/nvcaracal/nvcaracal.h"
#endif

#define NVT_STR2(x) #x
#define NVT_STR(x) NVT_STR2(x)
#define NVT_CAT2(a, b) a##b
#define NVT_CAT(a, b) NVT_CAT2(a, b)

namespace nvt::pair {

// One alias per name a user may pass as CC_ALG=...
using cc_no_wait = cc::NoWait;
using cc_silo = cc::Silo;
using cc_wait_die = cc::WaitDie;
using cc_dl_detect = cc::DlDetect;
using cc_occ = cc::Occ;
using cc_tictoc = cc::TicToc;
using cc_hstore = cc::HStore;
using cc_mcsi = cc::Mcsi;  // nvmvcc only
using cc_pgsi = cc::Pgsi;  // nvmvcc only
using cc_mvcc = cc::Mvcc;
using cc_hekaton = cc::Hekaton;
using cc_cicada = cc::Cicada;
using cc_foedus = cc::Foedus;  // foedus only
using cc_caracal = cc::Caracal;  // nvcaracal only
// One template per ENGINE=...
template <class CC> using engine_mmdb = mmdb::Mmdb<CC>;
template <class CC> using engine_zen = zen::Zen<CC>;
template <class CC> using engine_nvmvcc = nvmvcc::NvMvcc<CC>;
template <class CC> using engine_wbl = wbl::Wbl<CC>;
template <class CC> using engine_foedus = foedus::Foedus<CC>;
#ifdef NVT_ENGINE_NVCARACAL
template <class CC> using engine_nvcaracal = nvc::NvCaracal<CC>;
#endif

using CC = NVT_CAT(cc_, CC_ALG);
using Engine = NVT_CAT(engine_, ENGINE)<CC>;
static_assert(Engine::template supports<CC>,
              "unsupported engine-CC pair: ENGINE=" NVT_STR(ENGINE) " CC_ALG=" NVT_STR(CC_ALG));
inline constexpr const char* kEngine = NVT_STR(ENGINE);
inline constexpr const char* kCC = NVT_STR(CC_ALG);

}  // namespace nvt::pair
