/* SPDX-License-Identifier: MIT */
/* Users and groups by name (users.h). */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "os/users.h"

/* getgrnam_r's and getpwnam_r's buffer: an entry bigger than this is not found. */
#define NSS_BUFFER_MAX (1u << 20)

_Static_assert(sizeof(gid_t) == sizeof(uint32_t) && sizeof(uid_t) == sizeof(uint32_t), "ids are 32 bits");

/* The gid of group name (group) or the uid of user name into *ret, with a
 * buffer grown until the entry fits. As group_gid returns. */
static int lookup(const char *name, bool group, uint32_t *ret) {
        char *buf = NULL;
        size_t size = 4096;
        bool found = false;
        int r;

        for (;;) {
                char *p = realloc(buf, size);

                if (!p) {
                        free(buf);
                        return -ENOMEM;
                }
                buf = p;
                if (group) {
                        struct group gr, *g = NULL;

                        r = getgrnam_r(name, &gr, buf, size, &g);
                        if ((found = g))
                                *ret = g->gr_gid;
                } else {
                        struct passwd pw, *u = NULL;

                        r = getpwnam_r(name, &pw, buf, size, &u);
                        if ((found = u))
                                *ret = u->pw_uid;
                }
                if (r != ERANGE || size >= NSS_BUFFER_MAX)
                        break;
                size *= 2;
        }
        free(buf);
        if (r != 0 && r != ENOENT && r != ESRCH)
                return -r;
        return found;
}

int group_gid(const char *name, gid_t *ret) {
        return lookup(name, true, ret);
}

int user_uid(const char *name, uid_t *ret) {
        return lookup(name, false, ret);
}
