#!/usr/bin/env bash
# Runs the workspace's GPU tests on the CUDA emulator in scripts/cuda-emu (no GPU needed): builds
# the stand-in libcuda/libnvrtc with g++, puts it first on LD_LIBRARY_PATH and runs
#   cargo test [ARGS]    with HETKIT_REQUIRE_GPU=1, so no GPU test may skip.
# Examples:
#   scripts/cuda-emu.sh --workspace --release            every test
#   scripts/cuda-emu.sh -p prefix-ops --release gpu_      one crate, tests named gpu_*
#   HETKIT_FORCE_NVRTC=1 scripts/cuda-emu.sh ...          the NVRTC path instead of nvcc's PTX
# Environment: HETKIT_EMU_SEED (thread interleaving), HETKIT_EMU_CACHE (compiled kernels),
# HETKIT_EMU_OPT (g++ optimisation of kernels, default -O2). See scripts/cuda-emu/README.md.
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
export HETKIT_EMU_HOME="$emu" HETKIT_EMU_KERNELS="$root/cuda-kernels" HETKIT_REQUIRE_GPU=1
cd "$root"
exec cargo test "$@"
