#!/usr/bin/env bash
# Builds every test and bench binary of the workspace in release mode (without running them),
# strips them, and copies them into target/gpu-bundle/ with run.sh. The folder alone, copied to an
# x86-64 Linux machine with an NVIDIA driver and no Rust toolchain, runs every GPU test:
#
#   scripts/gpu-bundle.sh                   # build the bundle
#   target/gpu-bundle/run.sh                # all tests, HETKIT_REQUIRE_GPU=1, PTX then NVRTC path
#   target/gpu-bundle/run.sh bench [FILTER] # criterion benches
#   target/gpu-bundle/run.sh sanitize [FILTER]  # compute-sanitizer memcheck + racecheck on GPU tests
#   target/gpu-bundle/run.sh peers          # CUB, cuSPARSE, torch baselines (nvcc on the GPU machine)
#   target/gpu-bundle/run.sh tasmanian      # Tasmanian built with CUDA (cmake, several minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/gpu-bundle
rm -rf "$out"
mkdir -p "$out/tests" "$out/benches" "$out/examples"

# Prints "kind<TAB>name<TAB>path" for each executable cargo reports.
executables() {
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        t = m["target"]
        kind = "bench" if "bench" in t["kind"] else "example" if "example" in t["kind"] else "test"
        # package_id: "path+file:///dir#version" or "path+file:///dir#name@version"
        left, _, right = m["package_id"].partition("#")
        pkg = right.split("@")[0] if "@" in right else left.rstrip("/").split("/")[-1]
        name, exe = t["name"], m["executable"]
        print(f"{kind}\t{pkg}__{name}\t{exe}")
'
}

# Build first (a failure stops here with the end of cargo's log), then collect the executables.
if ! {
    cargo test --workspace --release --no-run --message-format=json
    cargo bench --workspace --no-run --message-format=json
} >"target/gpu-bundle-build.json" 2>"target/gpu-bundle-build.log"; then
    tail -n 40 target/gpu-bundle-build.log >&2
    echo "gpu-bundle: cargo build failed (full log: target/gpu-bundle-build.log)" >&2
    exit 1
fi
executables <"target/gpu-bundle-build.json" | sort -u | while IFS=$'\t' read -r kind name path; do
    case "$kind" in bench) dir=benches ;; example) dir=examples ;; *) dir=tests ;; esac
    # Benches built by `cargo bench` also appear as test targets of the bench kind; keep one copy.
    [ -e "$out/$dir/$name" ] && continue
    cp "$path" "$out/$dir/$name"
    strip "$out/$dir/$name"
done

python3 - "$out" <<'PY'
import sys, re, pathlib
# Record whether the build embedded nvcc PTX, so run.sh knows whether a second (NVRTC) pass is a
# separate path worth running.
out = pathlib.Path(sys.argv[1])
ptx = any(b".version" in p.read_bytes() and b".target sm_" in p.read_bytes() for p in (out / "tests").iterdir() if p.is_file())
(out / "PTX_EMBEDDED").write_text("1\n" if ptx else "0\n")
PY
grep -E "^error" target/gpu-bundle-build.log >&2 && exit 1
# Every binary that links cuda-kernels carries all kernels as PTX and source text (~17 MiB
# stripped); xz shrinks that text ~15x. run.sh unpacks into a temporary folder.
for f in "$out"/tests/* "$out"/benches/* "$out"/examples/*; do
    xz -9 -T0 "$f"
done
cp scripts/gpu-bundle-run.sh "$out/run.sh"
chmod +x "$out/run.sh"

# Peer harnesses, compiled and run on the GPU machine by `run.sh peers` / `run.sh tasmanian`: ours,
# and the shared research ones when this checkout sits beside them.
mkdir -p "$out/peers"
cp benches/peers/gpu/*.cu "$out/peers/"
for f in cuda_peers.cu torch_peers.py tasmanian_gpu.sh; do
    if [ -f "../shared/research/$f" ]; then cp "../shared/research/$f" "$out/peers/"; fi
done
# The GPU machine has no network: bring Tasmanian's source along for tasmanian_gpu.sh.
python3 - "$out/peers" <<'PY' || echo "Tasmanian source not fetched (no network?): run.sh tasmanian will skip" >&2
import json, sys, urllib.request
meta = json.load(urllib.request.urlopen("https://pypi.org/pypi/Tasmanian/json", timeout=30))
sdist = next(u for u in meta["releases"]["8.2"] if u["packagetype"] == "sdist")
urllib.request.urlretrieve(sdist["url"], f"{sys.argv[1]}/{sdist['filename']}")
PY
size=$(du -sm "$out" | cut -f1)
echo "bundle: $out, $(ls "$out/tests" | wc -l) test, $(ls "$out/benches" | wc -l) bench and $(ls "$out/examples" | wc -l) example binaries, ${size} MiB, PTX embedded: $(cat "$out/PTX_EMBEDDED")"
if [ "$size" -ge 50 ]; then
    echo "bundle is ${size} MiB, over the 50 MiB limit" >&2
    exit 1
fi
