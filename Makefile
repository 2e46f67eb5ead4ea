# nvtestbed. `make` builds the pair config.h names; `make ENGINE=mmdb CC_ALG=silo` builds
# build/mmdb-silo/rundb without editing a file. `make test` runs every test (see README).
ENGINE ?= mmdb
CC_ALG ?= no_wait
DEVICE_MODEL ?= 1
# Zen's naive NVM space management (papers/zen-vldb21.txt Figure 14), built apart.
ZEN_NAIVE_ALLOC ?= 0
ENGINES := mmdb zen nvmvcc wbl foedus nvcaracal
# Engines built and tested by their own targets until they pass e2e and crash like the others;
# not in `make pairs` or CI's e2e (none today: FOEDUS and NVCaracal joined, `make foedus` and
# `make nvcaracal` stay their shortcuts).
STAGED_ENGINES :=
CC_ALGS := no_wait silo wait_die dl_detect occ tictoc hstore mvcc hekaton cicada mcsi pgsi foedus caracal
# The CC methods each engine supports (its supports<CC>; an unlisted pair fails to compile).
# `make pairs` prints every valid ENGINE-CC_ALG pair (tests/e2e/test_build.sh builds them).
NVMVCC_CCS := mcsi pgsi
# FOEDUS's OCC with its pointer set runs on the FOEDUS engine only, which runs nothing else;
# Caracal's deterministic method is the nvcaracal engine's own protocol.
OWN_CCS := $(NVMVCC_CCS) foedus caracal
ENGINE_CCS_mmdb = $(filter-out $(OWN_CCS),$(CC_ALGS))
ENGINE_CCS_zen = $(filter-out $(OWN_CCS),$(CC_ALGS))
ENGINE_CCS_nvmvcc = $(NVMVCC_CCS)
ENGINE_CCS_wbl = $(filter-out $(OWN_CCS),$(CC_ALGS))
ENGINE_CCS_foedus = foedus
ENGINE_CCS_nvcaracal = caracal
PAIRS := $(foreach e,$(ENGINES),$(addprefix $(e)-,$(ENGINE_CCS_$(e))))

ifeq ($(filter $(ENGINE),$(ENGINES) $(STAGED_ENGINES)),)
$(error unknown ENGINE=$(ENGINE); choose one of: $(ENGINES) $(STAGED_ENGINES))
endif
ifeq ($(filter $(CC_ALG),$(CC_ALGS)),)
$(error unknown CC_ALG=$(CC_ALG); choose one of: $(CC_ALGS))
endif

# SAN=asan (ASan+UBSan) or SAN=tsan: sanitizer builds, without jemalloc (it would hide the
# sanitizer's allocator).
# Both compile at -Og unless OPT says otherwise: a third less compile time than -O1 (most of
# CI's time is building the unit tests twice); the tests run about 1.5x longer, which costs
# less than the build saves (CI's ASan stage: 982-1135 s at -O1, 766-836 s at -Og).
SAN ?=
ifeq ($(SAN),asan)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else ifeq ($(SAN),tsan)
# No inlining: TSan's symbolizer here reports no inlined frames, so suppressions naming the
# seqlock-style copies (tests/tsan.supp) would not match once they are inlined into callers.
# -Wno-tsan: g++ warns that TSan does not model atomic_thread_fence; the seqlock readers that
# rely on fences are exactly the races tests/tsan.supp names.
SANFLAGS := -fsanitize=thread -fno-inline -Wno-tsan
else ifneq ($(SAN),)
$(error unknown SAN=$(SAN); choose asan or tsan)
endif
MALLOC := $(if $(SAN),,-ljemalloc)

