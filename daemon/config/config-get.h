/* SPDX-License-Identifier: MIT */
/* The config file's typed getters, which config.c's schema reads every
 * setting with: the type checked, the value parsed (sizes, durations,
 * thresholds, modes, fractions, percentages...), and every refusal said
 * with the file, the line and the setting's path. Not used outside
 * config/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <libconfig.h>

#include "base/util.h"
#include "config/config.h"

/* Where messages go, and the file they name. */
typedef struct Ctx {
        const char *name;       /* file name for messages */
        char *err;
        size_t errlen;
} Ctx;

/* Writes "FILE:LINE: " (the setting's, or the context's file) and the
 * message into ctx->err. Returns -EINVAL. */
int cfg_fail(Ctx *ctx, const config_setting_t *s, const char *fmt, ...) _printf_(3, 4);
/* "caches[1].max_size": where a setting sits, for messages. */
const char *cfg_setting_path(const config_setting_t *s, char *buf, size_t len);
/* Refuses a setting of group whose name is not in allowed (NULL-ended). */
int cfg_check_keys(Ctx *ctx, const config_setting_t *group, const char *const *allowed);

/* Each getter returns 1 if the key is present and valid, 0 if absent,
 * -EINVAL (message written) if present and wrong. */
int cfg_get_setting(Ctx *ctx, const config_setting_t *group, const char *key, int type,
                       const char *what, const config_setting_t **ret);
int cfg_get_string(Ctx *ctx, const config_setting_t *group, const char *key, const char *example,
                      const config_setting_t **ret_setting, const char **ret);
/* r (a getter's) when the key is required: absent is refused. */
int cfg_require(Ctx *ctx, const config_setting_t *group, const char *key, int r);
int cfg_get_path(Ctx *ctx, const config_setting_t *group, const char *key, char **ret);
int cfg_get_size(Ctx *ctx, const config_setting_t *group, const char *key, uint64_t *ret, char *ret_text);
int cfg_get_duration(Ctx *ctx, const config_setting_t *group, const char *key, bool allow_zero,
                        usec_t *ret);
int cfg_get_threshold(Ctx *ctx, const config_setting_t *group, const char *key, bool allow_count,
                         Threshold *ret);
int cfg_get_mode(Ctx *ctx, const config_setting_t *group, const char *key, mode_t *ret);
int cfg_get_fraction(Ctx *ctx, const config_setting_t *group, const char *key, double *ret);
/* A whole number from 1 to UINT32_MAX. */
bool cfg_positive_u32(const config_setting_t *s, uint32_t *ret);
int cfg_get_count_or_auto(Ctx *ctx, const config_setting_t *group, const char *key, uint32_t *ret);
int cfg_get_bool(Ctx *ctx, const config_setting_t *group, const char *key, bool *ret);
/* A duration within [min, max] (why: said when it is not). */
int cfg_get_window(Ctx *ctx, const config_setting_t *group, const char *key, usec_t min, usec_t max,
                      const char *why, usec_t *ret);
int cfg_get_percent(Ctx *ctx, const config_setting_t *group, const char *key, double *ret);
int cfg_get_positive(Ctx *ctx, const config_setting_t *group, const char *key, uint64_t *ret);
/* One of names (NULL-ended): its index. */
int cfg_get_choice(Ctx *ctx, const config_setting_t *g, const char *key, const char *const *names, int *ret);
