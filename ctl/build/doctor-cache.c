/* SPDX-License-Identifier: MIT */
/* The cache directory a build uses (doctor-internal.h): what ccache says it
 * is, whether cachekeeperd keeps it, whether this user can write it and
 * ccache's directories in it. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/protocol.h"
#include "base/status-keys.h"
#include "build/doctor-internal.h"
#include "core/client.h"
#include "core/path.h"

/* `ccache -k KEY` with the environment plus env: what ccache will use. */
char *ccache_get(const char *key, char **env) {
        char *argv[] = { (char *) "ccache", (char *) "-k", (char *) key, NULL };
        Output out = { 0 };
        int status = doctor_run(argv, env, NULL, keep_output, &out);

        if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return NULL;
        out.text[strcspn(out.text, "\n")] = '\0';
        return strdup(out.text);
}

/* Counts, of dir and the ccache directories in it that exist (tmp, lock,
 * the 16 L1 and 256 L2 ones), those this user cannot write. */
static unsigned unwritable(const char *dir, unsigned *ret_checked, char *first, size_t size) {
        static const char hex[] = "0123456789abcdef";
        unsigned bad = 0, checked = 0;
        char p[PATH_MAX];

        first[0] = '\0';
        for (int i = -3; i < 16; i++)
                for (int j = -1; j < (i >= 0 ? 16 : 0); j++) {
                        struct stat st;

                        if (i == -3)
                                snprintf(p, sizeof(p), "%s", dir);
                        else if (i < 0)
                                snprintf(p, sizeof(p), "%s/%s", dir, i == -2 ? "tmp" : "lock");
                        else if (j < 0)
                                snprintf(p, sizeof(p), "%s/%c", dir, hex[i]);
                        else
                                snprintf(p, sizeof(p), "%s/%c/%c", dir, hex[i], hex[j]);
                        if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode))
                                continue;
                        checked++;
                        if (access(p, W_OK | X_OK) == 0)
                                continue;
                        if (bad++ == 0)
                                snprintf(first, size, "%s", p);
                }
        *ret_checked = checked;
        return bad;
}

/* The cache-dir and cache-writable checks for dir (name_suffix: "" or
 * "-<LANG>" when languages use different directories). */
void check_cache_dir(Doctor *d, const char *dir, const char *suffix, json_object *status, int asked) {
        _cleanup_free_ char *real = realpath(dir, NULL);
        char name[64], first[PATH_MAX];
        unsigned bad, checked;
        const char *kept_name = NULL, *kept_mode = NULL;
        size_t n = protocol_field_count(status, STATUS_CACHES);

        snprintf(name, sizeof(name), "cache-dir%s", suffix);
        for (size_t i = 0; asked > 0 && i < n; i++) {
                json_object *c = protocol_field_item(status, STATUS_CACHES, i);
                const char *path = protocol_field_str(c, STATUS_CACHE_PATH);

                if (path && path_same_dir(path, dir)) {
                        kept_name = protocol_field_str(c, STATUS_CACHE_NAME);
                        kept_mode = protocol_field_str(c, STATUS_CACHE_MODE);
                        break;
                }
        }
        if (asked <= 0)
                doctor_add(d, name, DOCTOR_WARN, NULL, "CCACHE_DIR %s: could not ask cachekeeperd whether it keeps it (%s)",
                    dir, ctl_problem[0] ? ctl_problem : "no answer");
        else if (kept_name)
                doctor_add(d, name, DOCTOR_OK, NULL, "CCACHE_DIR %s is cache '%s' of cachekeeperd (mode %s)", dir, kept_name,
                    kept_mode ? kept_mode : "?");
        else if (n == 0)
                doctor_add(d, name, DOCTOR_FAIL, NULL, "CCACHE_DIR %s is not kept by cachekeeperd (it keeps no cache)", dir);
        else {
                char list[1024] = "";
                size_t len = 0;
                _cleanup_free_ char *fix = NULL;

                for (size_t i = 0; i < n && len < sizeof(list); i++) {
                        const char *p = protocol_field_str(protocol_field_item(status, STATUS_CACHES, i),
                                                           STATUS_CACHE_PATH);
                        int k = snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", p ? p : "?");

                        if (k > 0)
                                len += (size_t) k;
                }
                fix = strdupf("export CCACHE_DIR=%s", protocol_field_str(protocol_field_item(status, STATUS_CACHES, 0),
                                                                         STATUS_CACHE_PATH) ?: "?");
                doctor_add(d, name, DOCTOR_FAIL, fix, "CCACHE_DIR %s is not a cache cachekeeperd keeps (it keeps %s)", dir,
                    list);
        }

        snprintf(name, sizeof(name), "cache-writable%s", suffix);
        if (!real) {
                _cleanup_free_ char *fix = strdupf("mkdir -p %s", dir);

                doctor_add(d, name, DOCTOR_FAIL, fix, "CCACHE_DIR %s does not exist (%s)", dir, strerror(errno));
                return;
        }
        bad = unwritable(real, &checked, first, sizeof(first));
        if (bad == 0)
                doctor_add(d, name, DOCTOR_OK, NULL, "you can write %s (%u of its directories checked)", real, checked);
        else {
                _cleanup_free_ char *fix = kept_name ? strdupf("ask root to restore the modes: sudo chmod -R a+rwX %s "
                                                               "(cachekeeperd keeps %s at mode %s)",
                                                               real, real, kept_mode ? kept_mode : "?")
                                                     : strdupf("sudo chmod -R a+rwX %s", real);

                doctor_add(d, name, DOCTOR_FAIL, fix, "you cannot write %u of %u directories of %s (first: %s): "
                    "every miss fails or stores nothing", bad, checked, real, first);
        }
}
