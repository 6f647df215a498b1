# The two commands: `make run` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=
DLBENCH := $(BUILD_DIR)/dlbench

.PHONY: all deps configure build test run clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Every test this machine can run; gpu-labelled tests report "skipped" where there is no GPU.
test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The main job: describe the machine, run the quick suite (the GPU one when NVML sees a GPU,
# else quick-cpu: a few minutes on 2 cores), store it, and write its report (also when a run
# of the suite failed: failed runs are stored and shown).
REPORT ?= $(BUILD_DIR)/report.html
run: build
	@$(DLBENCH) info
	@$(DLBENCH) suite quick; status=$$?; \
	  $(DLBENCH) report --last-suite --out $(REPORT) && exit $$status

clean:
	@rm -rf $(BUILD_DIR)