SUFFIX := $(if $(filter 0,$(DEVICE_MODEL)),-nomodel,)$(if $(filter 1,$(ZEN_NAIVE_ALLOC)),-naive,)$(if $(SAN),-$(SAN),)
BUILD := build/$(ENGINE)-$(CC_ALG)$(SUFFIX)
CXX := g++
DEFAULT_OPT := $(if $(SAN),-Og,-O2)
OPT ?= $(DEFAULT_OPT)
# Engine-independent objects (device model, benchmarks, system, the engines' .cpp files, none of
# which sees ENGINE or CC_ALG: only system/rundb.cpp instantiates the pair) are compiled once
# per build mode (device model on/off, sanitizer, optimisation) into build/common*/ and linked
# into every pair and the unit tests.
empty :=
space := $(empty) $(empty)
MODE := $(if $(filter 0,$(DEVICE_MODEL)),-nomodel,)$(if $(SAN),-$(SAN),)$(if $(filter-out $(DEFAULT_OPT),$(OPT)),$(subst -,_,$(subst $(space),,$(OPT))),)
COMMON := build/common$(MODE)
# -g1: line tables and function names (perf, backtraces and sanitizer reports name file and
# line) at a quarter less compile time than -g; EXTRA_CXXFLAGS=-g for a debugger's locals.
BASEFLAGS := -std=c++20 $(OPT) -g1 -Wall -Wextra -pthread -I. -MMD -MP \
             -DDEVICE_MODEL=$(DEVICE_MODEL) $(SANFLAGS) $(EXTRA_CXXFLAGS)
CXXFLAGS := $(BASEFLAGS) -DENGINE=$(ENGINE) -DCC_ALG=$(CC_ALG) -DZEN_NAIVE_ALLOC=$(ZEN_NAIVE_ALLOC)
# nvcaracal's headers enter a pair's build only when it is the engine (system/pair.h); the unit
# tests include them directly.
CXXFLAGS += $(if $(filter nvcaracal,$(ENGINE)),-DNVT_ENGINE_NVCARACAL,)
LDLIBS := -lpmem -lnuma $(MALLOC) -pthread $(EXTRA_LDLIBS)

