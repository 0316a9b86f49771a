# seisgpu: build, test, examples and demo.
#
#   make lib        the library (target/release/libseisgpu.so, .so.0 link, .a)
#   make header     regenerate include/seisgpu.h from src/ffi (cbindgen)
#   make examples   build the C and Fortran examples against target/release
#   make examples-cuda  build examples/cuda/pipeline.cu (a CUDA runtime program) with nvcc;
#                   without nvcc it says so and builds nothing
#   make test       install missing test dependencies, run the Rust tests, build and run
#                   the examples, the Python binding's tests, the install (pkg-config,
#                   CMake), C++ header and Qt example tests; non-zero on any failure (this
#                   is what CI runs)
#   make memcheck   the examples and the CPU ABI tests under valgrind memcheck (make test runs it)
#   make fuzz       the long ABI fuzzing run (FUZZ_CALLS calls, default 2,000,000)
#   make demo       build and run the demo: a real section denoised with wavelets, F-X
#                   prediction and wave packets, a 3D cube with wave packets, and the
#                   EM-logging search; its figures out/fig_*.png (matplotlib and NumPy,
#                   installed into .tools/plot the first time; PLOT_PYTHON= names another
#                   Python that has both) and quick-look grayscale PNGs (docs/demo.md)
#   make demo-build build the demo only (target/examples/demo_penobscot, linked from
#                   target/demo_penobscot)
#   make wheel      the Python package's wheel (py3-none-manylinux_*_x86_64, libseisgpu.so
#                   bundled) in target/wheels; docs/python.md
#   make install    install under PREFIX (default /usr/local; DESTDIR too): the shared and
#                   static libraries, headers, Fortran module source, pkg-config and CMake
#                   files (packaging/install.sh)
#   make uninstall  remove what make install put there
#   make clean      remove build outputs and out/
#
# The examples and the demo are linked with an rpath to target/release, so they run
# from the work tree without installing anything.

CARGO ?= cargo
CC ?= cc
ifeq ($(origin FC),default)
FC := gfortran
endif

RELEASE := target/release
RELEASE_ABS := $(abspath $(RELEASE))
BUILD := target/examples
# The Fortran module's .mod and .o; kept out of $(BUILD), which holds only programs.
FMOD := target/fortran
LIB := $(RELEASE)/libseisgpu.so

PREFIX ?= /usr/local
DESTDIR ?=

CFLAGS ?= -std=c11 -O2 -Wall -Wextra -pedantic
FFLAGS ?= -std=f2003 -O2 -Wall -Wextra -pedantic
SEISGPU_LDFLAGS := -L$(RELEASE) -lseisgpu -Wl,-rpath,$(RELEASE_ABS)
DEMO_CFLAGS ?= -O2 -Wall -Wextra
DEMO_LDLIBS ?= -lm -lz
PYTHON ?= python3

# NVRTC from PyPI, unpacked by scripts/install_test_deps.sh.
NVRTC_DIR := $(CURDIR)/.tools/nvrtc/nvidia/cuda_nvrtc/lib
RUN_ENV := LD_LIBRARY_PATH="$(NVRTC_DIR)$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}"

EXAMPLES := $(BUILD)/dwt_denoise_c $(BUILD)/dwt_denoise_f90 $(BUILD)/usfft_c $(BUILD)/usfft_f90 \
	$(BUILD)/fxdecon_2d_c $(BUILD)/fxdecon_3d_f90 $(BUILD)/xcorr_c $(BUILD)/xcorr_f90 \
	$(BUILD)/emlog_c $(BUILD)/emlog_f90 $(BUILD)/progress_f90 $(BUILD)/wavepacket_c \
	$(BUILD)/wavepacket_f90 $(BUILD)/wavepacket_volume_c $(BUILD)/wavepacket_volume_f90
DEMO := $(BUILD)/demo_penobscot
DEMO_SRC := $(addprefix examples/c/demo_,penobscot.c fxdecon.c wavepackets.c segy.c signal.c output.c)

