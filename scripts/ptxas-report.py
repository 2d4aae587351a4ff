#!/usr/bin/env python3
"""Resource report of every hetkit kernel for sm_90 (H100), without a GPU.

Each `.cu` file of cuda-kernels/ is compiled the way the runtime compiles it (quoted includes
inlined, NVRTC with -std=c++17 -lineinfo -DHETKIT_NVRTC=1) to PTX for compute_90, and that PTX is
assembled by `ptxas -arch=sm_90 -v`. Per kernel the report gives registers, spill stores/loads,
stack frame, static shared memory and, at the block size (and dynamic shared memory) the host code
launches it with by default, the resident blocks and warps per SM from the H100 limits: 64K
registers (4 partitions of 16K, allocated per warp in units of 256), 228 KB shared memory per SM
(227 KB per block, 1 KB reserved per block), 2048 threads (64 warps) and 32 blocks per SM.

Usage: scripts/ptxas-report.sh [--markdown OUT.md] [--filter SUBSTRING]
(the shell wrapper installs NVRTC and ptxas from PyPI into target/ptxas-venv).
"""
import argparse
import ctypes
import hashlib
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "cuda-kernels")
SKIP_DIRS = {"src", "target", "benches", "tests", "examples"}
OPTIONS = [b"--gpu-architecture=compute_90", b"-std=c++17", b"-lineinfo", b"-DHETKIT_NVRTC=1"]

# H100 (sm_90) per-SM limits.
REGS_PER_PARTITION = 16384
PARTITIONS = 4
REG_UNIT = 256  # registers are allocated per warp in units of 256
MAX_WARPS = 64
MAX_BLOCKS = 32
SHARED_PER_SM = 228 * 1024
SHARED_PER_BLOCK_MAX = 227 * 1024
SHARED_RESERVED_PER_BLOCK = 1024
SHARED_UNIT = 128

# Default launch shapes as the host code states them (crates/prefix-ops and crates/sg-cuda at the
# time of writing; update with the host code). Each entry: name pattern, and a function of the
# kernel name giving (threads per block, dynamic shared bytes, where the shape comes from).
# Shapes that depend on the problem (sort rows, tridiagonal systems) are given for one stated case.
SHARED_OPTIN = 227 * 1024


