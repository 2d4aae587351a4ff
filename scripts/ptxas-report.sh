#!/usr/bin/env bash
# Registers, spills, shared memory and resident warps per SM of every hetkit kernel on sm_90 (H100),
# with no GPU: installs NVRTC and ptxas from PyPI (the nvidia-cuda-nvrtc-cu12 and
# nvidia-cuda-nvcc-cu12 wheels) into target/ptxas-venv, compiles every .cu of cuda-kernels as the
# runtime does (NVRTC, compute_90) and runs `ptxas -arch=sm_90 -v` on the PTX.
#   scripts/ptxas-report.sh                              tables on stdout
#   scripts/ptxas-report.sh --markdown target/res.md     also into a file
#   scripts/ptxas-report.sh --filter sort                only modules whose path contains "sort"
# PTXAS_REPORT_CUDA (default 12.9) picks the wheels' CUDA version.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/target/ptxas-venv
cuda=${PTXAS_REPORT_CUDA:-12.9}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
nvrtc=$(ls "$site"/nvidia/cuda_nvrtc/lib/libnvrtc.so.* 2>/dev/null | grep -v builtins | head -1 || true)
ptxas=$site/nvidia/cuda_nvcc/bin/ptxas
if [ -z "$nvrtc" ] || [ ! -x "$ptxas" ]; then
    "$venv/bin/pip" install --quiet "nvidia-cuda-nvrtc-cu12==$cuda.*" "nvidia-cuda-nvcc-cu12==$cuda.*"
    nvrtc=$(ls "$site"/nvidia/cuda_nvrtc/lib/libnvrtc.so.* | grep -v builtins | head -1)
fi
exec "$venv/bin/python" "$root/scripts/ptxas-report.py" --nvrtc "$nvrtc" --ptxas "$ptxas" \
    --work "$root/target/ptxas-report" "$@"