.PHONY: all lib header examples examples-cuda mpi-examples run-examples test demo demo-build demo-plot-deps clean FORCE install uninstall memcheck fuzz wheel

all: lib

lib: $(LIB)

# Cargo decides what to rebuild; the SONAME link lets the examples find the library.
$(LIB): FORCE
	$(CARGO) build --release
	ln -sf libseisgpu.so $(RELEASE)/libseisgpu.so.0

FORCE:

header:
	SEISGPU_UPDATE_HEADER=1 $(CARGO) test --release --test house -- --exact header::header_is_current

examples: lib $(EXAMPLES)

$(BUILD)/dwt_denoise_c: examples/c/dwt_denoise.c include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iinclude $< -o $@ $(SEISGPU_LDFLAGS) -lm

$(BUILD)/fxdecon_2d_c: examples/c/fxdecon_2d.c include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iinclude $< -o $@ $(SEISGPU_LDFLAGS) -lm

$(BUILD)/xcorr_c: examples/c/xcorr.c include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iinclude $< -o $@ $(SEISGPU_LDFLAGS) -lm

$(BUILD)/emlog_c: examples/c/emlog.c include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iinclude $< -o $@ $(SEISGPU_LDFLAGS) -lm

$(BUILD)/wavepacket_c: examples/c/wavepacket.c include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iinclude $< -o $@ $(SEISGPU_LDFLAGS) -lm

$(BUILD)/wavepacket_volume_c: examples/c/wavepacket_volume.c include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iinclude $< -o $@ $(SEISGPU_LDFLAGS) -lm

# The module (seisgpu.mod, seisgpu.o) is built from include/seisgpu.f90 into its own
# folder, then the example against it.
$(FMOD)/seisgpu.o: include/seisgpu.f90
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -c $< -J $(@D) -o $@

$(BUILD)/dwt_denoise_f90: examples/fortran/dwt_denoise.f90 $(FMOD)/seisgpu.o $(LIB)
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -I$(FMOD) $< $(FMOD)/seisgpu.o -o $@ $(SEISGPU_LDFLAGS)

$(BUILD)/usfft_c: examples/c/usfft.c include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iinclude $< -o $@ $(SEISGPU_LDFLAGS) -lm

$(BUILD)/usfft_f90: examples/fortran/usfft.f90 $(FMOD)/seisgpu.o $(LIB)
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -I$(FMOD) $< $(FMOD)/seisgpu.o -o $@ $(SEISGPU_LDFLAGS)

$(BUILD)/fxdecon_3d_f90: examples/fortran/fxdecon_3d.f90 $(FMOD)/seisgpu.o $(LIB)
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -I$(FMOD) $< $(FMOD)/seisgpu.o -o $@ $(SEISGPU_LDFLAGS)

$(BUILD)/xcorr_f90: examples/fortran/xcorr.f90 $(FMOD)/seisgpu.o $(LIB)
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -I$(FMOD) $< $(FMOD)/seisgpu.o -o $@ $(SEISGPU_LDFLAGS)

$(BUILD)/emlog_f90: examples/fortran/emlog.f90 $(FMOD)/seisgpu.o $(LIB)
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -I$(FMOD) $< $(FMOD)/seisgpu.o -o $@ $(SEISGPU_LDFLAGS)

# Its own module (progress_log.mod) goes next to seisgpu.mod, not into the working folder.
$(BUILD)/progress_f90: examples/fortran/progress.f90 $(FMOD)/seisgpu.o $(LIB)
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -I$(FMOD) -J $(FMOD) $< $(FMOD)/seisgpu.o -o $@ $(SEISGPU_LDFLAGS)

$(BUILD)/wavepacket_f90: examples/fortran/wavepacket.f90 $(FMOD)/seisgpu.o $(LIB)
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -I$(FMOD) $< $(FMOD)/seisgpu.o -o $@ $(SEISGPU_LDFLAGS)

