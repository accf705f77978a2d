/* SPDX-License-Identifier: MIT */
/* Logging backend. The only place that decides between journal and stderr;
 * it must never change errno as seen by the caller. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SD_JOURNAL_SUPPRESS_LOCATION 1  /* we pass the caller's CODE_* fields */
#include <systemd/sd-journal.h>

#include "base/log.h"

static LogTarget log_target = LOG_TARGET_STDERR;
static int log_max_level = LOG_INFO;

void log_open(void) {
        if (getenv("JOURNAL_STREAM") || getenv("INVOCATION_ID"))
                log_target = LOG_TARGET_JOURNAL;
        else
                log_target = LOG_TARGET_STDERR;
}

LogTarget log_get_target(void) {
        return log_target;
}

void log_set_max_level(int level) {
        log_max_level = level;
}

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) {
        int saved_errno = errno;
        char buf[2048];
        va_list ap;

        if (error < 0)
                error = -error;
        if (level > log_max_level)
                goto out;

        if (error != 0)
                errno = error;
        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);

        if (log_target == LOG_TARGET_JOURNAL) {
                char cf[512], cl[32], cfn[256];

                snprintf(cf, sizeof(cf), "CODE_FILE=%s", file);
                snprintf(cl, sizeof(cl), "CODE_LINE=%d", line);
                snprintf(cfn, sizeof(cfn), "CODE_FUNC=%s", func);
                sd_journal_send("MESSAGE=%s", buf, "PRIORITY=%i", level, "%s", cf, "%s", cl,
                                "%s", cfn, error ? "ERRNO=%i" : NULL, error, NULL);
        } else
                fprintf(stderr, "%s\n", buf);
out:
        errno = saved_errno;
        return -error;
}
