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

# The main job: describe the machine as a deep-learning box.
run: build
	@$(DLBENCH) info

clean:
	@rm -rf $(BUILD_DIR)
