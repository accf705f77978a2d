/* SPDX-License-Identifier: MIT */
/* Who is at the other end of a connected stream socket on this host: the
 * owner of the socket the kernel delivers our bytes to, from its socket
 * diagnostics (NETLINK_SOCK_DIAG, inet_diag: TCP over IPv4 and IPv6) or
 * SO_PEERCRED (Unix). Asked before a secret is sent to a local server that
 * anyone could have replaced while it was down. Never blocks: the kernel
 * answers a diag request before send() returns. Non-logging. */
#pragma once

#include <stdbool.h>
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
