/* SPDX-License-Identifier: MIT */
/* The owner of a connection's far end, asked of the kernel: SO_PEERCRED
 * for Unix sockets, one exact inet_diag lookup (sock_diag(7)) for TCP.
 * Non-logging. */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "base/util.h"
#include "os/peer.h"

static int unix_owner(int fd, uid_t *ret_uid) {
        struct ucred cred;
        socklen_t n = sizeof(cred);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &n) < 0)
                return -errno;
        *ret_uid = cred.uid;
        return 0;
}

/* Copies the address and port of a (AF_INET or AF_INET6) into the
 * inet_diag fields (network byte order, as the kernel wants them). */
static void diag_addr(const struct sockaddr_storage *a, __be32 addr[4], __be16 *port) {
        if (a->ss_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *) a;
                addr[0] = in->sin_addr.s_addr;
                *port = in->sin_port;
        } else {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *) a;
                memcpy(addr, &in6->sin6_addr, sizeof(in6->sin6_addr));
                *port = in6->sin6_port;
        }
}

/* The socket whose local end is our peer and whose remote end is us: the
 * server's accepted socket (inet_diag_find_one_icsk looks it up as the
 * kernel would deliver a packet from us to the peer). */
static int tcp_owner(int family, const struct sockaddr_storage *us, const struct sockaddr_storage *peer,
                     uid_t *ret_uid) {
        _cleanup_close_ int nl = -1;
        struct {
                struct nlmsghdr nlh;
                struct inet_diag_req_v2 req;
        } msg = {
                .nlh = { .nlmsg_len = sizeof(msg), .nlmsg_type = SOCK_DIAG_BY_FAMILY, .nlmsg_flags = NLM_F_REQUEST,
                         .nlmsg_seq = 1 },
                .req = { .sdiag_family = (__u8) family, .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0U,
                         .id.idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } },
        };
        struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        union {
                struct nlmsghdr nlh;
                char buf[1024];
        } reply;
        const struct nlmsghdr *h = &reply.nlh;
        ssize_t n;

        diag_addr(peer, msg.req.id.idiag_src, &msg.req.id.idiag_sport);
        diag_addr(us, msg.req.id.idiag_dst, &msg.req.id.idiag_dport);
        nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_SOCK_DIAG);
        if (nl < 0)
                return -errno;
        if (sendto(nl, &msg, sizeof(msg), 0, (struct sockaddr *) &kernel, sizeof(kernel)) < 0)
                return -errno;
        /* Answered within sendto: nothing to wait for (SOCK_NONBLOCK). */
        n = recv(nl, &reply, sizeof(reply), 0);
        if (n < 0)
                return errno == EAGAIN ? -ETIMEDOUT : -errno;
        if (!NLMSG_OK(h, (size_t) n))
                return -EBADMSG;
        if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);
                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                        return -EBADMSG;
                return e->error < 0 ? e->error : -EBADMSG;
        }
        if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
                return -EBADMSG;
        *ret_uid = ((const struct inet_diag_msg *) NLMSG_DATA(h))->idiag_uid;
        return 0;
}

bool peer_connected(int fd) {
        struct sockaddr_storage sa;
        socklen_t n = sizeof(sa);

        return getpeername(fd, (struct sockaddr *) &sa, &n) == 0;
}

int peer_owner(int fd, uid_t *ret_uid) {
        struct sockaddr_storage us, peer;
        socklen_t ul = sizeof(us), pl = sizeof(peer);

        if (getpeername(fd, (struct sockaddr *) &peer, &pl) < 0 || getsockname(fd, (struct sockaddr *) &us, &ul) < 0)
                return -errno;
        if (peer.ss_family == AF_UNIX)
                return unix_owner(fd, ret_uid);
        if ((peer.ss_family != AF_INET && peer.ss_family != AF_INET6) || us.ss_family != peer.ss_family)
                return -EAFNOSUPPORT;
        return tcp_owner(peer.ss_family, &us, &peer, ret_uid);
}

int peer_is_local(int fd) {
        static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
        struct sockaddr_storage peer;
        socklen_t pl = sizeof(peer);

        if (getpeername(fd, (struct sockaddr *) &peer, &pl) < 0)
                return -errno;
        if (peer.ss_family == AF_UNIX)
                return 1;
        if (peer.ss_family == AF_INET)
                return (ntohl(((struct sockaddr_in *) &peer)->sin_addr.s_addr) >> 24) == 127;
        if (peer.ss_family == AF_INET6) {
                const struct in6_addr *a = &((struct sockaddr_in6 *) &peer)->sin6_addr;
                return IN6_IS_ADDR_LOOPBACK(a) || (memcmp(a->s6_addr, mapped, 12) == 0 && a->s6_addr[12] == 127);
        }
        return 0;
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77         /* Linux 6.5; Debian 12's headers predate it */
#endif

int process_mount_ns(pid_t pid, uint64_t *ret_ns) {
        char path[64];
        struct stat st;

        if (pid > 0)
                snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int) pid);
        else
                snprintf(path, sizeof(path), "/proc/self/ns/mnt");
        if (stat(path, &st) < 0)
                return -errno;
        *ret_ns = (uint64_t) st.st_ino;
        return 0;
}

int process_cgroup(pid_t pid, char *ret) {
        char path[64], line[PEER_CGROUP_MAX + 8];
        FILE *f;

        if (pid > 0)
                snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) pid);
        else
                snprintf(path, sizeof(path), "/proc/self/cgroup");
        f = fopen(path, "re");
        if (!f)
                return -errno;
        ret[0] = '\0';
        /* Whole lines only: a path longer than the buffer is no unit's, and
         * a piece of one (a delegated subtree's names can hold "0::") must
         * never be read as a line of its own. */
        for (bool at_start = true; fgets(line, sizeof(line), f);) {
                size_t n = strlen(line);
                bool whole = n > 0 && line[n - 1] == '\n';

                if (at_start && whole && strncmp(line, "0::", 3) == 0 && n - 4 < PEER_CGROUP_MAX) {
                        memcpy(ret, line + 3, n - 4);
                        ret[n - 4] = '\0';
                        break;
                }
                at_start = whole;
        }
        fclose(f);
        return 0;
}

/* A pidfd for fd's peer: the kernel's (the process that connected), else
 * one for whoever holds pid now. */
static int peer_pidfd(int fd, pid_t pid) {
        int pidfd = -1;
        socklen_t n = sizeof(pidfd);

        if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &n) == 0 && pidfd >= 0)
                return pidfd;
        if (errno != ENOPROTOOPT && errno != EINVAL)
                return -errno;          /* ESRCH: the peer is gone */
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        return pidfd < 0 ? -errno : pidfd;
}

int peer_place(int fd, pid_t pid, uint64_t *ret_ns, char *ret_cgroup) {
        _cleanup_close_ int pidfd = -1;
        struct pollfd p;
        uint64_t ns;
        int r;

        if (pid <= 0)
                return -ESRCH;
        pidfd = peer_pidfd(fd, pid);
        if (pidfd < 0)
                return pidfd;
        r = process_mount_ns(pid, &ns);
        if (r >= 0)
                r = process_cgroup(pid, ret_cgroup);
        if (r < 0)
                return r;
        /* Readable once the process has exited: then pid may name another. */
        p = (struct pollfd) { .fd = pidfd, .events = POLLIN };
        if (poll(&p, 1, 0) != 0)
                return -ESRCH;
        *ret_ns = ns;
        return 0;
}
