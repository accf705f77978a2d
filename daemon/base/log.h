/* SPDX-License-Identifier: MIT */
/* Logging for the daemon: the journal under systemd, stderr otherwise.
 * The backend is chosen once by log_open(); every call preserves errno. */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "base/util.h"

typedef enum LogTarget {
        LOG_TARGET_STDERR,   /* "<N>message" lines would confuse a terminal: plain text */
        LOG_TARGET_JOURNAL,  /* sd_journal_print(), with CODE_* fields */
} LogTarget;

/* Picks the journal when $JOURNAL_STREAM or $INVOCATION_ID says systemd
 * started us, stderr otherwise. Safe to call more than once. */
void log_open(void);
LogTarget log_get_target(void);
void log_set_max_level(int level);

/* Logs at priority level; if error is non-zero, errno is set to |error|
 * while formatting so "%m" prints it. Returns -|error| (or 0). */
int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) _printf_(6, 7);

#define log_full_errno(level, error, ...) \
        log_internal((level), (error), __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_full(level, ...) (void) log_full_errno((level), 0, __VA_ARGS__)

#define log_debug(...)   log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)    log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...)  log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...)   log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(e, ...)   log_full_errno(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...)    log_full_errno(LOG_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, (e), __VA_ARGS__)
#define log_oom()                 log_error_errno(ENOMEM, "Out of memory.")
