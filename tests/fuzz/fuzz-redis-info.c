/* SPDX-License-Identifier: MIT */
/* libFuzzer: any bytes as a Redis INFO reply (not NUL-terminated: only the
 * given length is read), then as a policy name and as a remote URL; never a
 * crash, an overread or undefined behaviour, and the judgements stay in
 * range whatever was read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/remote-url.h"
#include "remote/redis-info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const Threshold warn = { THRESHOLD_PERCENT, 0, 10 }, crit = { THRESHOLD_PERCENT, 0, 5 };
        char *copy = malloc(size ? size : 1), err[256], *url;
        RedisInfo info = { 0 };
        RemoteUrl u;
        int e;

        if (!copy)
                return 0;
        memcpy(copy, data, size);   /* exact size: ASan sees any read past it */
        (void) redis_info_parse(copy, size, 0, &info);
        (void) redis_info_set_policy(&info, copy, size);
        if (info.policy[0] && strlen(info.policy) >= REDIS_POLICY_MAX)
                abort();
        e = redis_info_evicts(&info);
        if (e < -1 || e > 1 || redis_info_level(&info, &warn, &crit, REDIS_LEVEL_WARNING) > REDIS_LEVEL_CRITICAL)
                abort();
        free(copy);
        url = strndup((const char *) data, size);
        if (url && remote_url_parse(url, &u, err, sizeof(err)) == 0)
                remote_url_done(&u);
        free(url);
        return 0;
}
