/* SPDX-License-Identifier: MIT */
/* libFuzzer: request lines, reply lines, ccache names and stats files from
 * anyone: parsed or refused, never a crash; packed names round-trip; what
 * the daemon would echo goes out as one line of valid UTF-8 JSON; requests
 * the daemon takes come back the same through cachectl's encoder. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/human.h"
#include "base/protocol.h"
#include "ccache/ccache-stats.h"
#include "ccache/ccache.h"

/* A request the daemon took: its fields, encoded again the way cachectl
 * encodes them, must decode to the same (names compared as C strings, only
 * when valid UTF-8, which the encoder keeps as it is). */
static void request_round_trip(json_object *o, const char *cmd) {
        char *line, err[256];
        ProtocolStatus s, s2;
        ProtocolTrim t, t2;
        ProtocolHistory h, h2;
        ProtocolEvictions e, e2;
        json_object *o2;
        const char *cmd2;

        if (strcmp(cmd, PROTOCOL_CMD_STATUS) == 0 && protocol_decode_status(o, &s, err, sizeof(err)) == 0) {
                line = protocol_encode_status(&s);
                if (!line || protocol_decode_request(line, &o2, &cmd2, err, sizeof(err)) < 0 ||
                    protocol_decode_status(o2, &s2, err, sizeof(err)) < 0 || !s.cache != !s2.cache)
                        abort();
                json_object_put(o2);
                free(line);
        }
        if (strcmp(cmd, PROTOCOL_CMD_HISTORY) == 0 && protocol_decode_history(o, &h, err, sizeof(err)) == 0) {
                line = protocol_encode_history(&h);
                if (!line || protocol_decode_request(line, &o2, &cmd2, err, sizeof(err)) < 0 ||
                    protocol_decode_history(o2, &h2, err, sizeof(err)) < 0 || !h.cache != !h2.cache ||
                    h2.seconds != h.seconds || h2.count != h.count || h.count == 0 ||
                    h.count > protocol_history_max(h.seconds))
                        abort();
                json_object_put(o2);
                free(line);
        }
        if (strcmp(cmd, PROTOCOL_CMD_TRIM) == 0 && protocol_decode_trim(o, &t, err, sizeof(err)) == 0) {
                line = protocol_encode_trim(&t);
                if (!line || protocol_decode_request(line, &o2, &cmd2, err, sizeof(err)) < 0 ||
                    protocol_decode_trim(o2, &t2, err, sizeof(err)) < 0 || t2.n_caches != t.n_caches ||
                    t2.to_bytes != t.to_bytes || t2.dry_run != t.dry_run)
                        abort();
                for (size_t i = 0; i < t.n_caches; i++) {
                        char *valid = protocol_utf8_valid(t.caches[i]);

                        if (valid && strcmp(valid, t.caches[i]) == 0 && strcmp(t2.caches[i], t.caches[i]) != 0)
                                abort();
                        free(valid);
                }
                json_object_put(o2);
                free(line);
        }
        /* Keys are checked ASCII: they come back byte for byte (the cache
         * name only when valid UTF-8: U+FFFD may make it too long). */
        if (strcmp(cmd, PROTOCOL_CMD_EVICTIONS) == 0 && protocol_decode_evictions(o, &e, err, sizeof(err)) == 0) {
                char *valid = protocol_utf8_valid(e.cache);
                bool same = valid && strcmp(valid, e.cache) == 0;

                free(valid);
                if (!same) {
                        free(e.keys);
                        return;
                }
                line = protocol_encode_evictions(&e);
                if (!line || protocol_decode_request(line, &o2, &cmd2, err, sizeof(err)) < 0 ||
                    protocol_decode_evictions(o2, &e2, err, sizeof(err)) < 0 || e2.n_keys != e.n_keys ||
                    e.n_keys == 0 || e.n_keys > PROTOCOL_EVICTIONS_KEYS_MAX)
                        abort();
                for (size_t i = 0; i < e.n_keys; i++)
                        if (strcmp(e2.keys[i], e.keys[i]) != 0)
                                abort();
                free(e2.keys);
                free(e.keys);
                json_object_put(o2);
                free(line);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *line, *reply, *again, err[256], back[CCACHE_NAME_MAX];
        json_object *o = NULL;
        ProtocolReply r;
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
        if (protocol_decode_request(line, &o, &cmd, err, sizeof(err)) == 0) {
                if (!cmd)
                        abort();
                request_round_trip(o, cmd);
                json_object_put(o);
        }
        if (protocol_decode_reply(line, &r, err, sizeof(err)) == 0)
                json_object_put(r.value);
        reply = protocol_encode_error(line);
        if (reply) {
                again = protocol_utf8_valid(reply);
                if (again && strcmp(again, reply) != 0)
                        abort();        /* not valid UTF-8 */
                if (strchr(reply, '\n') != reply + strlen(reply) - 1 ||
                    protocol_decode_reply(reply, &r, err, sizeof(err)) != 0 || r.kind != PROTOCOL_REPLY_ERROR ||
                    r.version != PROTOCOL_VERSION)
                        abort();        /* not one line, or not an error reply of this version */
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
