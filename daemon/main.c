/* SPDX-License-Identifier: MIT */
/* cachekeeperd: flags → config → manager → run. Nothing else lives here. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>
#include <unistd.h>

#include "base/log.h"
#include "config/config-check.h"
#include "config/config.h"
#include "config/describe.h"
#include "manager.h"

static void help(void) {
        printf("Usage: cachekeeperd [-c FILE] [-s SOCKET] [-t] [-d]\n"
               "Keep shared ccache directories within their caps, usable by every user,\n"
               "and the volumes that hold them from filling up.\n\n"
               "  -c, --config FILE   configuration file (default %s; when it does not\n"
               "                      exist and -c is not given, the built-in default)\n"
               "  -s, --socket PATH   control socket, overriding the config's 'socket'\n"
               "  -t, --test          check the configuration, print it normalised (a config\n"
               "                      that -t reads back the same), exit: 0 valid (warnings\n"
               "                      on stderr), 1 invalid (FILE:LINE: message on stderr)\n"
               "  -d, --debug         log debug messages too\n"
               "      --describe-conf say what each cache's ccache.conf holds (what stays\n"
               "                      when the daemon is stopped or removed), exit\n"
               "  -h, --help          show this help\n"
               "      --version       show the version\n\n"
               "The daemon never forks; run it under systemd (cachekeeperd.service).\n"
               "See cachekeeperd(8) and cachekeeper.conf(5).\n",
               CONFIG_DEFAULT_FILE);
}

/* A refused config is said on stderr for -t and --describe-conf (a person
 * at a terminal); when it is to run, through the log at error priority: under
 * systemd that is the journal with PRIORITY=3, where `journalctl -p err`
 * finds it (stderr would reach the journal at info). */
static int load_config(const char *path, bool run, Config **ret) {
        char err[CONFIG_ERROR_MAX];
        int r;

        if (path)
                r = config_load(path, err, sizeof(err), ret);
        else
                r = config_load_builtin(err, sizeof(err), ret);
        if (r < 0 && run)
                log_error("%s", err);
        else if (r < 0)
                fprintf(stderr, "%s\n", err);
        return r;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "socket", required_argument, NULL, 's' },
                { "test", no_argument, NULL, 't' },
                { "debug", no_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "describe-conf", no_argument, NULL, 'D' },
                {},
        };
        _cleanup_(config_freep) Config *config = NULL;
        _cleanup_(manager_freep) Manager *m = NULL;
        const char *config_path = NULL, *socket_path = NULL;
        bool test = false, describe = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "c:s:tdh", options, NULL)) >= 0)
                switch (c) {
                case 'c': config_path = optarg; break;
                case 's': socket_path = optarg; break;
                case 't': test = true; break;
                case 'd': log_set_max_level(LOG_DEBUG); break;
                case 'h': help(); return EXIT_SUCCESS;
                case 'V': printf("cachekeeperd %s\n", CACHEKEEPER_VERSION); return EXIT_SUCCESS;
                case 'D': describe = true; break;
                default: fprintf(stderr, "Try 'cachekeeperd --help'.\n"); return 2;
                }
        if (optind < argc) {
                fprintf(stderr, "cachekeeperd: unexpected argument '%s'\nTry 'cachekeeperd --help'.\n", argv[optind]);
                return 2;
        }

        /* Without -c: the installed file, else the shipped one compiled in. */
        if (!config_path && access(CONFIG_DEFAULT_FILE, F_OK) == 0)
                config_path = CONFIG_DEFAULT_FILE;
        if (!test && !describe)
                log_open();
        if (load_config(config_path, !test && !describe, &config) < 0) {
                if (test || describe)
                        return EXIT_FAILURE;
                /* EX_CONFIG: the unit does not restart on it
                 * (RestartPreventExitStatus=), so its own retries never
                 * use up the start limit before the file is fixed. */
                if (getenv("INVOCATION_ID"))
                        log_notice("Fix the configuration (cachekeeperd -t checks it), then: "
                                   "systemctl restart cachekeeperd");
                return EX_CONFIG;
        }
        if (describe)
                return describe_ccache_confs(config, stdout) < 0 || fflush(stdout) != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        if (test) {
                /* Valid, but not what its author means here: said, never refused. */
                (void) config_check(config, stderr);
                config_dump(config, stdout);
                return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        }

        if (!config_path)
                log_notice("No %s, running on the built-in default configuration.", CONFIG_DEFAULT_FILE);
        r = manager_new(config_path, socket_path, TAKE_PTR(config), &m);
        if (r == -EADDRINUSE || r == -EBUSY)
                return EXIT_FAILURE;   /* another daemon answers or keeps a cache: said in full */
        if (r < 0)
                return log_error_errno(r, "Failed to set up: %m"), EXIT_FAILURE;
        r = manager_start(m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_run(m);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
