/* SPDX-License-Identifier: MIT */
/* no-peerpidfd: runs a command as on a kernel older than Linux 6.5, where
 * getsockopt(SO_PEERPIDFD) does not exist: a seccomp filter makes that one
 * call fail with ENOPROTOOPT, as such a kernel answers; every other call goes
 * through. For the tests of the daemon's fallback (pidfd_open of the peer's
 * pid at accept), which this machine's kernel would otherwise never take.
 * With --no-pidfd-open, pidfd_open fails with ENOSYS too, as before Linux 5.3.
 *
 * Usage: no-peerpidfd [--no-pidfd-open] CMD [ARG...] */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "no-peerpidfd: add this architecture's AUDIT_ARCH"
#endif

#define ARG_LO(n) (offsetof(struct seccomp_data, args[n]))   /* little-endian: the low word first */

int main(int argc, char **argv) {
        bool no_pidfd_open = argc > 1 && strcmp(argv[1], "--no-pidfd-open") == 0;
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                /* -1 is no call's number: without the option, this rule never matches */
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, no_pidfd_open ? __NR_pidfd_open : (unsigned) -1, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getsockopt, 0, 5),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOL_SOCKET, 0, 3),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SO_PEERPIDFD, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOPROTOOPT),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

        argv += no_pidfd_open;
        argc -= no_pidfd_open;
        if (argc < 2) {
                fprintf(stderr, "usage: no-peerpidfd [--no-pidfd-open] CMD [ARG...]\n");
                return 2;
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
                fprintf(stderr, "no-peerpidfd: seccomp: %s\n", strerror(errno));
                return 1;
        }
        execvp(argv[1], argv + 1);
        fprintf(stderr, "no-peerpidfd: %s: %s\n", argv[1], strerror(errno));
        return 127;
}
