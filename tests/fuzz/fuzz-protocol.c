/* SPDX-License-Identifier: MIT */
/* libFuzzer: request lines, reply lines, ccache names and stats files from
 * anyone: parsed or refused, never a crash; packed names round-trip; what
 * the daemon would echo goes out as one line of valid UTF-8 JSON. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ccache-stats.h"
#include "ccache.h"
#include "human.h"
#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *line, *reply, *again, err[256], back[CCACHE_NAME_MAX];
        json_object *o = NULL, *res = NULL;
        const char *cmd;
        uint8_t packed[CCACHE_PACKED_SIZE], code;
        CcacheStats stats;
        uint64_t v;
        usec_t u;

        line = malloc(size + 1);
        if (!line)
                return 0;
        memcpy(line, data, size);
        line[size] = '\0';
        if (protocol_parse_request(line, &o, &cmd, err, sizeof(err)) == 0) {
                if (!cmd)
                        abort();
                json_object_put(o);
        }
        if (protocol_parse_reply(line, &res, err, sizeof(err)) == 1)
                json_object_put(res);
        reply = protocol_reply_error(line);
        if (reply) {
                again = protocol_utf8_valid(reply);
                if (again && strcmp(again, reply) != 0)
                        abort();        /* not valid UTF-8 */
                if (strchr(reply, '\n') != reply + strlen(reply) - 1 ||
                    protocol_parse_reply(reply, &res, err, sizeof(err)) != 0)
                        abort();        /* not one line, or not an error reply */
                free(again);
                free(reply);
        }
        for (unsigned depth = 0; depth <= 5; depth++)
                if (ccache_pack_name(line, depth, packed, &code) >= 0 &&
                    strcmp(ccache_unpack_name(packed, code, depth, back), line) != 0)
                        abort();   /* what is packed must come back exactly */
        ccache_stats_parse(line, size, &stats);
        (void) parse_size(line, &v);
        (void) parse_duration(line, &u);
        free(line);
        return 0;
}
