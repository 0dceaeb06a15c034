/* Run a program as if the CPU had AVX2 but no AVX-512, VNNI or AMX: an LD_PRELOAD shim
 * that turns on the kernel's CPUID faulting (arch_prctl ARCH_SET_CPUID, where
 * /proc/cpuinfo lists cpuid_fault) and answers each CPUID with those bits cleared, so
 * that onnxruntime's and torch's kernel choice is the one an AVX2-only CPU gets.
 *
 *   gcc -O2 -shared -fPIC -o /tmp/avx2_only.so bench/avx2_only.c
 *   LD_PRELOAD=/tmp/avx2_only.so python ...     (bench/avx2_only.sh does both)
 *
 * The arithmetic is then exactly an AVX2 machine's (the same kernels); the speed is this
 * core's running them, which is not a given AVX2 CPU's. */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static void answer_cpuid(int sig, siginfo_t *info, void *context) {
    greg_t *regs = ((ucontext_t *)context)->uc_mcontext.gregs;
    unsigned char *ip = (unsigned char *)regs[REG_RIP];
    if (ip[0] != 0x0f || ip[1] != 0xa2) {          /* a real fault: die of it */
        signal(SIGSEGV, SIG_DFL);
        return;
    }
    unsigned leaf = regs[REG_RAX], sub = regs[REG_RCX], a, b, c, d;
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
    __cpuid_count(leaf, sub, a, b, c, d);
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
    if (leaf == 7 && sub == 0) {
        b &= ~(1u << 16 | 1u << 17 | 1u << 21 | 1u << 26 | 1u << 27 | 1u << 28 |
               1u << 30 | 1u << 31);                /* AVX512 F DQ IFMA PF ER CD BW VL */
        c &= ~(1u << 1 | 1u << 6 | 1u << 11 | 1u << 12 | 1u << 14);  /* VBMI VBMI2 VNNI BITALG VPOPCNTDQ */
        d &= ~(1u << 2 | 1u << 3 | 1u << 8 | 1u << 22 | 1u << 23 | 1u << 24 | 1u << 25);
                                                    /* 4VNNIW 4FMAPS VP2INTERSECT AMX-BF16 FP16 AMX-TILE AMX-INT8 */
    } else if (leaf == 7 && sub == 1) {
        a &= ~(1u << 4 | 1u << 5 | 1u << 21 | 1u << 23);  /* AVX-VNNI AVX512-BF16 AMX-FP16 AVX-IFMA */
        d &= ~(1u << 4 | 1u << 5 | 1u << 10);       /* AVX-VNNI-INT8 AVX-NE-CONVERT AVX-VNNI-INT16 */
    } else if (leaf == 0xd && sub == 0) {
        a &= ~(7u << 5 | 3u << 17);                 /* XSAVE state of AVX-512 and AMX */
    }
    regs[REG_RAX] = a; regs[REG_RBX] = b; regs[REG_RCX] = c; regs[REG_RDX] = d;
    regs[REG_RIP] += 2;
}

__attribute__((constructor)) static void start_faulting(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = answer_cpuid;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &action, NULL);
    if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
        static const char msg[] = "avx2_only: this CPU or kernel has no CPUID faulting\n";
        write(2, msg, sizeof msg - 1);
        _exit(3);
    }
}
