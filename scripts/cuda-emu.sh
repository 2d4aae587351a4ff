#!/usr/bin/env bash
# Runs the workspace's GPU tests on the CUDA emulator in scripts/cuda-emu (no GPU needed): builds
# the stand-in libcuda/libnvrtc with g++, puts it first on LD_LIBRARY_PATH and runs
#   cargo test [ARGS]    with HETKIT_REQUIRE_GPU=1, so no GPU test may skip.
# Examples:
#   scripts/cuda-emu.sh --workspace --release            every test
#   scripts/cuda-emu.sh -p prefix-ops --release gpu_      one crate, tests named gpu_*
#   HETKIT_FORCE_NVRTC=1 scripts/cuda-emu.sh ...          the NVRTC path instead of nvcc's PTX
# Environment: HETKIT_EMU_SEED (thread interleaving), HETKIT_EMU_CACHE (compiled kernels),
# HETKIT_EMU_OPT (g++ optimisation of kernels, default -O2), HETKIT_EMU_ASAN=1 (kernels under
# AddressSanitizer: out-of-bounds accesses stop the test), HETKIT_EMU_DRIVER_VERSION,
# HETKIT_EMU_NVRTC_VERSION and HETKIT_EMU_CC (an old driver, a new NVRTC, a new device). See
# scripts/cuda-emu/README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
emu=$root/scripts/cuda-emu
out=$root/target/cuda-emu
mkdir -p "$out"
if [ ! -f "$out/libcuda.so" ] || [ "$emu/driver.cpp" -nt "$out/libcuda.so" ] || [ "$emu/device.hpp" -nt "$out/libcuda.so" ] \
    || [ "$emu/fiber.hpp" -nt "$out/libcuda.so" ]; then
    g++ -std=c++17 -O2 -fPIC -shared -o "$out/libcuda.so" "$emu/driver.cpp"
fi
ln -sf libcuda.so "$out/libcuda.so.1"
ln -sf libcuda.so "$out/libnvrtc.so"
export LD_LIBRARY_PATH="$out${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ "${HETKIT_EMU_ASAN:-0}" = 1 ]; then
    # Kernels built with AddressSanitizer; device buffers come from its allocator, so an access past
    # the end of one stops the test with a report (compute-sanitizer memcheck's job on a GPU).
    export LD_PRELOAD="$(g++ -print-file-name=libasan.so)${LD_PRELOAD:+:$LD_PRELOAD}"
    export ASAN_OPTIONS="detect_leaks=0:detect_stack_use_after_return=0:${ASAN_OPTIONS:-}"
fi
# The runtime's module cache gets a folder of its own: the emulator's images name its compiled
# libraries and mean nothing to a real driver (one would refuse them and recompile).
export HETKIT_CACHE_DIR="${HETKIT_CACHE_DIR:-$out/module-cache}"
export HETKIT_EMU_HOME="$emu" HETKIT_EMU_KERNELS="$root/cuda-kernels" HETKIT_REQUIRE_GPU=1
cd "$root"
exec cargo test "$@"
