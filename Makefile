# nvtestbed. `make` builds the pair config.h names; `make ENGINE=mmdb CC_ALG=silo` builds
# build/mmdb-silo/rundb without editing a file. `make test` runs every test (see README).
ENGINE ?= mmdb
CC_ALG ?= no_wait
DEVICE_MODEL ?= 1
ENGINES := mmdb
CC_ALGS := no_wait silo

ifeq ($(filter $(ENGINE),$(ENGINES)),)
$(error unknown ENGINE=$(ENGINE); choose one of: $(ENGINES))
endif
ifeq ($(filter $(CC_ALG),$(CC_ALGS)),)
$(error unknown CC_ALG=$(CC_ALG); choose one of: $(CC_ALGS))
endif

SUFFIX := $(if $(filter 0,$(DEVICE_MODEL)),-nomodel,)
BUILD := build/$(ENGINE)-$(CC_ALG)$(SUFFIX)
CXX := g++
OPT ?= -O2
CXXFLAGS := -std=c++20 $(OPT) -g -Wall -Wextra -pthread -I. -MMD -MP \
            -DENGINE=$(ENGINE) -DCC_ALG=$(CC_ALG) -DDEVICE_MODEL=$(DEVICE_MODEL) $(EXTRA_CXXFLAGS)
LDLIBS := -lpmem -lnuma -ljemalloc -pthread $(EXTRA_LDLIBS)

CORE_SRC := $(wildcard storage/*.cpp storage/device/*.cpp storage/engines/*/*.cpp \
              concurrency_control/*.cpp benchmarks/*.cpp) \
            system/options.cpp system/host.cpp system/stats.cpp system/ack.cpp system/driver.cpp
CORE_OBJ := $(patsubst %.cpp,$(BUILD)/%.o,$(CORE_SRC))

.PHONY: all rundb test unit e2e pytest bench clean
all rundb: $(BUILD)/rundb

$(BUILD)/rundb: $(CORE_OBJ) $(BUILD)/system/rundb.o
	$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c -o $@ $<

# Unit tests: one binary that instantiates every valid pair.
TEST_BUILD := build/test
TEST_SRC := $(wildcard tests/unit/*.cpp)
TEST_OBJ := $(patsubst %.cpp,$(TEST_BUILD)/%.o,$(TEST_SRC)) $(patsubst %.cpp,$(TEST_BUILD)/%.o,$(CORE_SRC))
$(TEST_BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c -o $@ $<
$(TEST_BUILD)/unit_tests: $(TEST_OBJ)
	$(CXX) $(CXXFLAGS) -o $@ $^ -lgtest -lgtest_main $(LDLIBS)

unit: $(TEST_BUILD)/unit_tests
	$(TEST_BUILD)/unit_tests

# End-to-end: every built pair at tiny sizes, the restart test, hostile flags.
e2e:
	bash tests/e2e/run_all.sh

pytest:
	python3 -m pytest -q tests/python

test: unit e2e pytest

bench:
	bash scripts/bench.sh

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
