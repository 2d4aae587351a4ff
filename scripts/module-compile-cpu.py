#!/usr/bin/env python3
"""NVRTC CPU seconds per module of two source trees, interleaved per repetition (the same load
for both), for the module-size table of docs/src/cuda/index.md. NVRTC runs in this process on
one thread, so the process CPU time around nvrtcCompileProgram is the compile's own (wall time on
a loaded machine is not); ptxas -arch=sm_90 is a child, its CPU time taken on the first
repetition. Needs target/ptxas-venv from scripts/ptxas-report.sh in AFTER.

Usage: scripts/module-compile-cpu.py BEFORE AFTER REPS
  BEFORE, AFTER: roots of two checkouts (e.g. `git archive HEAD~1 cuda-kernels scripts | tar -x -C /tmp/old`)
Prints a markdown table; the raw numbers go to /tmp/module-compile-cpu.json."""
import glob, importlib.util, json, os, re, resource, statistics, subprocess, sys, tempfile, time
BEFORE, AFTER, REPS = sys.argv[1], sys.argv[2], int(sys.argv[3])
# The module families split per element type (issue 17).
FAMILIES = ["scan_batched", "scan_lookback", "scan_lookback_rows", "scan_networks", "scan_segmented",
            "segmented_reduce", "segmented_scan", "segmented_ops"]
def load(root):
    spec = importlib.util.spec_from_file_location("rep" + str(hash(root)), os.path.join(root, "scripts/ptxas-report.py"))
    rep = importlib.util.module_from_spec(spec); spec.loader.exec_module(rep)
    rep.KERNELS = os.path.join(root, "cuda-kernels")
    mods = []
    for path in rep.kernel_files():
        name = os.path.relpath(path, rep.KERNELS)[:-3]
        base = name.split("/")[-1]
        if name.startswith("prefix/") and any(base == f or re.fullmatch(f + r"_(i32|u32|f32|i64|u64|f64)", base) for f in FAMILIES):
            mods.append((name, rep.inline_includes(path, set())))
    return rep, mods
venv = os.path.join(AFTER, "target/ptxas-venv/lib/python3.11/site-packages/nvidia")
lib = [p for p in glob.glob(venv + "/cuda_nvrtc/lib/libnvrtc.so.*") if "builtins" not in p][0]
ptxas = venv + "/cuda_nvcc/bin/ptxas"
rep, before = load(BEFORE)
_, after = load(AFTER)
nv = rep.Nvrtc(lib)
res = {}
for r in range(REPS):
    for tag, mods in (("before", before), ("after", after)):
        for name, src in mods:
            c0, w0 = time.process_time(), time.monotonic()
            ptx = nv.compile_ptx(src, name.replace("/", "_") + ".cu")
            d = res.setdefault((tag, name), {"cpu": [], "wall": [], "entries": len(re.findall(r"^\.(?:visible )?\.?entry ", ptx, re.M)) or len(re.findall(r"\.entry ", ptx)), "src": len(src), "ptx": len(ptx)})
            d["cpu"].append(time.process_time() - c0); d["wall"].append(time.monotonic() - w0)
            if r == 0:
                stem = os.path.join(tempfile.gettempdir(), name.replace("/", "__"))
                open(stem + ".ptx", "w").write(ptx)
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([ptxas, "-arch=sm_90", "-o", stem + ".cubin", stem + ".ptx"], check=True)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                d["ptxas"] = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
                d["cubin"] = os.path.getsize(stem + ".cubin")
        print(f"rep {r} {tag} done", file=sys.stderr, flush=True)
print(f"NVRTC {nv.version()}; medians of {REPS}")
print("| | module | entry points | inlined source (B) | PTX (B) | cubin (B) | NVRTC CPU (s) | NVRTC wall (s) | ptxas CPU (s) |")
for (tag, name), d in res.items():
    print(f"| {tag} | `{name}` | {d['entries']} | {d['src']} | {d['ptx']} | {d['cubin']} | {statistics.median(d['cpu']):.2f} | {statistics.median(d['wall']):.2f} | {d['ptxas']:.2f} |")
json.dump({f"{k[0]} {k[1]}": v for k, v in res.items()}, open(os.path.join(tempfile.gettempdir(), "module-compile-cpu.json"), "w"))