CORE_SRC := $(wildcard storage/*.cpp storage/device/*.cpp storage/engines/*/*.cpp \
              concurrency_control/*.cpp benchmarks/*.cpp) \
            system/options.cpp system/host.cpp system/numa_host.cpp system/stats.cpp system/ack.cpp system/driver.cpp system/run_report.cpp
CORE_OBJ := $(patsubst %.cpp,$(COMMON)/%.o,$(CORE_SRC))

.PHONY: all rundb common pairs test unit unit-some e2e pytest crash bench clean asan tsan foedus foedus-unit nvcaracal
all rundb: $(BUILD)/rundb
# The build mode's engine-independent objects alone (tests/e2e/test_build.sh builds them with
# -j2 before the pairs, so no pair's own compile runs with a core idle).
common: $(CORE_OBJ) $(PCH)

$(BUILD)/rundb: $(CORE_OBJ) $(BUILD)/system/rundb.o
	$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS)

# A pair's rundb.cpp first includes system/rundb_headers.h, what every pair parses alike:
# precompiled once per build mode, without ENGINE and CC_ALG (which it must not use), it saves
# each pair's compile about 4 of 20 s. Its folder comes first in the include path, so g++ finds
# the .gch before the header (-Winvalid-pch says so if it ever ignores it).
PCH_DIR := $(COMMON)/pch$(if $(filter 1,$(ZEN_NAIVE_ALLOC)),-naive,)
PCH := $(PCH_DIR)/system/rundb_headers.h.gch
$(PCH): system/rundb_headers.h
	@mkdir -p $(dir $@)
	$(CXX) $(BASEFLAGS) -DZEN_NAIVE_ALLOC=$(ZEN_NAIVE_ALLOC) -x c++-header -MF $(@:.gch=.d) -MT $@ \
	  -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@
$(BUILD)/system/rundb.o: system/rundb.cpp $(PCH)
	@mkdir -p $(dir $@)
	$(CXX) -I$(PCH_DIR) $(CXXFLAGS) -Winvalid-pch -c -o $@ $<

$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c -o $@ $<

# Two makes (pairs built side by side) may build the same common object: each writes a
# temporary file and renames it, so neither links a half-written one.
$(COMMON)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(BASEFLAGS) -MF $(@:.o=.d) -MT $@ -c -o $@.$$$$.tmp $< && mv -f $@.$$$$.tmp $@

# Unit tests: one binary that instantiates every valid pair.
TEST_BUILD := build/test$(MODE)
# Staged engines' tests build into binaries of their own, not the CI's (none today).
STAGED_TEST_SRC :=
TEST_SRC := $(filter-out $(STAGED_TEST_SRC),$(wildcard tests/unit/*.cpp))
# The TSan binary is built only from the files that declare a test TSAN_FILTER selects (a word
# of the filter in the suite or test name on the TEST line), which halves its build.
TSAN_WORDS := Concurrent|Bank|Thread|Deadlock
TSAN_SKIP := TpccRun
TSAN_TEST_LINE := ^(TYPED_)?TEST(_F|_P)?[(].*($(TSAN_WORDS))
TSAN_SKIP_LINE := [(]($(TSAN_SKIP)),
ifeq ($(SAN),tsan)
TEST_SRC := $(filter-out $(STAGED_TEST_SRC),$(sort $(shell grep -E '$(TSAN_TEST_LINE)' tests/unit/*.cpp | grep -vE '$(TSAN_SKIP_LINE)' | cut -d: -f1)))
endif
# The binary compiles its test files in two unity groups (scripts/unity_tests.sh), one per
# core of CI's two: an engine-CC pair that several files test is instantiated once per group,
# not once per file. The ASan build's test files took 1200 s of compile one by one and take
# 640 s as these two groups (486 s as one), 5-6 GB of memory each. `cc`: the CC methods over
# the pairs of MMDB, Zen and WBL and the engine-independent parts; `engines`: each engine's and
# workload's own tests (a new file joins it). `make unit-some` still compiles files one by one.
UNITY_CC := test_cc_isolation test_cc_methods test_cc test_counters test_durable test_insert_delete \
            test_hash_index test_ordered_index test_device test_dram_budget test_image_lock \
            test_node_images test_zipf test_parallel
UNITY_cc_SRC := $(filter $(patsubst %,tests/unit/%.cpp,$(UNITY_CC)),$(TEST_SRC))
UNITY_engines_SRC := $(filter-out $(UNITY_cc_SRC),$(TEST_SRC))
UNITY_GROUPS := $(if $(UNITY_cc_SRC),cc) $(if $(UNITY_engines_SRC),engines)
TEST_OBJ := $(patsubst %,$(TEST_BUILD)/unity/%.o,$(UNITY_GROUPS)) $(CORE_OBJ)
# (Named targets, not a pattern: make would also try a pattern on the groups' own .d files.)
.PHONY: FORCE
$(patsubst %,$(TEST_BUILD)/unity/%.cpp,$(UNITY_GROUPS)): FORCE
	@bash scripts/unity_tests.sh $@ $(UNITY_$(basename $(notdir $@))_SRC)
# -Wno-subobject-linkage: g++ warns when a type of an included file derives from one in that
# file's anonymous namespace (GoogleTest's typed tests from their fixtures), which is what each
# test file did as a translation unit of its own.
$(TEST_BUILD)/unity/%.o: $(TEST_BUILD)/unity/%.cpp
	$(CXX) $(CXXFLAGS) -Wno-subobject-linkage -c -o $@ $<
$(TEST_BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c -o $@ $<
$(TEST_BUILD)/unit_tests: $(TEST_OBJ)
	$(CXX) $(CXXFLAGS) -o $@ $^ -lgtest -lgtest_main $(LDLIBS)

# A hang guard for the unit test runs: a test that never ends fails its stage after `limit`
# seconds, naming the cause (the last `[ RUN ]` line above it names the test), instead of
# taking CI's whole time. The limits are several times a normal run on 2 cores.
limited = timeout $(1) $(2) || { rc=$$?; [ $$rc -ne 124 ] || \
  echo "unit tests: still running after $(1) s, stopped (a hang: see the last [ RUN ] line)" >&2; exit $$rc; }
unit: $(TEST_BUILD)/unit_tests
	$(call limited,900,$(TEST_BUILD)/unit_tests)

# End-to-end: every built pair at tiny sizes, the restart test, hostile flags.
e2e:
	bash tests/e2e/run_all.sh

# Python runs from the virtual environment scripts/setup.sh creates (scripts/python.sh), one
# pytest worker per core (pytest-xdist): most tests wait on a rundb or a sweep they started.
pytest:
	bash -c 'source scripts/python.sh && exec "$$PYTHON" -m pytest -q -n $(shell nproc) --durations=10 tests/python'

# Crash torture at a small round count per engine, and proof that injected faults are caught.
crash:
	bash tests/crash/run_all.sh

# The unit tests under ASan+UBSan; the multi-threaded ones under TSan. Seqlock-style optimistic
# copies (Silo reads, fuzzy checkpoints) race by design and are suppressed in tests/tsan.supp.
# Both run as two GoogleTest shards side by side (scripts/gtest_shards.sh), each with the hang
# guard's limit: most tests use one thread, and one process left a core of CI's two idle.
asan:
	$(MAKE) SAN=asan build/test-asan/unit_tests
	ASAN_OPTIONS=detect_leaks=1 bash scripts/gtest_shards.sh 1800 build/test-asan/unit_tests
tsan:
	$(MAKE) SAN=tsan build/test-tsan/unit_tests
	TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1" \
	  bash scripts/gtest_shards.sh 1200 build/test-tsan/unit_tests --gtest_filter='$(TSAN_FILTER)'
# TpccRun is left out: loading TPC-C under TSan takes minutes per pair; the inserts, deletes and
# ordered index it exercises have concurrent tests of their own in the filter.
TSAN_FILTER := *$(subst |,*:*,$(TSAN_WORDS))*:-$(TSAN_SKIP)*

test: unit e2e crash pytest

# FOEDUS (storage/engines/foedus/), a shortcut: its rundb, its own unit tests (test_foedus.cpp,
# also in the CI's binary), its end-to-end and crash tests (also in `make e2e` and `make crash`).
# FOEDUS_FILTER narrows the unit tests (e.g. under SAN=asan).
FOEDUS_FILTER ?= *
$(TEST_BUILD)/foedus_tests: $(TEST_BUILD)/tests/unit/test_foedus.o $(CORE_OBJ)
	$(CXX) $(CXXFLAGS) -o $@ $^ -lgtest -lgtest_main $(LDLIBS)
foedus-unit: $(TEST_BUILD)/foedus_tests
	$(call limited,600,$(TEST_BUILD)/foedus_tests --gtest_filter='$(FOEDUS_FILTER)')
foedus:
	$(MAKE) ENGINE=foedus CC_ALG=foedus
	$(MAKE) foedus-unit
	bash tests/e2e/test_foedus.sh
	bash tests/crash/foedus.sh

# NVCaracal alone, a shortcut to what CI runs of it: its rundb, its unit tests
# (tests/unit/test_nvcaracal.cpp, also in unit_tests) in a binary of their own, so they build in
# seconds, and its end-to-end and crash tests. `make nvcaracal SAN=asan` runs the unit
# tests under ASan+UBSan (SAN=tsan: TSan), without the scripts.
NVC_TEST_BUILD := build/test-nvcaracal$(MODE)
$(NVC_TEST_BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c -o $@ $<
$(NVC_TEST_BUILD)/nvcaracal_tests: $(NVC_TEST_BUILD)/tests/unit/test_nvcaracal.o $(CORE_OBJ)
	$(CXX) $(CXXFLAGS) -o $@ $^ -lgtest -lgtest_main $(LDLIBS)
nvcaracal:
	$(MAKE) ENGINE=nvcaracal CC_ALG=caracal build/nvcaracal-caracal$(SUFFIX)/rundb $(NVC_TEST_BUILD)/nvcaracal_tests
	$(if $(filter tsan,$(SAN)),TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1",) \
	  $(call limited,600,$(NVC_TEST_BUILD)/nvcaracal_tests)
	$(if $(SAN),,bash tests/e2e/test_nvcaracal.sh)
	$(if $(SAN),,bash tests/crash/nvcaracal.sh)

# Some unit-test files only, for a quick check of a change (the files a change touches build in
# a minute instead of the whole binary's ten): `make unit-some UNIT="test_zen test_wbl"`, with
# SAN=asan under ASan+UBSan; GTEST_ARGS passes e.g. --gtest_filter.
UNIT ?=
UNIT_BIN := $(TEST_BUILD)/unit-$(subst $(space),+,$(strip $(UNIT)))
$(UNIT_BIN): $(patsubst %,$(TEST_BUILD)/tests/unit/%.o,$(UNIT)) $(CORE_OBJ)
	$(CXX) $(CXXFLAGS) -o $@ $^ -lgtest -lgtest_main $(LDLIBS)
unit-some:
	$(if $(strip $(UNIT)),,$(error name the test files: make unit-some UNIT="test_zen test_wbl"))
	$(MAKE) $(UNIT_BIN)
	$(if $(filter tsan,$(SAN)),TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp halt_on_error=1",) \
	  $(call limited,900,$(UNIT_BIN) $(GTEST_ARGS))

bench:
	bash scripts/bench.sh

clean:
	rm -rf build

pairs:
	@echo $(PAIRS)

-include $(shell find build -name '*.d' 2>/dev/null)
