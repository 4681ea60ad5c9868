# The two quick-start commands (README.md): `make run` and `make test`.
# Each installs missing Debian packages first, then configures and builds with CMake.
JOBS ?= $(shell nproc)
RELEASE_DIR ?= build/release
TEST_DIR ?= build/test

.PHONY: run test deps test-deps configure-release release-all bench fuzz-soak gallery format format-check clean python

deps:
	@./scripts/install-deps.sh

test-deps:
	@./scripts/install-deps.sh --test

configure-release: deps
	cmake -S . -B $(RELEASE_DIR) -DCMAKE_BUILD_TYPE=Release

# The flagship example: prints a summary table and writes trace.svg and report.json. Also
# builds the C++ examples docs/examples.md names ($(RELEASE_DIR)/examples/heterogeneous_zbv,
# $(RELEASE_DIR)/examples/pipeline_1f1b).
run: configure-release
	cmake --build $(RELEASE_DIR) -j $(JOBS) --target perflow heterogeneous_zbv pipeline_1f1b
	$(RELEASE_DIR)/perflow simulate examples/heterogeneous_zbv.json --svg trace.svg --report report.json

# Warnings are errors; AddressSanitizer and UndefinedBehaviorSanitizer are on.
test: test-deps
	cmake -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=Debug -DPERFLOW_WERROR=ON -DPERFLOW_SANITIZE=address,undefined
	cmake --build $(TEST_DIR) -j $(JOBS)
	cd $(TEST_DIR) && ctest -j $(JOBS) --output-on-failure --timeout 300

# Every target but the tests (built and run by `make test`) in Release, warnings as errors:
# the CLI, libraries, benchmarks, examples and the Python module (CI runs it, .ci/run).
RELEASE_ALL_DIR ?= build/release-all
release-all: deps
	cmake -S . -B $(RELEASE_ALL_DIR) -DCMAKE_BUILD_TYPE=Release -DPERFLOW_WERROR=ON \
	  -DPERFLOW_BUILD_TESTS=OFF -DPERFLOW_BUILD_BENCH=ON -DPERFLOW_BUILD_EXAMPLES=ON \
	  -DPERFLOW_BUILD_PYTHON=ON
	cmake --build $(RELEASE_ALL_DIR) -j $(JOBS)

bench: configure-release
	cmake --build $(RELEASE_DIR) -j $(JOBS) --target perflow perflow_bench perflow_schedules_bench perflow_render_bench perflow_kineto_bench perflow_task_table_bench perflow_model_bench perflow_sweep_bench perflow_search_bench perflow_python
	$(RELEASE_DIR)/bench/perflow_bench --benchmark_out=$(RELEASE_DIR)/bench.json --benchmark_out_format=json
	$(RELEASE_DIR)/bench/perflow_schedules_bench --benchmark_out=$(RELEASE_DIR)/bench_schedules.json --benchmark_out_format=json
	$(RELEASE_DIR)/bench/perflow_render_bench --benchmark_out=$(RELEASE_DIR)/bench_render.json --benchmark_out_format=json
	$(RELEASE_DIR)/bench/perflow_kineto_bench --benchmark_out=$(RELEASE_DIR)/bench_kineto.json --benchmark_out_format=json
	$(RELEASE_DIR)/bench/perflow_model_bench --benchmark_out=$(RELEASE_DIR)/bench_model.json --benchmark_out_format=json
	$(RELEASE_DIR)/bench/perflow_task_table_bench --benchmark_out=$(RELEASE_DIR)/bench_task_table.json --benchmark_out_format=json
	$(RELEASE_DIR)/bench/perflow_sweep_bench --benchmark_out=$(RELEASE_DIR)/bench_sweep.json --benchmark_out_format=json
	$(RELEASE_DIR)/bench/perflow_search_bench --benchmark_out=$(RELEASE_DIR)/bench_search.json --benchmark_out_format=json
	PYTHONPATH=$(abspath $(RELEASE_DIR))/python /usr/bin/python3 bench/python_speed.py $(RELEASE_DIR)/bench/perflow_bench
	/usr/bin/python3 bench/cli_speed.py $(RELEASE_DIR)/perflow

# 10,000 mutated inputs per fuzz target (seed 2026) in the test build (ASan/UBSan): minutes,
# not part of `make test` (docs/development.md).
fuzz-soak: test-deps
	cmake -S . -B $(TEST_DIR) -DCMAKE_BUILD_TYPE=Debug -DPERFLOW_WERROR=ON -DPERFLOW_SANITIZE=address,undefined
	cmake --build $(TEST_DIR) -j $(JOBS) --target fuzz_soak

# docs/schedules.md and docs/schedules/*.svg: every schedule drawn and compared.
gallery: configure-release
	cmake --build $(RELEASE_DIR) -j $(JOBS) --target schedule_gallery
	$(RELEASE_DIR)/examples/schedule_gallery docs

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

format-check: test-deps
	clang-format --dry-run -Werror $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf build

# The Python module (perflow), built next to the release CLI; import it with the line printed.
python: configure-release
	cmake --build $(RELEASE_DIR) -j $(JOBS) --target perflow_python
	@echo "PYTHONPATH=$(abspath $(RELEASE_DIR))/python python3 -c 'import perflow'"
