// hetkit's CUDA emulator: a stand-in for libcuda.so and libnvrtc.so that runs kernels on the CPU.
//
// cudarc opens libcuda and libnvrtc with dlopen, symbol by symbol, so putting this library first
// on LD_LIBRARY_PATH under both names makes every GPU test of the workspace run here, with its host
// code unchanged. Kernels are the real .cu files compiled by g++ against device.hpp:
//   - NVRTC programs are compiled when nvrtcCompileProgram is called (errors come back as NVRTC
//     compile errors with g++'s log); the "PTX" handed back names the compiled library.
//   - Real PTX (embedded by nvcc at build time) is matched by its .entry names against every .cu
//     file under $HETKIT_EMU_KERNELS, compiled on first use.
// Compiled kernels are cached on disk by a hash of their source ($HETKIT_EMU_CACHE).
//
// Execution: blocks run one after another, in order of their index; the threads of a block are
// fibers that switch only at __syncthreads, warp collectives and spin waits, in a shuffled order
// (seed $HETKIT_EMU_SEED), so results that depend on an unsynchronised order show up as test
// failures. The emulator reports as launch failures, with a message on stderr, what the device
// would leave undefined or hang on: barriers some threads never reach, warp collectives with
// mismatched masks or operations, shuffles from lanes outside the mask, over-sized blocks or
// grids, dynamic shared memory above the kernel's limit, static shared memory above 48 KiB, and
// spin waits that never end. Copies and memsets are checked against the allocations they touch.
// Shared memory (static and dynamic) is filled with 0xFF bytes (NaN, -1) before every block.
// It does not model timing, the memory model across blocks, or out-of-bounds kernel accesses.
#define EMU_DRIVER_SIDE
#include "device.hpp"
#include "fiber.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

typedef int CUresult;
enum : int {
    OK = 0,
    ERR_INVALID_VALUE = 1,
    ERR_OUT_OF_MEMORY = 2,
    ERR_NO_DEVICE = 100,
    ERR_INVALID_IMAGE = 200,
    ERR_INVALID_CONTEXT = 201,
    ERR_INVALID_PTX = 218,
    ERR_UNSUPPORTED_PTX_VERSION = 222,
    ERR_INVALID_HANDLE = 400,
    ERR_NOT_FOUND = 500,
    ERR_LAUNCH_OUT_OF_RESOURCES = 701,
    ERR_LAUNCH_FAILED = 719,
    ERR_NOT_SUPPORTED = 801,
};

const unsigned long long kTotalMemory = 16ull << 30;
const int kSharedPerBlock = 48 * 1024;
const int kSharedOptin = 227 * 1024;
const int kSmCount = 132;
const std::size_t kStackBytes = 256 * 1024;

std::recursive_mutex g_mu;
#define LOCK std::lock_guard<std::recursive_mutex> lock_(g_mu)

void note(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::fprintf(stderr, "[cuda-emu] ");
    std::vfprintf(stderr, fmt, ap);
    std::fprintf(stderr, "\n");
    va_end(ap);
}

