// Minimal x86-64 System V fibers: a context switch saves the callee-saved registers on the old
// stack and restores them from the new one (no signal-mask syscall, unlike swapcontext). The
// floating-point control words are not switched: every fiber runs on one thread with one
// environment, and kernels do not change it.
#pragma once
#include <cstddef>

extern "C" void emu_fiber_switch(void** save_sp, void* next_sp);
asm(R"(
.text
.globl emu_fiber_switch
.type emu_fiber_switch,@function
emu_fiber_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
.size emu_fiber_switch,.-emu_fiber_switch
)");

// Prepares `stack` (size bytes) so that the first switch to the returned sp enters `entry()`.
inline void* emu_fiber_init(char* stack, std::size_t size, void (*entry)()) {
    unsigned long top = ((unsigned long)(stack + size)) & ~15ul;
    void** sp = (void**)top;
    *--sp = nullptr;        // fake return address of entry (entry never returns)
    *--sp = (void*)entry;   // popped by `ret`
    for (int i = 0; i < 6; ++i) *--sp = nullptr;  // rbp rbx r12 r13 r14 r15
    return sp;
}