def sort_block(kernel):
    """The longest row (up to 32768 keys) that fits the opt-in shared memory: min(n/4, 1024) threads."""
    per_key = sort_key_bytes(kernel)
    n = next((n for n in (32768, 16384, 8192, 4096) if n * per_key <= SHARED_OPTIN), None)
    if n is None:
        return None, 0, "sort/gpu.rs plan_block: no row fits"
    return min(n // 4, 1024), n * per_key, f"sort/gpu.rs plan_block: one row of {n} keys"


def sort_radix_pass(kernel):
    """256 threads, a tile of 4096 (4-byte) or 2048 (8-byte) keys and their values in dynamic shared memory."""
    parts = [p for p in kernel.split("_") if p in SCALAR_BYTES]
    kb = SCALAR_BYTES[parts[0]]
    vb = SCALAR_BYTES[parts[1]] if len(parts) > 1 else 0
    tile = 4096 if kb == 4 else 2048
    return 256, tile * (kb + vb), f"sort/gpu.rs radix_long: 256 threads, tile of {tile} keys"


def tridiag_block(kernel):
    t = scalar_bytes(kernel)
    eq = 4 * t
    # TPR's default slice: 1024 equations for f32, 512 for f64 (tridiagonal/gpu.rs choose).
    slice_ = 1024 if t == 4 else 512
    if kernel.startswith("tridiag_cr_pcr"):
        return 512, 3 * 1024 * eq + 1024 * t, "tridiagonal/gpu.rs cr_pcr: m = 1024 (the largest it is chosen for)"
    if kernel.startswith("tridiag_wm"):
        return 512, 2 * 512 * eq, "tridiagonal/gpu.rs wm: m = 512 (not a default solver)"
    if kernel.startswith("tridiag_rr"):
        return 512, 2 * 512 * 2 * eq, "tridiagonal/gpu.rs rr: m = 512, two buffers (not a default solver)"
    # Stage 1: four swizzled arrays (the slice, then the bottom chain's levels, each rounded up
    # to 32); stage 3: the levels' unknowns (tridiagonal/gpu_banks.rs).
    levels = sum(-(-(slice_ >> k) // 32) * 32 for k in range(1, slice_.bit_length()))
    if kernel.startswith("tridiag_tpr_stage1"):
        return slice_ // 2, 4 * (slice_ + levels) * t, f"tridiagonal/gpu.rs tpr: default slice {slice_}"
    if kernel.startswith("tridiag_tpr_stage3"):
        return slice_ // 2, levels * t, f"tridiagonal/gpu.rs tpr: default slice {slice_}"
    # Stage 2 in one block: 2^20 equations give 1024 (f32) or 2048 (f64) slices.
    slices = (1 << 20) // slice_
    return min(1024, slices // 2), 3 * slices * eq + slices * t, f"tridiagonal/gpu.rs tpr: m = 2^20, {slices} slices"


# Default points per thread of sg-cuda's evaluation per (type, d = 1..16): plan.rs
# default_points_per_thread, by occupancy from these kernels' registers (checked there by
# defaults_match_the_book).
SG_EVAL_DEFAULT_PT = {
    "f32": [4, 4, 4, 4, 4, 2, 4, 2, 2, 1, 1, 1, 2, 2, 1, 1],
    "f64": [4, 2, 4, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
}


def is_default(kernel):
    """Whether a default configuration launches the kernel (False: only an explicit choice does)."""
    m = re.match(r"sg_eval_(f32|f64)_d(\d+)_p(\d+)$", kernel)
    if m:
        return int(m.group(3)) == SG_EVAL_DEFAULT_PT[m.group(1)][int(m.group(2)) - 1]
    # Selectable tridiagonal solvers that `choose` never picks.
    return not re.match(r"tridiag_(rr|wm|pivot)_", kernel)


LAUNCH_DEFAULTS = [
    (r"^axpy_", lambda k: (256, 0, "blas.rs: 256 threads")),
    (r"^scan_scatter_", lambda k: (256, 0, "scan/gpu.rs: THREADS = 256")),
    (r"^scan_", lambda k: (256, 0, "scan/gpu.rs: THREADS = 256 (= HK_SCAN_THREADS)")),
    (r"^sort_(rows|segs)_", sort_block),
    (r"^sort_radix_hist_", lambda k: (256, 0, "sort/gpu.rs radix_long: 256 threads")),
    (r"^sort_radix_pass_", sort_radix_pass),
    (r"^tridiag_(thomas|pivot)_", lambda k: (128, 0, "tridiagonal/gpu.rs: PER_SYSTEM_THREADS = 128")),
    (r"^tridiag_tpr_stage2_thread_", lambda k: (128, 0, "tridiagonal/gpu.rs: PER_SYSTEM_THREADS = 128")),
    (r"^tridiag_", tridiag_block),
    (r"^sg_eval_", lambda k: (128, 0, "sg-cuda EvalConfig: 128 threads (staged trie not counted)")),
    (r"^sg_spvm_", lambda k: (256, 0, "sg-cuda SpvmConfig: 256 threads")),
    (r"^sg_(de)?hierarchize_", lambda k: (256, 0, "sg-cuda SweepConfig: 256 threads")),
]

SCALAR_BYTES = {"f32": 4, "f64": 8, "i32": 4, "u32": 4, "i64": 8, "u64": 8}


def kernel_files():
    out = []
    for dirpath, dirnames, filenames in os.walk(KERNELS):
        rel = os.path.relpath(dirpath, KERNELS)
        if rel == ".":
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")]
        out += [os.path.join(dirpath, f) for f in filenames if f.endswith(".cu")]
    return sorted(out)


def inline_includes(path, seen):
    """The file with each quoted #include inlined once per translation unit, like build.rs."""
    real = os.path.realpath(path)
    if real in seen:
        return ""
    seen.add(real)
    lines = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            s = line.lstrip()
            if s.startswith("#pragma once"):
                continue
            m = re.match(r'#include\s*"([^"]+)"', s)
            if m:
                lines.append(inline_includes(os.path.join(os.path.dirname(path), m.group(1)), seen))
                continue
            lines.append(line if line.endswith("\n") else line + "\n")
    return "".join(lines)


class Nvrtc:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def check(self, r, what):
        if r != 0:
            raise RuntimeError(f"{what}: {self.lib.nvrtcGetErrorString(r).decode()}")

    def version(self):
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        return f"{major.value}.{minor.value}"

    def compile_ptx(self, source, name):
        prog = ctypes.c_void_p()
        self.check(
            self.lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None),
            "nvrtcCreateProgram",
        )
        try:
            opts = (ctypes.c_char_p * len(OPTIONS))(*OPTIONS)
            r = self.lib.nvrtcCompileProgram(prog, len(OPTIONS), opts)
            if r != 0:
                size = ctypes.c_size_t()
                self.lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
                log = ctypes.create_string_buffer(size.value)
                self.lib.nvrtcGetProgramLog(prog, log)
                raise RuntimeError(f"NVRTC failed on {name}:\n{log.value.decode(errors='replace')}")
            size = ctypes.c_size_t()
            self.check(self.lib.nvrtcGetPTXSize(prog, ctypes.byref(size)), "nvrtcGetPTXSize")
            buf = ctypes.create_string_buffer(size.value)
            self.check(self.lib.nvrtcGetPTX(prog, buf), "nvrtcGetPTX")
            return buf.value.decode()
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(prog))


def run_ptxas(ptxas, ptx_path, cubin_path):
    r = subprocess.run([ptxas, "-arch=sm_90", "-v", "-o", cubin_path, ptx_path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ptxas failed on {ptx_path}:\n{r.stderr}")
    return r.stderr


def ptxas_info(log):
    """Per entry: registers, spills, stack, static shared memory, from `ptxas -v`'s log."""
    info, current = {}, None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            current = m.group(1)
            info[current] = {"regs": 0, "stack": 0, "spill_st": 0, "spill_ld": 0, "smem": 0}
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            info[current].update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            info[current]["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            info[current]["smem"] = int(s.group(1)) if s else 0
    return info


def maxntid(ptx):
    """Entry name -> the x of `.maxntid` (its __launch_bounds__), when it has one."""
    out = {}
    for m in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)\s*((?:\.\w+[^{]*?)*)\{", ptx, re.S):
        t = re.search(r"\.maxntid\s+(\d+)", m.group(3))
        if t:
            out[m.group(1)] = int(t.group(1))
    return out


def scalar_bytes(kernel):
    """Bytes of the first scalar type named in the kernel's suffixes (`_f32`, `_u64`, ...)."""
    parts = [p for p in kernel.split("_") if p in SCALAR_BYTES]
    return SCALAR_BYTES[parts[0]] if parts else 4


def sort_key_bytes(kernel):
    """Shared bytes per key of a sort block kernel: the key, plus a 4-byte index and the value
    for key-value kernels (sort/gpu.rs plan_block)."""
    parts = [p for p in kernel.split("_") if p in SCALAR_BYTES]
    kb = SCALAR_BYTES[parts[0]] if parts else 4
    return kb + (4 + SCALAR_BYTES[parts[1]] if len(parts) > 1 else 0)


def launch_default(kernel, bounds):
    for pattern, shape in LAUNCH_DEFAULTS:
        if re.search(pattern, kernel):
            threads, dyn, where = shape(kernel)
            if threads and bounds and threads > bounds:
                where += f" (above its __launch_bounds__({bounds}))"
            return threads, dyn, where
    return bounds, 0, "no default known: its __launch_bounds__" if bounds else "no default known"


def occupancy(regs, static_smem, threads, dyn_smem):
    """Resident blocks and warps per SM on sm_90, and what limits them."""
    if not threads:
        return None
    warps = -(-threads // 32)
    limits = {"blocks": MAX_BLOCKS, "warps": MAX_WARPS // warps}
    regs_per_warp = -(-max(regs, 1) * 32 // REG_UNIT) * REG_UNIT
    limits["registers"] = (PARTITIONS * (REGS_PER_PARTITION // regs_per_warp)) // warps
    smem = static_smem + dyn_smem
    if smem > SHARED_PER_BLOCK_MAX:
        return 0, 0, "shared memory > 227 KB"
    if smem > 0:
        per_block = -(-(smem + SHARED_RESERVED_PER_BLOCK) // SHARED_UNIT) * SHARED_UNIT
        limits["shared"] = SHARED_PER_SM // per_block
    limiter = min(limits, key=lambda k: limits[k])
    blocks = limits[limiter]
    return blocks, blocks * warps, limiter


PAGE_HEAD = """# Resources per kernel (sm_90)

Made by `scripts/ptxas-report.sh --markdown docs/src/cuda/resources.md`, with no GPU: every `.cu`
of `cuda-kernels` is compiled as the runtime compiles it (quoted includes inlined; NVRTC with
`-std=c++17 -lineinfo -DHETKIT_NVRTC=1` for compute_90) and the PTX is assembled by
`ptxas -arch=sm_90 -v`. Per kernel: registers per thread, spill stores/loads and stack frame per
thread, static shared memory per block, and at its default launch (block size and dynamic shared
memory as the host code states them, named in the last column) the resident blocks and warps per
SM from the H100's limits (65,536 registers in four partitions allocated per warp in units of
256; 228 KB of shared memory per SM with 1 KB reserved per block; 64 warps; 32 blocks) and which
of them binds. A spill at a default configuration is in bold; instantiations that no default
selects (evaluation at points-per-thread other than its default for the dimension, tridiagonal
solvers `choose` never picks) are marked but not counted. NVRTC and ptxas seconds are wall time on
a 2-core machine shared with other builds: ratios, not costs.

"""


def compile_module(nvrtc, ptxas, work, name, source):
    """NVRTC and ptxas on one module; the results are kept in `work` by the source's hash and
    reused while the source, NVRTC and ptxas are unchanged."""
    stem = os.path.join(work, name.replace("/", "__"))
    digest = hashlib.sha256((source + nvrtc.version() + ptxas).encode()).hexdigest()
    try:
        with open(stem + ".json") as f:
            saved = json.load(f)
        if saved["hash"] == digest:
            return saved
    except (OSError, ValueError, KeyError):
        pass
    t0 = time.monotonic()
    ptx = nvrtc.compile_ptx(source, name.replace("/", "_") + ".cu")
    nvrtc_s = time.monotonic() - t0
    with open(stem + ".ptx", "w") as f:
        f.write(ptx)
    t0 = time.monotonic()
    log = run_ptxas(ptxas, stem + ".ptx", stem + ".cubin")
    result = {
        "hash": digest,
        "nvrtc_s": nvrtc_s,
        "ptxas_s": time.monotonic() - t0,
        "ptxas_log": log,
        "maxntid": maxntid(ptx),
        "ptx_bytes": len(ptx),
        "cubin_bytes": os.path.getsize(stem + ".cubin"),
    }
    with open(stem + ".json", "w") as f:
        json.dump(result, f)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvrtc", required=True)
    ap.add_argument("--ptxas", required=True)
    ap.add_argument("--work", required=True, help="folder for the PTX files")
    ap.add_argument("--markdown", help="also write the tables to this file")
    ap.add_argument("--filter", default="", help="only .cu files whose path contains this")
    args = ap.parse_args()
    nvrtc = Nvrtc(args.nvrtc)
    os.makedirs(args.work, exist_ok=True)
    ptxas_version = subprocess.run([args.ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    out = [
        f"NVRTC {nvrtc.version()}, ptxas `{ptxas_version}`, sm_90; resident warps per SM of 64 at the default launch.",
        "",
    ]
    modules, spills, other_spills = [], [], []
    for path in kernel_files():
        name = os.path.relpath(path, KERNELS)[:-3]
        if args.filter not in name:
            continue
        source = inline_includes(path, set())
        r = compile_module(nvrtc, args.ptxas, args.work, name, source)
        info, bounds = ptxas_info(r["ptxas_log"]), r["maxntid"]
        modules.append((name, len(info), len(source), r["ptx_bytes"], r["cubin_bytes"], r["nvrtc_s"], r["ptxas_s"]))
        out += [f"### `{name}`", ""]
        out += ["| kernel | regs | spill st/ld (B) | stack (B) | static smem (B) | block | dyn smem (B) | blocks/SM | warps/SM | limit | launch default from |"]
        out += ["|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
        for k in sorted(info):
            i = info[k]
            threads, dyn, where = launch_default(k, bounds.get(k))
            occ = occupancy(i["regs"], i["smem"], threads, dyn)
            blocks, warps, limiter = occ if occ else ("-", "-", "-")
            spill = f"{i['spill_st']}/{i['spill_ld']}"
            default = is_default(k)
            if i["spill_st"] or i["spill_ld"]:
                spill = f"**{spill} SPILL**" if default else f"{spill} spill (not a default)"
                (spills if default else other_spills).append((k, i["spill_st"], i["spill_ld"], threads))
            out.append(
                f"| `{k}` | {i['regs']} | {spill} | {i['stack']} | {i['smem']} | {threads or '-'} | {dyn} | "
                f"{blocks} | {warps} | {limiter} | {where} |"
            )
        out.append("")
    summary = [
        "### Modules: entry points and size",
        "",
        "One module is compiled whole on first use; a large one is a candidate for splitting.",
        "",
        "| module | entry points | inlined source (B) | PTX (B) | cubin (B) | NVRTC to PTX (s) | ptxas (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, n, src, ptx, cubin, t_nvrtc, t_ptxas in sorted(modules, key=lambda m: -m[1]):
        summary.append(f"| `{name}` | {n} | {src} | {ptx} | {cubin} | {t_nvrtc:.1f} | {t_ptxas:.1f} |")
    summary.append("")
    if spills:
        summary += [f"**{len(spills)} kernels spill at a default configuration:**", ""]
        summary += [f"- `{k}`: {st} B stores / {ld} B loads per thread (block {t})" for k, st, ld, t in spills]
    else:
        summary.append("No kernel spills at a default configuration.")
    if other_spills:
        summary += ["", f"{len(other_spills)} more spill in instantiations no default selects:", ""]
        summary += [f"- `{k}`: {st} B stores / {ld} B loads per thread" for k, st, ld, t in other_spills]
    summary.append("")
    text = "\n".join(out[:2] + summary + out[2:])
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(PAGE_HEAD + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