std::string env_or(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

// CUDA versions as the driver encodes them (1000 * major + 10 * minor). HETKIT_EMU_DRIVER_VERSION
// (e.g. 12020) and HETKIT_EMU_NVRTC_VERSION (e.g. 13.0) emulate a driver older than the NVRTC, whose
// PTX it must then refuse, like a real driver refuses PTX of a newer ISA.
int emu_driver_version() { return std::atoi(env_or("HETKIT_EMU_DRIVER_VERSION", "12080").c_str()); }
int emu_nvrtc_version() {
    std::string v = env_or("HETKIT_EMU_NVRTC_VERSION", "12.8");
    int major = std::atoi(v.c_str()), minor = 0;
    std::size_t dot = v.find('.');
    if (dot != std::string::npos) minor = std::atoi(v.c_str() + dot + 1);
    return 1000 * major + 10 * minor;
}
// The compute capability the device reports, as 10 * major + minor (HETKIT_EMU_CC, default 90): a
// value above 90 emulates a device newer than the emulated NVRTC knows.
int emu_cc() { return std::atoi(env_or("HETKIT_EMU_CC", "90").c_str()); }
// The PTX ISA a CUDA release emits (11.x -> 7.x, 12.x -> 8.x, 13.x -> 9.x; close to the real table).
std::string isa_of(int cuda) { return std::to_string(cuda / 1000 - 4) + "." + std::to_string(cuda % 1000 / 10); }
// The CUDA release a PTX ISA needs, the inverse of isa_of; -1 when `text` declares no `.version`.
int cuda_of_ptx(const std::string& text) {
    std::size_t at = text.find(".version");
    if (at == std::string::npos) return -1;
    int major = std::atoi(text.c_str() + at + 8), minor = 0;
    std::size_t dot = text.find('.', at + 8);
    if (dot != std::string::npos && dot < text.find('\n', at)) minor = std::atoi(text.c_str() + dot + 1);
    return 1000 * (major + 4) + 10 * minor;
}

// ---------------------------------------------------------------------------------------------
// Kernels and modules
// ---------------------------------------------------------------------------------------------
struct Kernel {
    std::string name;
    EmuThunkFn thunk;
    void* fn;
    unsigned maxntid;  // from __launch_bounds__, 0 if none
    int max_dynamic_smem = kSharedPerBlock;
};

struct Module {
    std::map<std::string, Kernel*> kernels;
};

// Every kernel of every loaded library, by library path and then by name.
std::map<std::string, std::map<std::string, Kernel*>> g_libraries;

void add_kernel(void* reg, const char* name, EmuThunkFn thunk, void* fn, unsigned maxntid) {
    auto* table = static_cast<std::map<std::string, Kernel*>*>(reg);
    (*table)[name] = new Kernel{name, thunk, fn, maxntid};
}

// ---------------------------------------------------------------------------------------------
// Block execution: fibers, barriers, warp collectives, shared memory
// ---------------------------------------------------------------------------------------------
struct Fiber {
    void* sp;
    uint3 tid;
    unsigned lane, warp;
    bool done;
    int wait;  // 0 running, 1 block barrier, 2 warp collective
    unsigned wait_gen;
};

struct WarpState {
    unsigned arrived = 0, mask = 0, existing = 0, gen = 0;
    int op = -1;
    unsigned long long vals[32], out[32];
    int args[32], width[32];
};

struct Launch {
    Kernel* kernel;
    void** params;
    unsigned nthreads;
    std::vector<Fiber> fibers;
    std::vector<WarpState> warps;
    unsigned bar_arrived = 0, bar_gen = 0, exited = 0;
    std::vector<unsigned char> dyn_smem;
    std::vector<std::pair<const void*, std::size_t>> slots;
    std::vector<unsigned char> arena;
    std::size_t arena_used = 0;
    std::string error;
    bool spun = false;
};

Launch* g_launch;
Fiber* g_cur;
void* g_sched_sp;
uint3 g_tid, g_bid, g_bdim, g_gdim;
std::vector<char*> g_stacks;
unsigned long long g_rng = 0x9e3779b97f4a7c15ull;

unsigned long long next_random() {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

char* stack_for(unsigned i) {
    while (g_stacks.size() <= i) {
        const std::size_t guard = 4096;
        void* p = mmap(nullptr, kStackBytes + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (p == MAP_FAILED) {
            note("cannot map a fiber stack");
            std::abort();
        }
        mprotect(p, guard, PROT_NONE);  // an overflow faults instead of corrupting a neighbour
        g_stacks.push_back(static_cast<char*>(p) + guard);
    }
    return g_stacks[i];
}

void to_scheduler() { emu_fiber_switch(&g_cur->sp, g_sched_sp); }

// Records the first error of the launch and parks the calling fiber for good.
void fail(const char* fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (g_launch->error.empty()) {
        std::ostringstream s;
        s << g_launch->kernel->name << ", block (" << g_bid.x << "," << g_bid.y << "," << g_bid.z << "), thread ("
          << g_tid.x << "," << g_tid.y << "," << g_tid.z << "): " << buf;
        g_launch->error = s.str();
    }
    for (;;) to_scheduler();
}

void release_barrier_if_complete() {
    Launch& l = *g_launch;
    if (l.bar_arrived > 0 && l.bar_arrived + l.exited == l.nthreads) {
        l.bar_arrived = 0;
        ++l.bar_gen;
    }
}

void rt_syncthreads() {
    Launch& l = *g_launch;
    Fiber* f = g_cur;
    f->wait = 1;
    f->wait_gen = l.bar_gen;
    ++l.bar_arrived;
    release_barrier_if_complete();
    while (f->wait_gen == l.bar_gen) to_scheduler();
    f->wait = 0;
}

void complete_warp_op(WarpState& w) {
    for (unsigned lane = 0; lane < 32; ++lane) {
        if (!((w.mask >> lane) & 1u)) continue;
        const int width = w.width[lane];
        const unsigned base = lane & ~(unsigned)(width - 1);
        const int arg = w.args[lane];
        long src = lane;
        switch (w.op) {
        case EMU_SYNCWARP: w.out[lane] = 0; continue;
        case EMU_BALLOT:
        case EMU_ANY:
        case EMU_ALL: {
            unsigned bits = 0;
            for (unsigned j = 0; j < 32; ++j)
                if (((w.mask >> j) & 1u) && w.vals[j]) bits |= 1u << j;
            w.out[lane] = w.op == EMU_BALLOT ? bits : w.op == EMU_ANY ? bits != 0 : bits == w.mask;
            continue;
        }
        case EMU_SHFL_IDX: src = base + ((unsigned)arg & (unsigned)(width - 1)); break;
        case EMU_SHFL_UP: src = (long)lane - arg < (long)base ? lane : (long)lane - arg; break;
        case EMU_SHFL_DOWN: src = lane + arg >= base + width ? lane : lane + arg; break;
        case EMU_SHFL_XOR: src = (lane ^ (unsigned)arg) >= base + width ? lane : (lane ^ (unsigned)arg); break;
        }
        if (!((w.mask >> src) & 1u)) {
            fail("shuffle in lane %u reads lane %ld, which is not in the mask 0x%08x", lane, src, w.mask);
        }
        w.out[lane] = w.vals[src];
    }
}

const char* op_name(int op) {
    static const char* names[] = {"__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                  "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync"};
    return op >= 0 && op < 8 ? names[op] : "?";
}

unsigned long long rt_warp_op(int op, unsigned mask, unsigned long long value, int arg, int width) {
    Fiber* f = g_cur;
    WarpState& w = g_launch->warps[f->warp];
    const unsigned lane = f->lane;
    if (!((mask >> lane) & 1u)) fail("%s with mask 0x%08x called by lane %u, which is not in it", op_name(op), mask, lane);
    if (mask & ~w.existing) fail("%s with mask 0x%08x names lanes this warp does not have (0x%08x)", op_name(op), mask, w.existing);
    if (width <= 0 || width > 32 || (width & (width - 1))) fail("%s with width %d", op_name(op), width);
    if (w.arrived == 0) {
        w.mask = mask;
        w.op = op;
    } else if (w.mask != mask || w.op != op) {
        fail("lane %u calls %s (mask 0x%08x) while lanes 0x%08x wait in %s (mask 0x%08x)", lane, op_name(op), mask,
             w.arrived, op_name(w.op), w.mask);
    }
    w.vals[lane] = value;
    w.args[lane] = arg;
    w.width[lane] = width;
    w.arrived |= 1u << lane;
    f->wait = 2;
    f->wait_gen = w.gen;
    if (w.arrived == w.mask) {
        complete_warp_op(w);
        w.arrived = 0;
        ++w.gen;
    }
    while (f->wait_gen == w.gen) to_scheduler();
    f->wait = 0;
    return w.out[lane];
}

void rt_yield() {
    g_launch->spun = true;
    to_scheduler();
}

void* rt_dynamic_smem() { return g_launch->dyn_smem.data(); }

void* rt_shared_slot(const void* tag, unsigned long long bytes, unsigned long long align) {
    Launch& l = *g_launch;
    for (auto& s : l.slots)
        if (s.first == tag) return l.arena.data() + s.second;
    std::size_t off = (l.arena_used + align - 1) / align * align;
    if (off + bytes > (std::size_t)kSharedPerBlock)
        fail("static shared memory of this block exceeds 48 KiB (%zu bytes)", (std::size_t)(off + bytes));
    l.arena_used = off + bytes;
    l.slots.push_back({tag, off});
    std::memset(l.arena.data() + off, 0xff, bytes);  // unwritten shared memory reads as NaN / -1
    return l.arena.data() + off;
}

void rt_trap(const char* what) { fail("%s", what); }

const EmuRuntime g_runtime = {&g_tid, &g_bid, &g_bdim, &g_gdim, rt_syncthreads, rt_warp_op,
                              rt_yield, rt_dynamic_smem, rt_shared_slot, rt_trap};

void fiber_entry() {
    g_launch->kernel->thunk(g_launch->kernel->fn, g_launch->params);
    g_cur->done = true;
    ++g_launch->exited;
    release_barrier_if_complete();
    for (;;) to_scheduler();
}

bool runnable(const Fiber& f) {
    const Launch& l = *g_launch;
    if (f.done) return false;
    if (f.wait == 1) return f.wait_gen != l.bar_gen;
    if (f.wait == 2) return f.wait_gen != l.warps[f.warp].gen;
    return true;
}

std::string describe_deadlock() {
    const Launch& l = *g_launch;
    unsigned at_bar = 0, at_warp = 0, done = 0;
    for (const Fiber& f : l.fibers) {
        if (f.done) ++done;
        else if (f.wait == 1) ++at_bar;
        else if (f.wait == 2) ++at_warp;
    }
    std::ostringstream s;
    s << l.kernel->name << ", block (" << g_bid.x << "," << g_bid.y << "," << g_bid.z << "): deadlock, " << at_bar
      << " threads wait at __syncthreads, " << at_warp << " in warp collectives whose other lanes never arrive, "
      << done << " exited";
    return s.str();
}

// Runs one block to completion; false (with l.error set) on a fault.
bool run_block() {
    Launch& l = *g_launch;
    std::memset(l.dyn_smem.data(), 0xff, l.dyn_smem.size());
    l.slots.clear();  // static slots are poisoned when the block first asks for them
    l.arena_used = 0;
    l.bar_arrived = l.exited = 0;
    for (unsigned i = 0; i < l.nthreads; ++i) {
        Fiber& f = l.fibers[i];
        // Staggered tops: stacks a multiple of 4 KiB apart would all map to the same cache sets.
        f.sp = emu_fiber_init(stack_for(i), kStackBytes - (i * 448) % 4096, fiber_entry);
        f.done = false;
        f.wait = 0;
    }
    for (WarpState& w : l.warps) w.arrived = 0;
    long idle_spins = 0;
    const unsigned n = l.nthreads;
    for (;;) {
        // Each pass starts at a random thread and walks up or down: threads that are runnable
        // together run in a different order every time.
        const unsigned long long r = next_random();
        const bool down = (r >> 32) & 1;
        unsigned idx = (unsigned)(r % n);
        bool progressed = false, all_done = true;
        l.spun = false;
        for (unsigned k = 0; k < n; ++k, idx = down ? (idx == 0 ? n - 1 : idx - 1) : (idx + 1 == n ? 0 : idx + 1)) {
            Fiber& f = l.fibers[idx];
            if (f.done) continue;
            all_done = false;
            if (!runnable(f)) continue;
            g_cur = &f;
            g_tid = f.tid;
            emu_fiber_switch(&g_sched_sp, f.sp);
            if (!l.error.empty()) return false;
            progressed = true;
        }
        if (all_done) return true;
        if (!progressed) {
            l.error = describe_deadlock();
            return false;
        }
        // Passes in which every thread only spun: nothing it waits for can come from this block.
        idle_spins = l.spun ? idle_spins + 1 : 0;
        if (idle_spins > 2000000) {
            l.error = l.kernel->name + ": a spin wait never ended (it waits for a block that runs later)";
            return false;
        }
    }
}

CUresult launch_kernel(Kernel* k, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned smem, void** params) {
    const unsigned long long threads = (unsigned long long)bx * by * bz;
    if (!bx || !by || !bz || !gx || !gy || !gz) return ERR_INVALID_VALUE;
    if (bx > 1024 || by > 1024 || bz > 64 || threads > 1024 || gx > 0x7fffffffu || gy > 65535 || gz > 65535) {
        note("%s: launch of grid (%u,%u,%u) x block (%u,%u,%u) is beyond the device's limits", k->name.c_str(), gx, gy,
             gz, bx, by, bz);
        return ERR_INVALID_VALUE;
    }
    if (k->maxntid && threads > k->maxntid) {
        note("%s: %llu threads per block, but __launch_bounds__(%u)", k->name.c_str(), threads, k->maxntid);
        return ERR_LAUNCH_OUT_OF_RESOURCES;
    }
    if ((int)smem > k->max_dynamic_smem) {
        note("%s: %u bytes of dynamic shared memory, but the kernel's limit is %d (set "
             "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)",
             k->name.c_str(), smem, k->max_dynamic_smem);
        return ERR_INVALID_VALUE;
    }
    Launch l;
    l.kernel = k;
    l.params = params;
    l.nthreads = (unsigned)threads;
    l.fibers.resize(threads);
    l.warps.resize((threads + 31) / 32);
    for (unsigned i = 0; i < threads; ++i) {
        Fiber& f = l.fibers[i];
        f.tid = {i % bx, (i / bx) % by, i / (bx * by)};
        f.lane = i % 32;
        f.warp = i / 32;
        l.warps[f.warp].existing |= 1u << f.lane;
    }
    l.dyn_smem.assign(smem ? smem : 1, 0);
    l.arena.assign(kSharedPerBlock, 0);
    g_launch = &l;
    g_bdim = {bx, by, bz};
    g_gdim = {gx, gy, gz};
    bool ok = true;
    for (unsigned z = 0; z < gz && ok; ++z)
        for (unsigned y = 0; y < gy && ok; ++y)
            for (unsigned x = 0; x < gx && ok; ++x) {
                g_bid = {x, y, z};
                ok = run_block();
            }
    g_launch = nullptr;
    if (!ok) {
        note("kernel fault: %s", l.error.c_str());
        return ERR_LAUNCH_FAILED;
    }
    return OK;
}

// ---------------------------------------------------------------------------------------------
// Compiling kernel sources with g++
// ---------------------------------------------------------------------------------------------
std::string self_dir() {
    Dl_info info;
    dladdr((void*)&self_dir, &info);
    std::string p = info.dli_fname;
    return p.substr(0, p.rfind('/'));
}

std::string cache_dir() {
    std::string d = env_or("HETKIT_EMU_CACHE", "/tmp/hetkit-cuda-emu-" + std::to_string(getuid()));
    mkdir(d.c_str(), 0755);
    return d;
}

unsigned long long fnv1a(const std::string& s, unsigned long long h = 1469598103934665603ull) {
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

bool read_file(const std::string& path, std::string& out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::ostringstream s;
    s << f.rdbuf();
    out = s.str();
    return true;
}

bool write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    return bool(f);
}

// Runs argv, stderr and stdout into `log`; true on exit status 0.
bool run(const std::vector<std::string>& argv, std::string& log, const std::string& log_path) {
    pid_t pid = fork();
    if (pid == 0) {
        FILE* f = std::fopen(log_path.c_str(), "w");
        if (f) {
            dup2(fileno(f), 1);
            dup2(fileno(f), 2);
        }
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    std::string text;
    read_file(log_path, text);
    log += text;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool is_ident(char c) { return std::isalnum((unsigned char)c) || c == '_'; }

std::string trim(const std::string& s) {
    std::size_t a = s.find_first_not_of(" \t\n\r"), b = s.find_last_not_of(" \t\n\r");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Rewrites the __shared__ declarations of preprocessed source:
//   __shared__ T name[dims];        a per-block slot of the runtime, one per declaration and
//                                   template instance (the address of a local static tags it)
//   extern __shared__ T name[];     the launch's dynamic shared memory
bool rewrite_shared(std::string& src, std::string& err) {
    std::string out;
    std::size_t pos = 0;
    int counter = 0;
    for (std::size_t at; (at = src.find("__shared__", pos)) != std::string::npos;) {
        out.append(src, pos, at - pos);
        if ((at > 0 && is_ident(src[at - 1])) || is_ident(src[at + 10])) {
            out += "__shared__";  // part of a longer identifier
            pos = at + 10;
            continue;
        }
        std::size_t semi = src.find(';', at);
        if (semi == std::string::npos) {
            err = "unterminated __shared__ declaration";
            return false;
        }
        // `extern` was already copied to `out`: take it back.
        std::size_t e = out.find_last_not_of(" \t\n");
        const bool dynamic = e != std::string::npos && e >= 5 && out.compare(e - 5, 6, "extern") == 0;
        if (dynamic) out.resize(e - 5);
        std::string decl = src.substr(at + 10, semi - at - 10);
        // Drop attributes (alignment): the runtime aligns every slot to its type.
        for (std::size_t a; (a = decl.find("__attribute__")) != std::string::npos;) {
            int depth = 0;
            std::size_t q = decl.find('(', a);
            for (; q < decl.size(); ++q) {
                if (decl[q] == '(') ++depth;
                else if (decl[q] == ')' && --depth == 0) break;
            }
            decl.erase(a, q + 1 - a);
        }
        decl = trim(decl);
        std::size_t br = decl.find('[');
        std::string head = trim(decl.substr(0, br));
        std::string dims = br == std::string::npos ? "" : decl.substr(br);
        std::size_t ns = head.size();
        while (ns > 0 && is_ident(head[ns - 1])) --ns;
        std::string name = head.substr(ns), type = trim(head.substr(0, ns));
        if (name.empty() || type.empty()) {
            err = "cannot parse __shared__ declaration: " + decl;
            return false;
        }
        if (dynamic) {
            out += "\n#define " + name + " ((" + type + "*)emu_rt->dynamic_smem())\n";
        } else {
            const std::string t = "emu_shared_t" + std::to_string(counter), tag = "emu_shared_tag" + std::to_string(counter);
            ++counter;
            out += "typedef " + type + " " + t + dims + "; static char " + tag + "; " + t + "& " + name + " = *(" + t +
                   "*)emu_rt->shared_slot(&" + tag + ", sizeof(" + t + "), alignof(" + t + "));";
        }
        pos = semi + 1;
    }
    out.append(src, pos, std::string::npos);
    src.swap(out);
    return true;
}

struct Entry {
    std::string name;
    unsigned maxntid;
};

// Kernels of preprocessed source: `EMU_GLOBAL_MARK [EMU_BOUNDS(n)] void [EMU_BOUNDS(n)] name(`.
std::vector<Entry> find_kernels(const std::string& src) {
    std::vector<Entry> out;
    const std::string mark = "EMU_GLOBAL_MARK";
    for (std::size_t at = src.find(mark); at != std::string::npos; at = src.find(mark, at + 1)) {
        std::size_t p = at + mark.size();
        unsigned maxntid = 0;
        std::string ident;
        // Identifiers up to the name: `void`, and EMU_BOUNDS(n) before or after it.
        do {
            while (p < src.size() && std::isspace((unsigned char)src[p])) ++p;
            std::size_t s = p;
            while (p < src.size() && is_ident(src[p])) ++p;
            ident = src.substr(s, p - s);
            if (ident == "EMU_BOUNDS") {
                std::size_t open = src.find('(', p), close = src.find(')', p);
                maxntid = (unsigned)std::strtoul(src.substr(open + 1, close - open - 1).c_str(), nullptr, 0);
                p = close + 1;
            }
        } while (ident == "EMU_BOUNDS" || ident == "void");
        while (p < src.size() && std::isspace((unsigned char)src[p])) ++p;
        if (!ident.empty() && p < src.size() && src[p] == '(') out.push_back({ident, maxntid});
    }
    return out;
}

// g++ flags of kernel libraries: $HETKIT_EMU_OPT (default -O2), plus AddressSanitizer with
// HETKIT_EMU_ASAN=1 (the process must then preload libasan; scripts/cuda-emu.sh does).
std::string kernel_flags() {
    std::string f = env_or("HETKIT_EMU_OPT", "-O2") + " -g0";
    if (env_or("HETKIT_EMU_ASAN", "0") == "1") f += " -fsanitize=address -fno-omit-frame-pointer";
    return f;
}

// Compiles a kernel source into a shared library (cached by content); returns its path, or ""
// with g++'s messages in `log`. `include_dir` resolves quoted includes of files on disk.
std::string compile(const std::string& source, const std::string& include_dir, const std::string& label,
                    std::string& log) {
    const std::string home = env_or("HETKIT_EMU_HOME", self_dir());
    const std::string opt = kernel_flags();
    const std::string dir = cache_dir();
    // Preprocess first: the cache key must cover every included header (and device.hpp).
    char uniq[64];
    std::snprintf(uniq, sizeof uniq, "/tmp.%d.%016llx", (int)getpid(), fnv1a(source + include_dir + label));
    const std::string tag = dir + uniq;
    write_file(tag + ".cu", source);
    std::vector<std::string> pre = {"g++", "-E", "-P", "-x", "c++", "-std=c++17", "-include", home + "/device.hpp",
                                    "-D__global__=EMU_GLOBAL_MARK", "-D__launch_bounds__(...)=EMU_BOUNDS(__VA_ARGS__)",
                                    "-D__CUDACC__", "-D__CUDA_ARCH__=900", "-o", tag + ".ii.cpp", tag + ".cu"};
    if (!include_dir.empty()) pre.insert(pre.begin() + 1, "-I" + include_dir);
    const bool preprocessed = run(pre, log, tag + ".log");
    std::remove((tag + ".cu").c_str());
    std::remove((tag + ".log").c_str());
    std::string text;
    if (!preprocessed || !read_file(tag + ".ii.cpp", text)) {
        std::remove((tag + ".ii.cpp").c_str());
        return "";
    }
    std::remove((tag + ".ii.cpp").c_str());
    char key[32];
    std::snprintf(key, sizeof key, "%016llx", fnv1a(opt, fnv1a(text)));
    const std::string so = dir + "/" + key + ".so";
    struct stat st;
    if (stat(so.c_str(), &st) == 0) return so;

    std::string err;
    if (!rewrite_shared(text, err)) {
        log += label + ": " + err;
        return "";
    }
    std::vector<Entry> kernels = find_kernels(text);
    std::ostringstream reg;
    reg << "\nextern \"C\" void emu_module_init(const EmuRuntime* rt, EmuAddKernel add, void* reg) {\n"
        << "    emu_rt = rt;\n";
    for (auto& k : kernels)
        reg << "    add(reg, \"" << k.name << "\", &EmuThunk<decltype(&" << k.name << ")>::call, (void*)&" << k.name << ", "
            << k.maxntid << "u);\n";
    reg << "}\n";
    text += reg.str();
    write_file(tag + ".cpp", text);
    std::vector<std::string> cc = {"g++", "-std=c++17", "-ffp-contract=off", "-fno-strict-aliasing", "-fPIC",
                                   "-shared", "-w", "-DEMU_GLOBAL_MARK=", "-DEMU_BOUNDS(...)=", "-o", tag + ".so",
                                   tag + ".cpp"};
    std::istringstream flags(opt);
    for (std::string f; flags >> f;) cc.insert(cc.begin() + 1, f);
    bool ok = run(cc, log, tag + ".log");
    if (ok) ok = std::rename((tag + ".so").c_str(), so.c_str()) == 0;
    std::remove((tag + ".log").c_str());
    std::remove((tag + ".cpp").c_str());
    return ok ? so : "";
}

// Loads a compiled library once per process; its kernel table, or null.
std::map<std::string, Kernel*>* load_library(const std::string& so) {
    auto it = g_libraries.find(so);
    if (it != g_libraries.end()) return &it->second;
    void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        note("dlopen %s: %s", so.c_str(), dlerror());
        return nullptr;
    }
    auto init = (void (*)(const EmuRuntime*, EmuAddKernel, void*))dlsym(h, "emu_module_init");
    if (!init) return nullptr;
    auto& table = g_libraries[so];
    init(&g_runtime, add_kernel, &table);
    return &table;
}

// Every .cu file under $HETKIT_EMU_KERNELS, compiled (in parallel when not cached) and loaded:
// the kernels that nvcc's embedded PTX names.
std::map<std::string, Kernel*>* g_disk_kernels;

void collect_cu(const std::string& dir, std::vector<std::string>& out, const std::string& ext) {
    DIR* d = opendir(dir.c_str());
    if (!d) return;
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == ".." || n == "src" || n == "target" || n == "tests" || n == "benches") continue;
        std::string p = dir + "/" + n;
        struct stat st;
        if (stat(p.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) collect_cu(p, out, ext);
        else if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0) out.push_back(p);
    }
    closedir(d);
}

std::map<std::string, Kernel*>& disk_kernels() {
    if (g_disk_kernels) return *g_disk_kernels;
    g_disk_kernels = new std::map<std::string, Kernel*>();
    std::string root = env_or("HETKIT_EMU_KERNELS", "");
    if (root.empty()) {
        note("HETKIT_EMU_KERNELS is not set: PTX modules cannot be matched to sources");
        return *g_disk_kernels;
    }
    std::vector<std::string> files, headers;
    collect_cu(root, files, ".cu");
    collect_cu(root, headers, ".cuh");
    std::sort(files.begin(), files.end());
    std::sort(headers.begin(), headers.end());
    // One index per state of the sources: a process that finds it loads the libraries directly.
    const std::string home = env_or("HETKIT_EMU_HOME", self_dir());
    std::string all, text;
    read_file(home + "/device.hpp", all);
    all += kernel_flags();
    for (auto* list : {&files, &headers})
        for (auto& f : *list)
            if (read_file(f, text)) all += f + '\n' + text;
    char index[64];
    std::snprintf(index, sizeof index, "/index-%016llx", fnv1a(all));
    const std::string index_path = cache_dir() + index;
    std::vector<std::string> sos;
    std::string listed;
    if (read_file(index_path, listed)) {
        std::istringstream lines(listed);
        for (std::string line; std::getline(lines, line);)
            if (!line.empty()) sos.push_back(line);
    } else {
        // Compile in child processes (in parallel), then collect the cached results here.
        std::vector<pid_t> kids;
        for (auto& f : files) {
            pid_t pid = fork();
            if (pid == 0) {
                std::string src, log;
                read_file(f, src);
                std::string so = compile(src, f.substr(0, f.rfind('/')), f, log);
                if (so.empty()) std::fprintf(stderr, "[cuda-emu] %s:\n%s\n", f.c_str(), log.c_str());
                _exit(so.empty() ? 1 : 0);
            }
            kids.push_back(pid);
        }
        for (pid_t k : kids) waitpid(k, nullptr, 0);
        bool complete = true;
        for (auto& f : files) {
            std::string src, log;
            read_file(f, src);
            std::string so = compile(src, f.substr(0, f.rfind('/')), f, log);
            if (so.empty()) {
                note("%s does not compile:\n%s", f.c_str(), log.c_str());
                complete = false;
            } else {
                sos.push_back(so);
            }
        }
        if (complete) {
            std::string lines;
            for (auto& so : sos) lines += so + "\n";
            write_file(index_path + "." + std::to_string(getpid()), lines);
            std::rename((index_path + "." + std::to_string(getpid())).c_str(), index_path.c_str());
        }
    }
    for (auto& so : sos) {
        auto* table = load_library(so);
        if (!table) {
            note("cannot load %s", so.c_str());
            continue;
        }
        for (auto& kv : *table) (*g_disk_kernels)[kv.first] = kv.second;
    }
    return *g_disk_kernels;
}

const std::string kModuleMark = "// hetkit-cuda-emu library: ";
// Second line of our own images: who made it and whether it is PTX or a cubin.
const std::string kMadeBy = "// made-by: ";
// First line of the "cubin" the JIT makes from nvcc's PTX (the PTX follows).
const std::string kJitMark = "// hetkit-cuda-emu cubin of PTX\n";

// Our own image's producer version and kind ("ptx" or "cubin").
void made_by(const std::string& text, int* version, std::string* kind) {
    std::size_t at = text.find(kMadeBy);
    *version = 0;
    kind->clear();
    if (at == std::string::npos) return;
    std::istringstream line(text.substr(at + kMadeBy.size(), text.find('\n', at) - at - kMadeBy.size()));
    line >> *version >> *kind;
}

// The driver's version gate: PTX must be of an ISA this driver knows; a cubin of a newer major
// release does not load either (minor-version compatibility covers only the same major release).
CUresult check_image_version(const std::string& text) {
    int driver = emu_driver_version();
    if (text.compare(0, kJitMark.size(), kJitMark) == 0) return OK;
    if (text.compare(0, kModuleMark.size(), kModuleMark) == 0) {
        int made;
        std::string kind;
        made_by(text, &made, &kind);
        if (kind == "cubin" && made / 1000 > driver / 1000) {
            note("cubin made by CUDA %d, driver supports %d", made, driver);
            return ERR_INVALID_IMAGE;
        }
        if (kind != "cubin" && made > driver) {
            note("PTX made by CUDA %d, driver supports %d", made, driver);
            return ERR_UNSUPPORTED_PTX_VERSION;
        }
        return OK;
    }
    int needs = cuda_of_ptx(text);
    if (needs > driver) {
        note("PTX ISA needs CUDA %d, driver supports %d", needs, driver);
        return ERR_UNSUPPORTED_PTX_VERSION;
    }
    return OK;
}

// A module from the image cuModuleLoadData gets: our own "PTX" or "cubin" (a compiled library), or
// nvcc's PTX (possibly JIT-linked), whose entries are looked up among the compiled .cu files.
CUresult load_module(const char* image, Module** out) {
    std::string text(image);
    CUresult gate = check_image_version(text);
    if (gate != OK) return gate;
    auto m = std::make_unique<Module>();
    if (text.compare(0, kModuleMark.size(), kModuleMark) == 0) {
        std::string so = text.substr(kModuleMark.size(), text.find('\n') - kModuleMark.size());
        auto* table = load_library(so);
        if (!table) return ERR_INVALID_IMAGE;
        m->kernels = *table;
    } else {
        if (text.find(".entry") == std::string::npos && text.find(".version") == std::string::npos) return ERR_INVALID_IMAGE;
        auto& all = disk_kernels();
        for (std::size_t at = text.find(".entry"); at != std::string::npos; at = text.find(".entry", at + 1)) {
            std::size_t s = at + 6;
            while (s < text.size() && std::isspace((unsigned char)text[s])) ++s;
            std::size_t e = s;
            while (e < text.size() && is_ident(text[e])) ++e;
            std::string name = text.substr(s, e - s);
            auto k = all.find(name);
            if (k == all.end()) {
                note("PTX entry %s is in no .cu file under HETKIT_EMU_KERNELS", name.c_str());
                return ERR_INVALID_PTX;
            }
            m->kernels[name] = k->second;
        }
    }
    *out = m.release();
    return OK;
}

// The JIT linker: PTX in, "cubin" out. Our own PTX becomes our own cubin (same library); nvcc's
// PTX is kept behind a mark that says it was compiled by this driver.
struct LinkState {
    std::string ptx, cubin;
};

// ---------------------------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------------------------
std::map<unsigned long long, std::size_t> g_allocs;  // base -> bytes (device and pinned host)
unsigned long long g_device_bytes = 0;

CUresult device_alloc(unsigned long long* dptr, std::size_t bytes) {
    if (bytes == 0) return ERR_INVALID_VALUE;
    if (g_device_bytes + bytes > kTotalMemory) return ERR_OUT_OF_MEMORY;
    // Exactly `bytes`: under AddressSanitizer the redzone starts right at the end.
    void* p = nullptr;
    if (posix_memalign(&p, 256, bytes) != 0) return ERR_OUT_OF_MEMORY;
    std::memset(p, 0xcd, bytes);  // uninitialised device memory is not zero
    *dptr = (unsigned long long)p;
    g_allocs[*dptr] = bytes;
    g_device_bytes += bytes;
    return OK;
}

CUresult device_free(unsigned long long dptr) {
    auto it = g_allocs.find(dptr);
    if (it == g_allocs.end()) return ERR_INVALID_VALUE;
    g_device_bytes -= it->second;
    g_allocs.erase(it);
    std::free((void*)dptr);
    return OK;
}

// True when [p, p + bytes) lies inside one device allocation.
bool in_device_memory(unsigned long long p, std::size_t bytes) {
    auto it = g_allocs.upper_bound(p);
    if (it == g_allocs.begin()) return false;
    --it;
    return p >= it->first && p + bytes <= it->first + it->second;
}

CUresult checked_copy(unsigned long long dst, unsigned long long src, std::size_t bytes, bool dst_dev, bool src_dev,
                      const char* what) {
    if (bytes == 0) return OK;
    if ((dst_dev && !in_device_memory(dst, bytes)) || (src_dev && !in_device_memory(src, bytes))) {
        note("%s of %zu bytes outside a device allocation", what, bytes);
        return ERR_INVALID_VALUE;
    }
    std::memmove((void*)dst, (const void*)src, bytes);
    return OK;
}

struct Event {
    double t = 0;
    bool recorded = false;
};

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int g_context_tag;
thread_local void* g_current_ctx;
int g_stream_tag, g_pool_tag;

struct NvrtcProgram {
    std::string source, name, log, image;
    bool real_arch = false;  // compiled for sm_XY: a cubin is available
};

}  // namespace

// =============================================================================================
// The driver API (the subset cudarc calls for hetkit)
// =============================================================================================
extern "C" {

CUresult cuInit(unsigned) {
    const char* seed = std::getenv("HETKIT_EMU_SEED");
    if (seed) g_rng = std::strtoull(seed, nullptr, 0) | 1;
    return OK;
}
CUresult cuDriverGetVersion(int* v) { *v = emu_driver_version(); return OK; }
CUresult cuDeviceGetCount(int* n) { *n = 1; return OK; }
CUresult cuDeviceGet(int* dev, int ordinal) { if (ordinal != 0) return ERR_INVALID_VALUE; *dev = 0; return OK; }
CUresult cuDeviceGetName(char* name, int len, int) {
    std::snprintf(name, len, "hetkit CUDA emulator (CPU, sm_90 limits)");
    return OK;
}
CUresult cuDeviceTotalMem_v2(std::size_t* bytes, int) { *bytes = kTotalMemory; return OK; }
CUresult cuDeviceGetUuid(unsigned char* uuid, int) { std::memset(uuid, 0x42, 16); return OK; }
CUresult cuDeviceGetUuid_v2(unsigned char* uuid, int) { std::memset(uuid, 0x42, 16); return OK; }
CUresult cuDeviceGetAttribute(int* v, int attr, int) {
    switch (attr) {
    case 1: *v = 1024; break;                          // max threads per block
    case 2: case 3: *v = 1024; break;                  // block dims
    case 4: *v = 64; break;
    case 5: *v = 0x7fffffff; break;                    // grid dims
    case 6: case 7: *v = 65535; break;
    case 8: *v = kSharedPerBlock; break;
    case 9: *v = 65536; break;                         // constant memory
    case 10: *v = 32; break;                           // warp size
    case 12: *v = 65536; break;                        // registers per block
    case 13: *v = 1980000; break;                      // clock kHz
    case 16: *v = kSmCount; break;
    case 36: *v = 2619000; break;                      // memory clock kHz (H100 SXM)
    case 37: *v = 5120; break;                         // bus width bits
    case 38: *v = 50 << 20; break;                     // L2
    case 39: *v = 2048; break;                         // threads per SM
    case 41: *v = 1; break;                            // unified addressing
    case 75: *v = emu_cc() / 10; break;                // compute capability
    case 76: *v = emu_cc() % 10; break;
    case 81: *v = 228 * 1024; break;                   // shared per SM
    case 82: *v = 65536; break;                        // registers per SM
    case 97: *v = kSharedOptin; break;
    case 115: *v = 1; break;                           // memory pools
    default: *v = 0;
    }
    return OK;
}
CUresult cuDevicePrimaryCtxRetain(void** ctx, int) { *ctx = &g_context_tag; return OK; }
CUresult cuDevicePrimaryCtxRelease_v2(int) { return OK; }
CUresult cuDevicePrimaryCtxReset_v2(int) { return OK; }
CUresult cuCtxSetCurrent(void* ctx) { g_current_ctx = ctx; return OK; }
CUresult cuCtxGetCurrent(void** ctx) { *ctx = g_current_ctx; return OK; }
CUresult cuCtxPushCurrent_v2(void* ctx) { g_current_ctx = ctx; return OK; }
CUresult cuCtxPopCurrent_v2(void** ctx) { if (ctx) *ctx = g_current_ctx; return OK; }
CUresult cuCtxGetDevice(int* dev) { *dev = 0; return OK; }
CUresult cuCtxSynchronize() { return OK; }
CUresult cuCtxSetFlags(unsigned) { return OK; }
CUresult cuCtxGetStreamPriorityRange(int* lo, int* hi) { if (lo) *lo = 0; if (hi) *hi = -5; return OK; }
CUresult cuCtxSetLimit(int, std::size_t) { return OK; }
CUresult cuCtxGetLimit(std::size_t* v, int) { *v = 0; return OK; }
CUresult cuCtxSetCacheConfig(int) { return OK; }
CUresult cuCtxGetCacheConfig(int* c) { *c = 0; return OK; }

CUresult cuStreamCreate(void** s, unsigned) { *s = &g_stream_tag; return OK; }
CUresult cuStreamCreateWithPriority(void** s, unsigned, int) { *s = &g_stream_tag; return OK; }
CUresult cuStreamDestroy_v2(void*) { return OK; }
CUresult cuStreamSynchronize(void*) { return OK; }
CUresult cuStreamQuery(void*) { return OK; }
CUresult cuStreamWaitEvent(void*, void*, unsigned) { return OK; }
CUresult cuStreamIsCapturing(void*, int* status) { *status = 0; return OK; }

CUresult cuEventCreate(void** e, unsigned) { *e = new Event(); return OK; }
CUresult cuEventDestroy_v2(void* e) { delete static_cast<Event*>(e); return OK; }
CUresult cuEventRecord(void* e, void*) {
    auto* ev = static_cast<Event*>(e);
    ev->t = now_s();
    ev->recorded = true;
    return OK;
}
CUresult cuEventRecordWithFlags(void* e, void* s, unsigned) { return cuEventRecord(e, s); }
CUresult cuEventSynchronize(void*) { return OK; }
CUresult cuEventQuery(void*) { return OK; }
CUresult cuEventElapsedTime(float* ms, void* a, void* b) {
    auto *s = static_cast<Event*>(a), *e = static_cast<Event*>(b);
    if (!s->recorded || !e->recorded) return ERR_INVALID_HANDLE;
    *ms = (float)((e->t - s->t) * 1e3);
    return OK;
}
CUresult cuEventElapsedTime_v2(float* ms, void* a, void* b) { return cuEventElapsedTime(ms, a, b); }

CUresult cuMemAlloc_v2(unsigned long long* p, std::size_t bytes) { LOCK; return device_alloc(p, bytes); }
CUresult cuMemAllocAsync(unsigned long long* p, std::size_t bytes, void*) { LOCK; return device_alloc(p, bytes); }
CUresult cuMemAllocFromPoolAsync(unsigned long long* p, std::size_t bytes, void*, void*) { LOCK; return device_alloc(p, bytes); }
CUresult cuMemFree_v2(unsigned long long p) { LOCK; return device_free(p); }
CUresult cuMemFreeAsync(unsigned long long p, void*) { LOCK; return device_free(p); }
CUresult cuMemGetInfo_v2(std::size_t* free_b, std::size_t* total) {
    LOCK;
    *free_b = kTotalMemory - g_device_bytes;
    *total = kTotalMemory;
    return OK;
}
CUresult cuMemHostAlloc(void** p, std::size_t bytes, unsigned) { *p = std::malloc(bytes ? bytes : 1); return *p ? OK : ERR_OUT_OF_MEMORY; }
CUresult cuMemAllocHost_v2(void** p, std::size_t bytes) { return cuMemHostAlloc(p, bytes, 0); }
CUresult cuMemFreeHost(void* p) { std::free(p); return OK; }
CUresult cuMemHostRegister_v2(void*, std::size_t, unsigned) { return OK; }
CUresult cuMemHostUnregister(void*) { return OK; }

CUresult cuMemcpyHtoD_v2(unsigned long long d, const void* h, std::size_t n) { LOCK; return checked_copy(d, (unsigned long long)h, n, true, false, "cuMemcpyHtoD"); }
CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void* h, std::size_t n, void*) { return cuMemcpyHtoD_v2(d, h, n); }
CUresult cuMemcpyDtoH_v2(void* h, unsigned long long d, std::size_t n) { LOCK; return checked_copy((unsigned long long)h, d, n, false, true, "cuMemcpyDtoH"); }
CUresult cuMemcpyDtoHAsync_v2(void* h, unsigned long long d, std::size_t n, void*) { return cuMemcpyDtoH_v2(h, d, n); }
CUresult cuMemcpyDtoD_v2(unsigned long long d, unsigned long long s, std::size_t n) { LOCK; return checked_copy(d, s, n, true, true, "cuMemcpyDtoD"); }
CUresult cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s, std::size_t n, void*) { return cuMemcpyDtoD_v2(d, s, n); }
CUresult cuMemsetD8_v2(unsigned long long d, unsigned char v, std::size_t n) {
    LOCK;
    if (n && !in_device_memory(d, n)) { note("cuMemsetD8 of %zu bytes outside a device allocation", n); return ERR_INVALID_VALUE; }
    std::memset((void*)d, v, n);
    return OK;
}
CUresult cuMemsetD8Async(unsigned long long d, unsigned char v, std::size_t n, void*) { return cuMemsetD8_v2(d, v, n); }
CUresult cuMemsetD32_v2(unsigned long long d, unsigned v, std::size_t n) {
    LOCK;
    if (n && !in_device_memory(d, 4 * n)) { note("cuMemsetD32 of %zu words outside a device allocation", n); return ERR_INVALID_VALUE; }
    for (std::size_t i = 0; i < n; ++i) ((unsigned*)d)[i] = v;
    return OK;
}
CUresult cuMemsetD32Async(unsigned long long d, unsigned v, std::size_t n, void*) { return cuMemsetD32_v2(d, v, n); }

CUresult cuDeviceGetDefaultMemPool(void** pool, int) { *pool = &g_pool_tag; return OK; }
CUresult cuDeviceGetMemPool(void** pool, int) { *pool = &g_pool_tag; return OK; }
CUresult cuMemPoolSetAttribute(void*, int, void*) { return OK; }
CUresult cuMemPoolGetAttribute(void*, int, void* v) { *(unsigned long long*)v = 0; return OK; }
CUresult cuMemPoolTrimTo(void*, std::size_t) { return OK; }

CUresult cuModuleLoadData(void** module, const void* image) {
    LOCK;
    return load_module(static_cast<const char*>(image), reinterpret_cast<Module**>(module));
}
CUresult cuModuleUnload(void* module) { LOCK; delete static_cast<Module*>(module); return OK; }
CUresult cuModuleGetFunction(void** f, void* module, const char* name) {
    LOCK;
    auto& ks = static_cast<Module*>(module)->kernels;
    auto it = ks.find(name);
    if (it == ks.end()) return ERR_NOT_FOUND;
    *f = it->second;
    return OK;
}
CUresult cuFuncGetAttribute(int* v, int attr, void* f) {
    auto* k = static_cast<Kernel*>(f);
    switch (attr) {
    case 0: *v = k->maxntid ? (int)k->maxntid : 1024; break;
    case 4: *v = k->maxntid && k->maxntid <= 1024 ? std::min(255, 65536 / (int)k->maxntid) : 64; break;
    case 8: *v = k->max_dynamic_smem; break;
    default: *v = 0;
    }
    return OK;
}
CUresult cuFuncSetAttribute(void* f, int attr, int v) {
    auto* k = static_cast<Kernel*>(f);
    if (attr == 8) {
        if (v < 0 || v > kSharedOptin) return ERR_INVALID_VALUE;
        k->max_dynamic_smem = std::max(v, kSharedPerBlock);
    }
    return OK;
}
CUresult cuFuncSetCacheConfig(void*, int) { return OK; }
CUresult cuLinkCreate_v2(unsigned, int*, void**, void** state) { *state = new LinkState(); return OK; }
CUresult cuLinkAddData_v2(void* state, int type, void* data, std::size_t size, const char*, unsigned, int*, void**) {
    if (type != 1 /* CU_JIT_INPUT_PTX */ || !data) return ERR_NOT_SUPPORTED;
    std::string text((const char*)data, strnlen((const char*)data, size));
    CUresult gate = check_image_version(text);
    if (gate != OK) return gate;
    static_cast<LinkState*>(state)->ptx += text;
    return OK;
}
CUresult cuLinkComplete(void* state, void** cubin, std::size_t* size) {
    auto* l = static_cast<LinkState*>(state);
    if (l->ptx.compare(0, kModuleMark.size(), kModuleMark) == 0) {
        l->cubin = l->ptx;
        std::size_t at = l->cubin.find(" ptx\n");
        if (at != std::string::npos) l->cubin.replace(at, 5, " cubin\n");
    } else {
        l->cubin = kJitMark + l->ptx;
    }
    *cubin = (void*)l->cubin.c_str();
    *size = l->cubin.size() + 1;
    return OK;
}
CUresult cuLinkDestroy(void* state) { delete static_cast<LinkState*>(state); return OK; }
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void*, void** params, void** extra) {
    LOCK;
    if (extra) return ERR_NOT_SUPPORTED;
    return launch_kernel(static_cast<Kernel*>(f), gx, gy, gz, bx, by, bz, smem, params);
}
CUresult cuLaunchHostFunc(void*, void (*fn)(void*), void* data) { fn(data); return OK; }
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* n, void* f, int threads, std::size_t) {
    (void)f;
    *n = threads > 0 ? std::max(1, 2048 / threads) : 1;
    return OK;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* n, void* f, int threads, std::size_t s, unsigned) {
    return cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, threads, s);
}
struct ErrorText {
    CUresult code;
    const char* name;
    const char* text;
};
const ErrorText kErrors[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {ERR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {ERR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {ERR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {ERR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {ERR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain"},
    {ERR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {ERR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {ERR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {ERR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure (the emulator's message is on stderr)"},
    {ERR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
};
const ErrorText* error_text(CUresult e) {
    for (const ErrorText& t : kErrors)
        if (t.code == e) return &t;
    return nullptr;
}
CUresult cuGetErrorString(CUresult e, const char** s) {
    const ErrorText* t = error_text(e);
    *s = t ? t->text : "emulated CUDA error";
    return OK;
}
CUresult cuGetErrorName(CUresult e, const char** s) {
    const ErrorText* t = error_text(e);
    *s = t ? t->name : "CUDA_ERROR_UNKNOWN";
    return OK;
}

// =============================================================================================
// NVRTC: "compiles" to a library of CPU kernels; the PTX names it and lists its entries
// =============================================================================================
typedef int nvrtcResult;
enum : int { NVRTC_OK = 0, NVRTC_INVALID_INPUT = 3, NVRTC_INVALID_PROGRAM = 4, NVRTC_INVALID_OPTION = 5,
             NVRTC_COMPILATION = 6 };

const char* nvrtcGetErrorString(nvrtcResult r) {
    switch (r) {
    case NVRTC_OK: return "NVRTC_SUCCESS";
    case NVRTC_INVALID_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
    case NVRTC_INVALID_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
    case NVRTC_COMPILATION: return "NVRTC_ERROR_COMPILATION";
    default: return "NVRTC_ERROR";
    }
}
nvrtcResult nvrtcVersion(int* major, int* minor) {
    int v = emu_nvrtc_version();
    *major = v / 1000;
    *minor = v % 1000 / 10;
    return NVRTC_OK;
}
nvrtcResult nvrtcCreateProgram(void** prog, const char* src, const char* name, int, const char* const*, const char* const*) {
    if (!prog || !src) return NVRTC_INVALID_INPUT;
    *prog = new NvrtcProgram{src, name ? name : "program", "", ""};
    return NVRTC_OK;
}
nvrtcResult nvrtcDestroyProgram(void** prog) {
    delete static_cast<NvrtcProgram*>(*prog);
    *prog = nullptr;
    return NVRTC_OK;
}
nvrtcResult nvrtcCompileProgram(void* prog, int n, const char* const* options) {
    auto* p = static_cast<NvrtcProgram*>(prog);
    std::string arch = "sm_90";
    p->real_arch = false;
    for (int i = 0; i < n; ++i) {
        std::string o = options[i];
        if (o.find("arch") == std::string::npos) continue;
        bool real = false;
        std::size_t at = o.find("compute_");
        if (at != std::string::npos) at += 8;
        else if ((at = o.find("sm_")) != std::string::npos) at += 3, real = true;
        else continue;
        int cc = std::atoi(o.c_str() + at);
        if (cc > 90) return NVRTC_INVALID_OPTION;  // like an NVRTC that predates the device
        arch = "sm_" + std::to_string(cc);
        p->real_arch = real;
    }
    std::string so;
    {
        LOCK;
        so = compile(p->source, "", p->name, p->log);
        if (so.empty()) return NVRTC_COMPILATION;
        auto* table = load_library(so);
        if (!table) return NVRTC_COMPILATION;
        int made = emu_nvrtc_version();
        std::ostringstream img;
        img << kModuleMark << so << "\n" << kMadeBy << made << " ptx\n.version " << isa_of(made) << "\n.target "
            << arch << "\n.address_size 64\n";
        for (auto& kv : *table) img << ".visible .entry " << kv.first << "(\n)\n";
        p->image = img.str();
    }
    return NVRTC_OK;
}
// A cubin only for a real architecture (size 0 otherwise, as NVRTC does): our image marked "cubin".
std::string nvrtc_cubin(const NvrtcProgram* p) {
    if (!p->real_arch) return "";
    std::string c = p->image;
    std::size_t at = c.find(" ptx\n");
    if (at != std::string::npos) c.replace(at, 5, " cubin\n");
    return c;
}
nvrtcResult nvrtcGetCUBINSize(void* prog, std::size_t* n) {
    std::string c = nvrtc_cubin(static_cast<NvrtcProgram*>(prog));
    *n = c.empty() ? 0 : c.size() + 1;
    return NVRTC_OK;
}
nvrtcResult nvrtcGetCUBIN(void* prog, char* out) {
    std::string c = nvrtc_cubin(static_cast<NvrtcProgram*>(prog));
    if (c.empty()) return NVRTC_INVALID_INPUT;
    std::memcpy(out, c.c_str(), c.size() + 1);
    return NVRTC_OK;
}
nvrtcResult nvrtcGetPTXSize(void* prog, std::size_t* n) { *n = static_cast<NvrtcProgram*>(prog)->image.size() + 1; return NVRTC_OK; }
nvrtcResult nvrtcGetPTX(void* prog, char* out) {
    auto& s = static_cast<NvrtcProgram*>(prog)->image;
    std::memcpy(out, s.c_str(), s.size() + 1);
    return NVRTC_OK;
}
nvrtcResult nvrtcGetProgramLogSize(void* prog, std::size_t* n) { *n = static_cast<NvrtcProgram*>(prog)->log.size() + 1; return NVRTC_OK; }
nvrtcResult nvrtcGetProgramLog(void* prog, char* out) {
    auto& s = static_cast<NvrtcProgram*>(prog)->log;
    std::memcpy(out, s.c_str(), s.size() + 1);
    return NVRTC_OK;
}
nvrtcResult nvrtcAddNameExpression(void*, const char*) { return NVRTC_OK; }

}  // extern "C"