$(BUILD)/wavepacket_volume_f90: examples/fortran/wavepacket_volume.f90 $(FMOD)/seisgpu.o $(LIB)
	@mkdir -p $(@D)
	$(FC) $(FFLAGS) -I$(FMOD) $< $(FMOD)/seisgpu.o -o $@ $(SEISGPU_LDFLAGS)

# The CUDA runtime example (device calls on the program's own stream): only where nvcc is
# found, so that machines without the CUDA toolkit (CI) skip it with a message.
NVCC ?= nvcc
NVCCFLAGS ?= -std=c++17 -O2

examples-cuda:
	@if command -v $(NVCC) >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory lib $(BUILD)/pipeline_cuda; \
	else \
		echo "examples-cuda: no $(NVCC) here: examples/cuda/pipeline.cu not built (on the GPU machine: GPU_STEPS=example_pipeline_cuda scripts/gpu_run.sh)"; \
	fi

$(BUILD)/pipeline_cuda: examples/cuda/pipeline.cu include/seisgpu.h include/seisgpu.hpp $(LIB)
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -Iinclude $< -o $@ -L$(RELEASE) -lseisgpu -Xlinker -rpath -Xlinker $(RELEASE_ABS)

# The MPI examples (examples/mpi; the system's mpicc): a network's day of ambient-noise
# correlation over ranks (xcorr_network), the reader of its file (xcorr_read), and a
# volume's wave packets in tiles over ranks (wavepacket_volume).
MPICC ?= mpicc
MPI_BUILD := target/mpi
XCORR_NETWORK_SRC := $(addprefix examples/mpi/,xcorr_network.c xcorr_args.c xcorr_exchange.c \
	xcorr_input.c xcorr_layout.c xcorr_output.c xcorr_stages.c xcorr_write.c mpi_common.c)
WAVEPACKET_VOLUME_SRC := $(addprefix examples/mpi/,wavepacket_volume.c wavepacket_args.c \
	wavepacket_write.c wavepacket_check.c mpi_common.c)

mpi-examples: lib $(MPI_BUILD)/xcorr_network $(MPI_BUILD)/xcorr_read $(MPI_BUILD)/wavepacket_volume

