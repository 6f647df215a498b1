# The two commands: `make run` and `make test`. Both install what is missing first.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=
DLBENCH := $(BUILD_DIR)/dlbench

# ccache keys paths relative to the checkout, so a second clone (CI's, say) reuses the first's cache.
export CCACHE_BASEDIR := $(CURDIR)

.PHONY: all deps test-deps configure build test run clean sanitize

all: build

# What building and running need (deps/debian.txt); the tests add deps/debian-test.txt
# (GoogleTest, a PostgreSQL server, Chromium). Without GoogleTest the tests are not built
# (-DDLBENCH_TESTS=AUTO), so `make run` needs neither.
deps:
	@bash scripts/install-deps.sh deps/debian.txt

test-deps:
	@bash scripts/install-deps.sh deps/debian.txt deps/debian-test.txt

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# ctest runs $(JOBS) tests at once, each with TEST_THREADS OpenMP threads. With OpenMP's default
# of a thread per core in every test, threads outnumbered cores and each parallel region waited
# for a descheduled thread: on 2 cores the CPU tests ran several times slower (3D U-Net's learning
# test 91 s beside its neighbours, 16 s with one thread each). The op harness's CPU groups and the
# golden tests set 2 threads themselves, so the CPU kernels' threaded paths stay tested.
TEST_THREADS ?= 1

# Every test this machine can run; gpu-labelled tests report "skipped" where there is no GPU.
test: test-deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DDLBENCH_TESTS=ON \
	  $(CMAKE_ARGS)
	@cmake --build $(BUILD_DIR) -j $(JOBS)
	@OMP_NUM_THREADS=$(TEST_THREADS) ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

# The main job: describe the machine, run the quick suite (the GPU one when NVML sees a GPU,
# else quick-cpu: about half a minute on 2 cores), store it, and write its report (also when a run
# of the suite failed: failed runs are stored and shown).
REPORT ?= $(BUILD_DIR)/report.html
run: build
	@$(DLBENCH) info
	@$(DLBENCH) suite quick; status=$$?; \
	  $(DLBENCH) report --last-suite --out $(REPORT) && exit $$status

# The CPU build and its tests under AddressSanitizer and UndefinedBehaviorSanitizer, in a build
# folder of its own (CI runs it); -O1 with line tables only, as it builds faster than -O2 -g. Leaks
# are not checked: Open MPI and oneDNN keep allocations for the process's life. A failed
# allocation returns null, as without ASan, so dlbench's own resource error (exit 3) is tested.
# GPU, PostgreSQL, browser and MPI tests are left to the main build.
# DLBENCH_FUZZ_CASES sizes both fuzzers (command lines and suite files) down for the slower build.
# SANITIZE_SKIP names the tests that train a model for hundreds of steps (to convergence, or on a
# real corpus): they repeat code that shorter tests (each model's gradient check among them) run
# under the sanitizers too, took 40 % of the sanitized run's time (800 of 2,000 test-seconds on 2
# cores), and run in the main build.
SANITIZE_DIR ?= build-sanitize
SANITIZE_SKIP ?= ^LearningTest\.|LearnsToCopy|Memorizes|TrainsOnATokenFile|^RealData\.
sanitize: test-deps
	@cmake -S . -B $(SANITIZE_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDLBENCH_TESTS=ON \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DDLBENCH_CUDA=OFF -DDLBENCH_SANITIZE=ON
	@cmake --build $(SANITIZE_DIR) -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 DLBENCH_FUZZ_CASES=40 \
	  OMP_NUM_THREADS=$(TEST_THREADS) \
	  ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS) -LE 'gpu|postgres|browser|dist' \
	  -E '$(SANITIZE_SKIP)'

clean:
	@rm -rf $(BUILD_DIR)
