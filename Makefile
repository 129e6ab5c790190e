# kgen - a deep-learning compiler in C11 + libc.
# `make` builds ./kgen and libkgen.a; `make test` runs every test; see README.md.

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -Wall -Wextra
BUILD   ?= build
SHELL   := /bin/bash

# every folder's .c files but the command line's (gen/main.c)
SRC_DIRS := ir ir/ops lower onnx schedule emit gen
LIB_SRC := $(filter-out gen/main.c,$(sort $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c))))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/templates.o
HEADERS := $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.h))
TEMPLATES := $(sort $(wildcard templates/*.h templates/*.mjs templates/*.m templates/*.mk templates/*.wgsl))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all test unit sanitize bench bench-zoo bench-zoo-wasm golden demo web-demo clean conformance fuzz fuzz-build fuzz-graphs

all: kgen libkgen.a

$(BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) -c $< -o $@

$(BUILD)/embed: templates/embed.c
	@mkdir -p $(BUILD)
	$(CC) $(WARN) -O1 $< -o $@

$(BUILD)/templates.c: $(BUILD)/embed $(TEMPLATES)
	$(BUILD)/embed $(foreach t,$(TEMPLATES),$(notdir $(t))=$(t)) > $@

$(BUILD)/templates.o: $(BUILD)/templates.c
	$(CC) $(WARN) $(CFLAGS) -c $< -o $@

$(BUILD)/libkgen.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/kgen: $(BUILD)/gen/main.o $(BUILD)/libkgen.a
	$(CC) $(CFLAGS) $^ -lm -o $@

kgen: $(BUILD)/kgen
	cp $< $@.tmp && mv -f $@.tmp $@

libkgen.a: $(BUILD)/libkgen.a
	cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libkgen.a $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $< $(BUILD)/libkgen.a -lm -o $@

unit: $(UNIT_BIN)

# The whole suite; the last line is "N passed, N failed, N skipped".
test: all unit $(BUILD)/graphgen
	@KGEN=./kgen BUILD=$(BUILD) bash tests/run.sh

# The same suite with kgen and the unit tests built under ASan and UBSan, and the C that
# kgen generates too (KGEN_GEN_CFLAGS: the examples, the ONNX conformance set, the real
# models), its inputs, outputs and arena allocated at exactly their size (kgen_io.h).
# Generated code keeps UBSan's recoverable checks (clang 14 takes minutes on a large
# model with -fno-sanitize-recover) and halts on the first report through UBSAN_OPTIONS.
SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
sanitize:
	$(MAKE) BUILD=build-san CC=clang CFLAGS="$(SAN_FLAGS) -fno-sanitize-recover=all" build-san/kgen unit
	@KGEN=build-san/kgen BUILD=build-san CC=clang KGEN_API_CC="clang -fsanitize=address,undefined" \
	  KGEN_GEN_CFLAGS="$(SAN_FLAGS)" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  bash tests/run.sh

# Regenerate the committed generated output and golden files on purpose.
golden: kgen
	bash tests/golden.sh --update

conformance: kgen
	bash tests/conformance.sh

bench: kgen
	bash tests/bench.sh

# every model of the model zoo (tests/bench/zoo.py): kgen's C against onnxruntime-node, and
# its WebAssembly against onnxruntime-web (`make bench` runs their quick subset)
bench-zoo: kgen
	bash tests/bench/zoo.sh build/bench full

bench-zoo-wasm: kgen
	bash tests/bench/zoo_wasm.sh build/bench full

demo: kgen
	bash tests/demo.sh

# The browser demo (examples/web): the trained digit CNN (tests/models/digits) compiled for js, wasm
# (SIMD128) and, when kgen has the target, webgpu into $(BUILD)/web, served with the page on
# http://127.0.0.1:$(WEB_PORT)/ until Ctrl-C.
WEB_PORT ?= 8080
web-demo: kgen
	KGEN=./kgen bash examples/web/build.sh $(BUILD)/web
	node examples/web/serve.mjs --port $(WEB_PORT) examples/web /models=$(BUILD)/web

# Fuzzing (tests/fuzz/README.md): libFuzzer targets over the ONNX importer, the .kg parser
# and the runner's readers, with the library built under ASan+UBSan into build-fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_BUILD := build-fuzz
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_TARGETS := fuzz_onnx fuzz_kg fuzz_io
FUZZ_BIN := $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%) $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/plain/%) $(FUZZ_BUILD)/mkseeds

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang CFLAGS="$(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link" $(FUZZ_BUILD)/libkgen.a
	$(MAKE) $(FUZZ_BIN)

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_BUILD)/libkgen.a $(HEADERS) templates/kgen_io.h
	clang $(WARN) $(FUZZ_CFLAGS) -fsanitize=fuzzer -I. -Itemplates $< $(FUZZ_BUILD)/libkgen.a -lm -o $@

$(FUZZ_BUILD)/plain/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/driver.c $(FUZZ_BUILD)/libkgen.a $(HEADERS) templates/kgen_io.h
	@mkdir -p $(dir $@)
	clang $(WARN) $(FUZZ_CFLAGS) -I. -Itemplates $< tests/fuzz/driver.c $(FUZZ_BUILD)/libkgen.a -lm -o $@

$(FUZZ_BUILD)/mkseeds: tests/fuzz/mkseeds.c templates/kgen_io.h
	clang $(WARN) -O1 -Itemplates $< -o $@

fuzz: fuzz-build
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_BUILD=$(FUZZ_BUILD) bash tests/fuzz/fuzz.sh

# The random-graph differential test (tests/fuzz/README.md): N graphs from seed SEED on,
# interpreter (and onnxruntime, when installed) against the TARGETS; `make test` runs 40.
N ?= 200
SEED ?= 1
TARGETS ?= c c-nchw c-avx2 opencl js wasm wasm-simd
$(BUILD)/graphgen: tests/fuzz/graphgen.c
	@mkdir -p $(BUILD)
	$(CC) $(WARN) -O2 $< -lm -o $@

fuzz-graphs: kgen $(BUILD)/graphgen
	FUZZ_TARGETS="$(TARGETS)" BUILD=$(BUILD) bash tests/fuzz_graphs.sh $(SEED) $(N)

clean:
	rm -rf build build-san build-fuzz kgen libkgen.a
