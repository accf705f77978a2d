/* SPDX-License-Identifier: MIT */
/* Who is at the other end of a connected stream socket on this host: the
 * owner of the socket the kernel delivers our bytes to, from its socket
 * diagnostics (NETLINK_SOCK_DIAG, inet_diag: TCP over IPv4 and IPv6) or
 * SO_PEERCRED (Unix). Asked before a secret is sent to a local server that
 * anyone could have replaced while it was down. Never blocks: the kernel
 * answers a diag request before send() returns. Non-logging. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Whether fd's connection is up, not merely in progress or failed (SO_ERROR
 * is left for its owner to read). */
bool peer_connected(int fd);

/* Sets *ret_uid to the owner of the socket at the other end of fd's
 * connection: for TCP the one the server accepted it on, which carries
 * the uid of the process that opened the listening socket; for a Unix
 * socket the uid of the process that called listen(). Returns 0, -ENOENT
 * when no socket of this network namespace is at the other end (another
 * host), or -errno (-EAFNOSUPPORT, -EPERM: AF_NETLINK not allowed, e.g. by
 * RestrictAddressFamilies=; -ENOTCONN). */
int peer_owner(int fd, uid_t *ret_uid);

/* Whether fd's peer is a loopback address (127.0.0.0/8, ::1, or
 * ::ffff:127.0.0.0/104) or a Unix socket: traffic that never leaves the
 * host. Returns 1, 0, or -errno. */
int peer_is_local(int fd);

#define PEER_CGROUP_MAX 512

/* Where the process at the other end of fd is, fd a connected Unix stream
 * socket whose SO_PEERCRED pid is pid: its mount namespace (the inode
 * number of its /proc/PID/ns/mnt) in *ret_ns, and its cgroup (the unified
 * hierarchy's path, "" when it has none) in ret_cgroup (PEER_CGROUP_MAX
 * bytes). The process is pinned by a pidfd while they are read, and must
 * still be alive after, so that the pid named no other process meanwhile. The pidfd is the kernel's own
 * (SO_PEERPIDFD, Linux 6.5): exactly the process that connected. On older
 * kernels it is pidfd_open(pid) at accept, which trusts that the pid was
 * not reused between the peer's connect() and now (the listen queue).
 * Reading another user's namespace takes CAP_SYS_PTRACE. Returns 0, or
 * -errno (-ESRCH: the peer is gone; -EACCES, -EPERM: not allowed to look). */
int peer_place(int fd, pid_t pid, uint64_t *ret_ns, char *ret_cgroup);

/* The mount namespace of process pid (0: this one) into *ret_ns. Returns
 * 0 or -errno. */
int process_mount_ns(pid_t pid, uint64_t *ret_ns);

/* The unified cgroup path of process pid (0: this one), "/system.slice/x.service",
 * into ret (PEER_CGROUP_MAX bytes; "" when none). Returns 0 or -errno. */
int process_cgroup(pid_t pid, char *ret);
