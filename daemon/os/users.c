/* SPDX-License-Identifier: MIT */
/* Users and groups by name (users.h). */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>

#include "os/users.h"

/* getgrnam_r's and getpwnam_r's buffer: an entry bigger than this is not found. */
#define NSS_BUFFER_MAX (1u << 20)

int group_gid(const char *name, gid_t *ret) {
        struct group gr, *found = NULL;
        char *buf = NULL;
        size_t size = 4096;
        int r;

        for (;;) {
                char *p = realloc(buf, size);

                if (!p) {
                        free(buf);
                        return -ENOMEM;
                }
                buf = p;
                r = getgrnam_r(name, &gr, buf, size, &found);
                if (r != ERANGE || size >= NSS_BUFFER_MAX)
                        break;
                size *= 2;
        }
        if (found)
                *ret = found->gr_gid;
        free(buf);
        if (r != 0 && r != ENOENT && r != ESRCH)
                return -r;
        return found != NULL;
}

int user_uid(const char *name, uid_t *ret) {
        struct passwd pw, *found = NULL;
        char *buf = NULL;
        size_t size = 4096;
        int r;

        for (;;) {
                char *p = realloc(buf, size);

                if (!p) {
                        free(buf);
                        return -ENOMEM;
                }
                buf = p;
                r = getpwnam_r(name, &pw, buf, size, &found);
                if (r != ERANGE || size >= NSS_BUFFER_MAX)
                        break;
                size *= 2;
        }
        if (found)
                *ret = found->pw_uid;
        free(buf);
        if (r != 0 && r != ENOENT && r != ESRCH)
                return -r;
        return found != NULL;
}
