#!/usr/bin/env bash
# Runs the bundle made by scripts/gpu-bundle.sh on a GPU machine (no Rust toolchain needed).
#   run.sh [test] [FILTER]     every test binary with HETKIT_REQUIRE_GPU=1; when the build embedded
#                              nvcc PTX, a second pass with HETKIT_FORCE_NVRTC=1 tests the NVRTC path
#                              (HETKIT_PASSES=ptx or =nvrtc runs one of the two)
#   run.sh bench [FILTER]      every criterion bench
#   run.sh sanitize [FILTER]   compute-sanitizer memcheck and racecheck over the GPU tests
#   run.sh tour                the demonstration example
#   run.sh peers               builds the CUDA peer harnesses in peers/ with nvcc for this GPU and
#                              runs them and torch_peers.py (JSON lines of milliseconds)
#   run.sh tasmanian           builds Tasmanian with CUDA from the bundled source and times it
# Exits non-zero when anything fails.
set -u
bundle=$(cd "$(dirname "$0")" && pwd)
mode=${1:-test}
filter=${2:-}

# The binaries travel xz-compressed: unpack them once into a temporary folder (python3's lzma
# when the machine has no xz). Beside the bundle when it is writable (/tmp may be mounted
# noexec), removed on exit.
here=$(mktemp -d "$bundle/.unpacked.XXXXXX" 2>/dev/null || mktemp -d)
shim=$(mktemp -d)
trap 'rm -rf "$here" "$shim"' EXIT
cp "$bundle/PTX_EMBEDDED" "$here/" 2>/dev/null
for dir in tests benches examples; do
    mkdir -p "$here/$dir"
    for f in "$bundle/$dir"/*.xz; do
        [ -e "$f" ] || continue
        dst="$here/$dir/$(basename "$f" .xz)"
        if command -v xz >/dev/null; then
            xz -dc "$f" >"$dst"
        else
            python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$f" "$dst"
        fi
        chmod +x "$dst"
    done
done

# cudarc opens libnvrtc.so or libnvrtc.so.12; a CUDA 13 machine has libnvrtc.so.13: offer it under
# the plain name, from the toolkit or from a Python wheel, with its builtins library beside it.
for cand in /usr/local/cuda/lib64/libnvrtc.so.* /usr/local/cuda/targets/*/lib/libnvrtc.so.* \
    $(ldconfig -p 2>/dev/null | awk '/libnvrtc\.so/ {print $NF}') \
    $(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null | xargs -I{} sh -c 'ls {}/nvidia/cu*/lib/libnvrtc.so.* {}/nvidia/cuda_nvrtc/lib/libnvrtc.so.* 2>/dev/null'); do
    case "$cand" in *builtins*|*alt*) continue ;; esac
    if [ -f "$cand" ]; then
        ln -sf "$cand" "$shim/libnvrtc.so"
        export LD_LIBRARY_PATH="$shim:$(dirname "$cand"):${LD_LIBRARY_PATH:-}"
        echo "NVRTC: $cand"
        break
    fi
done
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

# compute-sanitizer ships with the toolkit, often outside PATH.
sanitizer=$(command -v compute-sanitizer 2>/dev/null)
for cand in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer \
    /usr/local/cuda-*/bin/compute-sanitizer; do
    [ -n "$sanitizer" ] && break
    [ -x "$cand" ] && sanitizer=$cand
done

passed=0
failed=0
failed_names=()
run_one() { # label, command...
    local label=$1
    shift
    echo "=== $label"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failed_names+=("$label")
    fi
}

case "$mode" in
test)
    passes=("ptx")
    [ "$(cat "$here/PTX_EMBEDDED" 2>/dev/null)" = 1 ] && passes+=("nvrtc")
    # HETKIT_PASSES="ptx" or "nvrtc" runs one pass only (to split a run across time limits).
    if [ -n "${HETKIT_PASSES:-}" ]; then read -r -a passes <<<"$HETKIT_PASSES"; fi
    for pass in "${passes[@]}"; do
        for bin in "$here"/tests/*; do
            if [ "$pass" = nvrtc ]; then
                run_one "nvrtc:$(basename "$bin")" env HETKIT_REQUIRE_GPU=1 HETKIT_FORCE_NVRTC=1 "$bin" $filter
            else
                run_one "$(basename "$bin")" env HETKIT_REQUIRE_GPU=1 "$bin" $filter
            fi
        done
    done
    ;;
bench)
    for bin in "$here"/benches/*; do
        run_one "$(basename "$bin")" "$bin" --bench $filter
    done
    ;;
tour)
    for bin in "$here"/examples/*; do
        run_one "$(basename "$bin")" "$bin"
    done
    ;;
sanitize)
    if [ -z "$sanitizer" ]; then
        echo "compute-sanitizer not found (PATH, /usr/local/cuda)" >&2
        exit 1
    fi
    echo "compute-sanitizer: $sanitizer"
    for tool in memcheck racecheck; do
        for bin in "$here"/tests/*; do
            run_one "$tool:$(basename "$bin")" env HETKIT_REQUIRE_GPU=1 "$sanitizer" --tool "$tool" \
                --error-exitcode 1 "$bin" --test-threads=1 ${filter:-gpu}
        done
    done
    ;;
peers)
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
    work=$(mktemp -d "$bundle/.peers.XXXXXX" 2>/dev/null || mktemp -d)
    for src in "$bundle"/peers/*.cu; do
        [ -e "$src" ] || continue
        exe="$work/$(basename "$src" .cu)"
        run_one "build:$(basename "$src")" nvcc -O3 -std=c++17 -arch="sm_${arch:-90}" "$src" -lcusparse -o "$exe"
        if [ -x "$exe" ]; then run_one "$(basename "$exe")" "$exe"; fi
    done
    if [ -f "$bundle/peers/torch_peers.py" ]; then
        run_one torch_peers python3 "$bundle/peers/torch_peers.py"
    fi
    ;;
tasmanian)
    tarball=$(ls "$bundle"/peers/tasmanian-*.tar.gz 2>/dev/null | head -1)
    if [ -n "$tarball" ] && [ -f "$bundle/peers/tasmanian_gpu.sh" ]; then
        run_one tasmanian_gpu bash "$bundle/peers/tasmanian_gpu.sh" "$tarball"
    else
        echo "no Tasmanian source or script in $bundle/peers" >&2
        failed=$((failed + 1))
    fi
    ;;
*)
    echo "usage: run.sh [test|bench|sanitize|tour|peers|tasmanian] [FILTER]" >&2
    exit 2
    ;;
esac

echo
# ${arr[@]+...}: an empty array is "unbound" under set -u in bash before 4.4.
for n in ${failed_names[@]+"${failed_names[@]}"}; do echo "FAILED: $n"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
