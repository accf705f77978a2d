/* SPDX-License-Identifier: MIT */
/* Config parsing and validation: every error names file and line of the
 * setting at fault; defaults and normalisation are what the contract says. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "fixture.h"

#define CACHE_A "caches = ( { name = \"a\"; path = \"/srv/a\"; max_size = \"1G\"; } );\n"

static char tmpdir[] = "/tmp/ck-test-config-XXXXXX";

static int setup(void **state) {
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
        return rm_rf(tmpdir);
}

/* Writes text to a file in tmpdir and loads it. */
static int load_text(const char *text, char *path, size_t pathlen, char *err, size_t errlen, Config **ret) {
        FILE *f;

        snprintf(path, pathlen, "%s/test.conf", tmpdir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        return config_load(path, err, errlen, ret);
}

static void test_errors_name_file_and_line(void **state) {
        static const struct {
                const char *text;
                int line;
                const char *message;   /* substring of the message after "FILE:LINE: " */
        } cases[] = {
                /* syntax errors come from libconfig, with its line */
                { "caches = (\n  { name = \"a\" \n", 3, "syntax error" },
                /* unknown keys, at every level */
                { "sockett = \"/run/x.sock\";\n" CACHE_A, 1, "unknown setting 'sockett'" },
                { "volumes = {\n  warn_fre = \"10%\";\n};\n" CACHE_A, 2, "unknown setting 'volumes.warn_fre'" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n   maxsize = \"2G\"; }\n);\n", 3,
                  "unknown setting 'caches[0].maxsize'" },
                { "volumes = { overrides = ( { mount = \"/m\";\n  warn = \"1%\"; } ); };\n" CACHE_A, 2, "unknown setting" },
                /* a typo of a key gets the key it most likely meant */
                { "sockett = \"/run/x.sock\";\n" CACHE_A, 1, "unknown setting 'sockett' (did you mean 'socket'?)" },
                { "volumes = {\n  warn_fre = \"10%\";\n};\n" CACHE_A, 2, "(did you mean 'warn_free'?)" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n   maxsize = \"2G\"; }\n);\n", 3,
                  "unknown setting 'caches[0].maxsize' (did you mean 'max_size'?)" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n   tirm_to = 0.5; }\n);\n", 3,
                  "(did you mean 'trim_to'?)" },
                /* missing required keys: the line of the group that lacks them */
                { "socket = \"/run/x.sock\";\n", 0, "missing required setting 'caches'" },
                { "caches = (\n  { name = \"a\"; path = \"/a\"; max_size = \"1G\"; },\n  {\n    name = \"b\";\n"
                  "    path = \"/b\";\n  }\n);\n", 3, "missing required setting 'max_size'" },
                { "caches = (\n  { path = \"/a\"; max_size = \"1G\"; }\n);\n", 2, "missing required setting 'name'" },
                { "caches = (\n  { name = \"a\"; max_size = \"1G\"; }\n);\n", 2, "missing required setting 'path'" },
                { "volumes = {\n overrides = (\n  { warn_free = \"20%\"; }\n ); };\n" CACHE_A, 3, "missing required setting 'mount'" },
                { "caches = ();\n", 1, "'caches' is empty" },
                /* wrong types */
                { "socket = 5;\n" CACHE_A, 1, "'socket' must be a string" },
                { "caches = {\n};\n", 1, "'caches' must be a list" },
                { "volumes = 3;\n" CACHE_A, 1, "'volumes' must be a group" },
                { "caches = (\n { name = \"a\"; path = \"/a\";\n max_size = 100; }\n);\n", 3, "'caches[0].max_size' must be a string" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n trim_to = \"0.9\"; }\n);\n", 3, "must be a number" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n ccache_conf = 1; }\n);\n", 3, "true or false" },
                { "caches = (\n 5,\n 6\n);\n", 2, "entries must be groups" },
                { "alert_command = 7;\n" CACHE_A, 1, "'alert_command' must be a path or a list" },
                /* sizes: suffix required, no zero, no negative */
                { "caches = (\n { name = \"a\"; path = \"/a\";\n max_size = \"100\"; }\n);\n", 3, "invalid size \"100\"" },
                { "caches = (\n { name = \"a\"; path = \"/a\";\n max_size = \"0G\"; }\n);\n", 3, "invalid size \"0G\"" },
                { "caches = (\n { name = \"a\"; path = \"/a\";\n max_size = \"-5G\"; }\n);\n", 3, "invalid size \"-5G\"" },
                { "caches = (\n { name = \"a\"; path = \"/a\";\n max_size = \"10g\"; }\n);\n", 3, "invalid size \"10g\"" },
                /* modes */
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n mode = \"1778\"; }\n);\n", 3, "not an octal permission mode" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n mode = \"17777\"; }\n);\n", 3, "not an octal permission mode" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n mode = \"rwx\"; }\n);\n", 3, "not an octal permission mode" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n mode = \"\"; }\n);\n", 3, "not an octal permission mode" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n mode = 1777; }\n);\n", 3, "must be a string" },
                /* relative paths */
                { "caches = (\n { name = \"a\";\n path = \"var/cache\"; max_size = \"1G\"; }\n);\n", 3, "must be an absolute path" },
                { "socket = \"cachekeeper.sock\";\n" CACHE_A, 1, "must be an absolute path" },
                { "state_dir = \"state\";\n" CACHE_A, 1, "'state_dir' must be an absolute path" },
                { "state_dir = 1;\n" CACHE_A, 1, "'state_dir' must be a string" },
                { "state_dir = \"/a/../b\";\n" CACHE_A, 1, "must not contain '.' or '..'" },
                { "\nstate_dir = \"/srv/a/state\";\n" CACHE_A, 2, "'state_dir' (/srv/a/state) must not be inside cache a (/srv/a)" },
                { "caches = (\n { name = \"a\"; path = \"/a/b\"; max_size = \"1G\";\n require_mount = \"a\"; }\n);\n", 3, "must be an absolute path" },
                { "alert_command = \"page-me\";\n" CACHE_A, 1, "must start with an absolute path" },
                { "container_rights = \"status\";\n" CACHE_A, 1, "'container_rights' must be a list of request names" },
                { "container_rights = [ \"status\",\n \"purge\" ];\n" CACHE_A, 2, "\"purge\" is none of status, history" },
                /* a command line in one string: the list it was meant to be */
                { "alert_command = \"/usr/bin/logger -t  ck\";\n" CACHE_A, 1,
                  "'alert_command' is run without a shell, so \"/usr/bin/logger -t  ck\" names no program: give "
                  "the program and its arguments as a list, alert_command = [ \"/usr/bin/logger\", \"-t\", \"ck\" ];" },
                { "caches = (\n { name = \"a\";\n path = \"/a/../b\"; max_size = \"1G\"; }\n);\n", 3, "'.' or '..'" },
                { "caches = (\n { name = \"a\";\n path = \"/\"; max_size = \"1G\"; }\n);\n", 3, "must not be '/'" },
                /* require_mount must hold the cache */
                { "caches = (\n { name = \"a\"; path = \"/a/b\"; max_size = \"1G\";\n require_mount = \"/c\"; }\n);\n", 3, "must be the cache path or a directory above it" },
                { "caches = (\n { name = \"a\"; path = \"/mnt/llm-storagex/c\"; max_size = \"1G\";\n require_mount = \"/mnt/llm-storage\"; }\n);\n", 3, "must be the cache path or a directory above it" },
                /* names */
                { "caches = (\n { name = \"a b\"; path = \"/a\"; max_size = \"1G\"; }\n);\n", 2, "cache name \"a b\"" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\"; },\n { name = \"a\"; path = \"/b\"; max_size = \"1G\"; }\n);\n", 3,
                  "cache name \"a\" is used twice" },
                /* same path, or one inside the other (any spelling) */
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\"; },\n { name = \"b\"; path = \"/a/\"; max_size = \"1G\"; }\n);\n", 3,
                  "have the same path '/a'" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\"; },\n { name = \"b\"; path = \"//a//x\"; max_size = \"1G\"; }\n);\n", 3,
                  "overlap" },
                { "caches = (\n { name = \"a\"; path = \"/a/x/y\"; max_size = \"1G\"; },\n { name = \"b\"; path = \"/a/x\"; max_size = \"1G\"; }\n);\n", 3,
                  "overlap" },
                /* thresholds out of order or out of range */
                { "volumes = {\n  warn_free = \"5%\";\n  crit_free = \"10%\";\n};\n" CACHE_A, 3, "'crit_free' must be below 'warn_free'" },
                { "volumes = {\n  warn_free = \"5%\";\n  crit_free = \"5%\";\n};\n" CACHE_A, 3, "'crit_free' must be below 'warn_free'" },
                { "volumes = {\n  warn_free = \"10G\";\n  crit_free = \"20G\";\n};\n" CACHE_A, 3, "'crit_free' must be below 'warn_free'" },
                { "volumes = {\n  warn_free_inodes = \"1000\";\n  crit_free_inodes = \"2000\";\n};\n" CACHE_A, 3,
                  "'crit_free_inodes' must be below 'warn_free_inodes'" },
                { "volumes = {\n  crit_free = \"20%\";\n};\n" CACHE_A, 2, "'crit_free' must be below 'warn_free'" },
                { "volumes = { overrides = (\n { mount = \"/m\";\n  crit_free = \"50%\"; } ); };\n" CACHE_A, 3, "'crit_free' must be below" },
                { "volumes = {\n  warn_free = \"100%\";\n};\n" CACHE_A, 2, "invalid threshold \"100%\"" },
                { "volumes = {\n  warn_free = \"0%\";\n};\n" CACHE_A, 2, "invalid threshold \"0%\"" },
                { "volumes = {\n  min_free = \"3\";\n};\n" CACHE_A, 2, "invalid threshold \"3\"" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n trim_to = 1.5; }\n);\n", 3, "at most 1" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n trim_to = 0; }\n);\n", 3, "greater than 0" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n regret_alert = \"110%\"; }\n);\n", 3, "invalid percentage" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n regret_alert = \"10\"; }\n);\n", 3, "invalid percentage" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n regret_alert = 0.1; }\n);\n", 3, "must be a string" },
                /* durations */
                { "volumes = {\n  check_interval = \"10\";\n};\n" CACHE_A, 2, "invalid duration \"10\"" },
                { "volumes = {\n  check_interval = \"0s\";\n};\n" CACHE_A, 2, "longer than zero" },
                { "alert_timeout = \"soon\";\n" CACHE_A, 1, "invalid duration" },
                { "socket = \"/x\";\nalert_min_interval = \"1\";\n" CACHE_A, 2, "'alert_min_interval': invalid duration \"1\"" },
                { "socket = \"/x\";\nalert_min_interval = \"1d1s\";\n" CACHE_A, 2, "'alert_min_interval' must be at most 1d" },
                { "socket = \"/x\";\nalert_min_interval = 60;\n" CACHE_A, 2, "alert_min_interval" },
                { "volumes = { overrides = (\n { mount = \"/m\"; },\n { mount = \"/m/\"; } ); };\n" CACHE_A, 3, "given twice" },
                /* the alarms' keys: windows within the history, a percentage, a positive count */
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_window = \"59s\"; }\n);\n", 3,
                  "'caches[0].silent_window' must be between 1m and 30d" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_window = \"30d1s\"; }\n);\n", 3,
                  "'caches[0].silent_window' must be between 1m and 30d" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_window = \"1\"; }\n);\n", 3,
                  "'caches[0].silent_window': invalid duration \"1\"" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n idle_after = \"90d1m\"; }\n);\n", 3,
                  "'caches[0].idle_after' must be between 1m and 90d" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n idle_after = \"0s\"; }\n);\n", 3,
                  "'caches[0].idle_after' must be between 1m and 90d" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_hit_rate = \"101%\"; }\n);\n", 3,
                  "'caches[0].silent_hit_rate': invalid percentage \"101%\"" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_hit_rate = \"-1%\"; }\n);\n", 3,
                  "invalid percentage \"-1%\"" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_hit_rate = \"5\"; }\n);\n", 3,
                  "invalid percentage \"5\"" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_hit_rate = 0.05; }\n);\n", 3,
                  "'caches[0].silent_hit_rate' must be a string" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_min_calls = 0; }\n);\n", 3,
                  "'caches[0].silent_min_calls' must be a whole number from 1 to 4294967295" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_min_calls = \"50\"; }\n);\n", 3,
                  "'caches[0].silent_min_calls' must be a whole number" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n silent_min_calls = 5000000000L; }\n);\n", 3,
                  "'caches[0].silent_min_calls' must be a whole number" },
                /* ccache_conf_allow: names of harmless ccache settings only */
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n ccache_conf_allow = \"base_dir\"; }\n);\n", 3,
                  "'caches[0].ccache_conf_allow' must be a list of ccache setting names" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n ccache_conf_allow = [ 5 ]; }\n);\n", 3,
                  "must be a list of ccache setting names" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n ccache_conf_allow = [ \"base_dir\",\n \"basedir\" ]; }\n);\n", 4,
                  "'caches[0].ccache_conf_allow': \"basedir\" is not a setting of ccache" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n ccache_conf_allow = [\n \"prefix_command\" ]; }\n);\n", 4,
                  "\"prefix_command\" can never be allowed: it names a command every compile runs" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n ccache_conf_allow = [ \"hard_link\" ]; }\n);\n", 3,
                  "\"hard_link\" can never be allowed" },
                { "caches = (\n { name = \"a\"; path = \"/a\"; max_size = \"1G\";\n ccache_conf_allow = [ \"umask\" ]; }\n);\n", 3,
                  "\"umask\" is written by the daemon" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char path[256], err[CONFIG_ERROR_MAX] = "", want[300];
                Config *c = NULL;
                int r;

                r = load_text(cases[i].text, path, sizeof(path), err, sizeof(err), &c);
                if (r != -EINVAL || c)
                        fail_msg("case %zu: accepted (r=%d):\n%s", i, r, cases[i].text);
                if (cases[i].line > 0)
                        snprintf(want, sizeof(want), "%s:%d: ", path, cases[i].line);
                else
                        snprintf(want, sizeof(want), "%s: ", path);
                if (strncmp(err, want, strlen(want)) != 0 || !strstr(err, cases[i].message))
                        fail_msg("case %zu: got \"%s\", want \"%s...%s...\"", i, err, want, cases[i].message);
        }
}

static void test_defaults(void **state) {
        char path[256], err[CONFIG_ERROR_MAX];
        Config *c = NULL;

        assert_int_equal(load_text(CACHE_A, path, sizeof(path), err, sizeof(err), &c), 0);
        assert_string_equal(c->socket_path, "/run/cachekeeper/cachekeeper.sock");
        assert_string_equal(c->state_dir, "/var/lib/cachekeeper");
        assert_string_equal(c->admin_group, "root");
        assert_null(c->alert_argv);
        /* A container may look and plan, not change anything. */
        assert_int_equal(c->container_rights, CONFIG_RIGHT_STATUS | CONFIG_RIGHT_HISTORY | CONFIG_RIGHT_EVICTIONS |
                                                      CONFIG_RIGHT_DRY_RUN);
        assert_int_equal(c->alert_min_interval_usec, 60 * USEC_PER_SEC);
        assert_int_equal(c->check_interval_usec, 10 * USEC_PER_SEC);
        assert_int_equal(c->volume_defaults.warn_free.kind, THRESHOLD_PERCENT);
        assert_true(c->volume_defaults.warn_free.percent == 10.0);
        assert_true(c->volume_defaults.crit_free.percent == 5.0);
        assert_int_equal(c->volume_defaults.min_free.kind, THRESHOLD_UNSET);
        assert_int_equal(c->volume_defaults.full_within_usec, 24 * 3600 * USEC_PER_SEC);
        assert_int_equal(c->n_caches, 1);
        assert_string_equal(c->caches[0].name, "a");
        assert_int_equal(c->caches[0].max_size_bytes, 1000000000ULL);
        assert_int_equal(c->caches[0].mode, 01777);
        assert_true(c->caches[0].trim_to == 0.9);
        assert_null(c->caches[0].require_mount);
        assert_true(c->caches[0].manage_ccache_conf);
        assert_null(c->caches[0].ccache_conf_allow);
        /* the alarms' defaults */
        assert_int_equal(c->caches[0].silent_window_usec, 3600 * USEC_PER_SEC);
        assert_int_equal(c->caches[0].silent_min_calls, 50);
        assert_true(c->caches[0].silent_hit_rate == 0.05);
        assert_int_equal(c->caches[0].idle_after_usec, 7 * 86400 * USEC_PER_SEC);
        config_free(c);
}

static void test_full(void **state) {
        static const char text[] =
                "socket = \"/run/ck//x.sock/\";\n"
                "state_dir = \"/srv/ck-state/\";\n"
                "admin_group = \"builders\";\n"
                "alert_command = [ \"/usr/bin/logger\", \"-t\", \"ck\" ];\n"
                "audit_interval = \"0s\";\n"
                "alert_min_interval = \"0s\";\n"
                "volumes = {\n"
                "  check_interval = \"1s\"; warn_free = \"20G\"; crit_free = \"10Gi\"; min_free = \"3%\";\n"
                "  warn_free_inodes = \"5000\"; crit_free_inodes = \"1%\";\n"
                "  overrides = ( { mount = \"/mnt/llm-storage\"; warn_free = \"15%\"; crit_free = \"8%\"; } );\n"
                "};\n"
                "caches = (\n"
                "  { name = \"mi210\"; path = \"/var/cache/mi210-ccache\"; max_size = \"100G\"; mode = \"1777\"; trim_to = 0.8; },\n"
                "  { name = \"aiter\"; path = \"/mnt/llm-storage/ccache-aiter\"; max_size = \"1.5Ti\"; mode = \"0770\";\n"
                "    require_mount = \"/mnt/llm-storage\"; ccache_conf = false; trim_to = 1;\n"
                "    ccache_conf_allow = [ \"base_dir\", \"sloppiness\", \"file_clone\" ];\n"
                "    silent_window = \"1m\"; silent_min_calls = 10; silent_hit_rate = \"0%\"; idle_after = \"90d\"; }\n"
                ");\n";
        char path[256], err[CONFIG_ERROR_MAX];
        const VolumeConfig *v;
        Config *c = NULL;

        assert_int_equal(load_text(text, path, sizeof(path), err, sizeof(err), &c), 0);
        assert_string_equal(c->socket_path, "/run/ck/x.sock");
        assert_string_equal(c->state_dir, "/srv/ck-state");
        assert_string_equal(c->admin_group, "builders");
        assert_string_equal(c->alert_argv[0], "/usr/bin/logger");
        assert_string_equal(c->alert_argv[2], "ck");
        assert_null(c->alert_argv[3]);
        assert_int_equal(c->audit_interval_usec, 0);
        assert_int_equal(c->alert_min_interval_usec, 0);     /* 0: every alert runs */
        assert_int_equal(c->check_interval_usec, USEC_PER_SEC);
        assert_int_equal(c->volume_defaults.warn_free.value, 20000000000ULL);
        assert_int_equal(c->volume_defaults.crit_free.value, 10ULL << 30);
        assert_int_equal(c->volume_defaults.warn_free_inodes.value, 5000);
        assert_int_equal(threshold_resolve(&c->volume_defaults.min_free, 1000000), 30000);
        v = config_volume(c, "/mnt/llm-storage");
        assert_true(v->warn_free.percent == 15.0);
        assert_true(v->crit_free.percent == 8.0);
        assert_int_equal(v->min_free.kind, THRESHOLD_PERCENT);  /* inherited */
        assert_ptr_equal(config_volume(c, "/"), &c->volume_defaults);
        assert_int_equal(c->caches[1].max_size_bytes, 1649267441664ULL);
        assert_int_equal(c->caches[1].mode, 0770);
        assert_false(c->caches[1].manage_ccache_conf);
        assert_true(c->caches[1].trim_to == 1.0);
        assert_string_equal(c->caches[1].ccache_conf_allow[0], "base_dir");
        assert_string_equal(c->caches[1].ccache_conf_allow[2], "file_clone");
        assert_null(c->caches[1].ccache_conf_allow[3]);
        assert_null(c->caches[0].ccache_conf_allow);
        /* the alarms' bounds are accepted */
        assert_int_equal(c->caches[1].silent_window_usec, 60 * USEC_PER_SEC);
        assert_int_equal(c->caches[1].silent_min_calls, 10);
        assert_true(c->caches[1].silent_hit_rate == 0.0);
        assert_int_equal(c->caches[1].idle_after_usec, 90 * 86400 * USEC_PER_SEC);
        assert_ptr_equal(config_cache(c, "aiter"), &c->caches[1]);
        assert_null(config_cache(c, "nope"));
        config_free(c);
}

static void test_builtin_is_the_shipped_file(void **state) {
        char err[CONFIG_ERROR_MAX];
        Config *c = NULL;

        assert_int_equal(config_load_builtin(err, sizeof(err), &c), 0);
        assert_int_equal(c->n_caches, 2);
        assert_string_equal(c->caches[0].path, "/var/cache/mi210-ccache");
        assert_int_equal(c->caches[0].max_size_bytes, 100000000000ULL);
        assert_int_equal(c->caches[0].mode, 01777);
        assert_string_equal(c->caches[1].path, "/mnt/llm-storage/ccache-aiter");
        assert_int_equal(c->caches[1].max_size_bytes, 40000000000ULL);
        assert_string_equal(c->caches[1].require_mount, "/mnt/llm-storage");
        assert_int_equal(c->caches[1].mode, 01777);
        config_free(c);
}

/* A key like none of the allowed ones gets no guess. */
static void test_no_far_fetched_guess(void **state) {
        char err[CONFIG_ERROR_MAX];
        Config *c = NULL;

        assert_int_equal(config_load_string("colour = \"blue\";\n" CACHE_A, "t.conf", err, sizeof(err), &c), -EINVAL);
        assert_null(c);
        assert_string_equal(err, "t.conf:1: unknown setting 'colour'");
}

static void test_unreadable_file(void **state) {
        char err[CONFIG_ERROR_MAX];
        Config *c = NULL;

        assert_int_equal(config_load("/nonexistent/ck.conf", err, sizeof(err), &c), -ENOENT);
        assert_null(c);
        assert_string_equal(err, "/nonexistent/ck.conf: No such file or directory");
}

static void test_threshold(void **state) {
        Threshold t = { 0 };

        assert_int_equal(config_parse_threshold("10%", false, &t), 0);
        assert_int_equal(t.kind, THRESHOLD_PERCENT);
        assert_int_equal(threshold_resolve(&t, 1000), 100);
        assert_int_equal(config_parse_threshold("2.5%", false, &t), 0);
        assert_int_equal(threshold_resolve(&t, 1000), 25);
        assert_int_equal(config_parse_threshold("20G", false, &t), 0);
        assert_int_equal(threshold_resolve(&t, 1), 20000000000ULL);
        assert_int_equal(config_parse_threshold("100000", true, &t), 0);
        assert_int_equal(t.value, 100000);
        assert_int_equal(config_parse_threshold("100000", false, &t), -EINVAL);
        assert_int_equal(config_parse_threshold("%", false, &t), -EINVAL);
        assert_int_equal(config_parse_threshold("-1%", false, &t), -EINVAL);
        assert_int_equal(config_parse_threshold("x%", false, &t), -EINVAL);
        assert_int_equal(config_parse_threshold("0", true, &t), -EINVAL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_errors_name_file_and_line),
                cmocka_unit_test(test_defaults),
                cmocka_unit_test(test_full),
                cmocka_unit_test(test_builtin_is_the_shipped_file),
                cmocka_unit_test(test_no_far_fetched_guess),
                cmocka_unit_test(test_unreadable_file),
                cmocka_unit_test(test_threshold),
        };
        return cmocka_run_group_tests_name("config", tests, setup, teardown);
}
