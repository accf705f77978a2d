/* SPDX-License-Identifier: MIT */
/* cachectl merge (merge.h). Exit status as trim: 0 done, 1 refused, stopped
 * or with errors, 2 usage, 3 the daemon unreachable. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/protocol.h"
#include "core/client.h"
#include "core/command.h"
#include "merge.h"
#include "views/progress.h"
#include "views/results.h"

const struct option merge_options[] = {
        { "into", required_argument, NULL, 'i' },
        { "dry-run", no_argument, NULL, 'n' },
        { "allow-mixed", no_argument, NULL, 'm' },
        {},
};

int cmd_merge(int argc, char **argv) {
        ProtocolMerge req = {};
        json_object *result = NULL;
        bool failed = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "", merge_options, NULL)) >= 0)
                switch (c) {
                case 'i': req.into = optarg; break;
                case 'n': req.dry_run = true; break;
                case 'm': req.allow_mixed = true; break;
                default: return command_usage_error(NULL);
                }
        if (argc - optind != 1 || !req.into)
                return command_usage_error(NULL);
        req.from = argv[optind];
        if (strcmp(req.from, req.into) == 0)
                return ctl_usage_error("a cache cannot be merged into itself");
        r = ctl_ask(protocol_encode_merge(&req), isatty(STDERR_FILENO) ? progress_merge : NULL, &result);
        progress_end();
        if (r > 0 && json_object_is_type(result, json_type_object)) {
                if (req.dry_run)
                        results_merge_dry_run(stdout, result, req.from, req.into);
                else
                        failed = results_merge(stdout, result, req.from, req.into);
        }
        json_object_put(result);
        return r > 0 && failed ? CTL_EXIT_REFUSED : ctl_exit_status(r);
}