$(MPI_BUILD)/xcorr_network: $(XCORR_NETWORK_SRC) $(wildcard examples/mpi/*.h) include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -Iinclude $(XCORR_NETWORK_SRC) -o $@ $(SEISGPU_LDFLAGS) -lm

$(MPI_BUILD)/wavepacket_volume: $(WAVEPACKET_VOLUME_SRC) $(wildcard examples/mpi/*.h) include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -Iinclude $(WAVEPACKET_VOLUME_SRC) -o $@ $(SEISGPU_LDFLAGS) -lm

$(MPI_BUILD)/xcorr_read: examples/mpi/xcorr_read.c examples/mpi/xcorr_file.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ -lm

run-examples: examples
	$(RUN_ENV) $(BUILD)/dwt_denoise_c
	$(RUN_ENV) $(BUILD)/dwt_denoise_f90
	$(RUN_ENV) $(BUILD)/usfft_c
	$(RUN_ENV) $(BUILD)/usfft_f90
	$(RUN_ENV) $(BUILD)/fxdecon_2d_c
	$(RUN_ENV) $(BUILD)/fxdecon_3d_f90
	$(RUN_ENV) $(BUILD)/xcorr_c
	$(RUN_ENV) $(BUILD)/xcorr_f90
	$(RUN_ENV) $(BUILD)/emlog_c
	$(RUN_ENV) $(BUILD)/emlog_f90
	$(RUN_ENV) $(BUILD)/progress_f90
	$(RUN_ENV) $(BUILD)/wavepacket_c
	$(RUN_ENV) $(BUILD)/wavepacket_f90
	$(RUN_ENV) $(BUILD)/wavepacket_volume_c
	$(RUN_ENV) $(BUILD)/wavepacket_volume_f90

# Each stage runs under tests/stage.sh, which times it; the table ends the output.
STAGE := bash tests/stage.sh

test:
	@$(STAGE) --start
	$(STAGE) deps bash scripts/install_test_deps.sh
	$(STAGE) lib $(MAKE) --no-print-directory lib
	$(STAGE) rust-build $(CARGO) test --release --no-run
	$(STAGE) rust-tests $(RUN_ENV) SEISGPU_REQUIRE_NVRTC=1 SEISGPU_REQUIRE_GFORTRAN=1 $(CARGO) test --release
	$(STAGE) examples $(MAKE) --no-print-directory run-examples
	$(STAGE) wheel $(MAKE) --no-print-directory wheel
	$(STAGE) python $(RUN_ENV) bash tests/python/run.sh
	$(STAGE) install bash tests/install/run.sh
	$(STAGE) cpp bash tests/cpp/run.sh
	$(STAGE) qt bash tests/qt/run.sh
	$(STAGE) mpi bash tests/mpi/run.sh
	$(STAGE) memcheck $(MAKE) --no-print-directory memcheck
	@$(STAGE) --report

# The Python package (pyproject.toml, python/): cargo builds the library into it; the wheel is
# checked (glibc and libgcc_s only) and tagged for manylinux by python/tools/wheel.py.
wheel:
	bash python/tools/build_env.sh
	.tools/python-build/bin/python python/tools/wheel.py target/wheels

install: lib
	bash packaging/install.sh install "$(DESTDIR)$(PREFIX)"

uninstall:
	bash packaging/install.sh uninstall "$(DESTDIR)$(PREFIX)"

memcheck: examples
	bash scripts/memcheck.sh

FUZZ_CALLS ?= 2000000
fuzz: lib
	$(RUN_ENV) SEISGPU_FUZZ_CALLS=$(FUZZ_CALLS) $(CARGO) test --release --test abi -- fuzz_abi:: --nocapture

demo-build: lib $(DEMO) $(BUILD)/emlog_c

$(DEMO): $(DEMO_SRC) examples/c/demo.h include/seisgpu.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(DEMO_CFLAGS) -Iinclude $(DEMO_SRC) -o $@ $(SEISGPU_LDFLAGS) $(DEMO_LDLIBS)
	ln -sf examples/demo_penobscot target/demo_penobscot

# The figures need matplotlib and NumPy: a virtual environment in .tools/plot, made with
# python3 -m venv and filled from PyPI only when it is missing or lacks them.
PLOT_VENV := .tools/plot
PLOT_PYTHON ?= $(PLOT_VENV)/bin/python

demo-plot-deps:
	@if $(PLOT_PYTHON) -c 'import matplotlib, numpy' 2>/dev/null; then :; \
	elif [ "$(PLOT_PYTHON)" != "$(PLOT_VENV)/bin/python" ]; then \
		echo "demo: $(PLOT_PYTHON) has no matplotlib or NumPy" >&2; exit 1; \
	else \
		echo "demo: installing matplotlib and NumPy into $(PLOT_VENV) (python3 -m venv, pip)"; \
		rm -rf $(PLOT_VENV); \
		{ $(PYTHON) -m venv $(PLOT_VENV) && $(PLOT_VENV)/bin/pip install --quiet \
			--disable-pip-version-check 'matplotlib>=3.5' 'numpy>=1.21'; } || \
		{ echo "demo: could not install them (no network? no venv module: Debian's" \
			"python3-venv); or set PLOT_PYTHON to a Python that has both" >&2; exit 1; }; \
	fi

# The figures' tools are installed after the programs ran, so that without a network the
# quick-look PNGs and the raw arrays are there all the same.
demo: demo-build
	@mkdir -p out
	$(RUN_ENV) target/demo_penobscot data/penobscot-xl1155/penobscot_xl1155.sgy data/f3-tiny-cube/f3.sgy out/
	$(RUN_ENV) $(BUILD)/emlog_c out/
	@$(MAKE) --no-print-directory demo-plot-deps
	$(PLOT_PYTHON) examples/python/plot_sections.py out
	$(PLOT_PYTHON) examples/python/plot_cube.py out
	$(PLOT_PYTHON) examples/python/plot_emlog.py out

clean:
	$(CARGO) clean
	rm -rf out
