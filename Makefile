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

# The main job: describe the machine, then a short CPU run of both models (a few minutes on
# 2 cores). The quick suite and the report replace this when they land.
run: build
	@$(DLBENCH) info
	@$(DLBENCH) run resnet50 --device cpu --input 32 --batch 32 --warmup 2 --steps 5
	@$(DLBENCH) run vgg16 --device cpu --batch 4 --warmup 2 --steps 3

clean:
	@rm -rf $(BUILD_DIR)
