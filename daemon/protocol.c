/* SPDX-License-Identifier: MIT */
/* Encoding and decoding of control messages. No I/O. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "util.h"

int protocol_parse_request(const char *line, json_object **ret, const char **ret_cmd,
                           char *err, size_t errlen) {
        json_tokener *tok;
        json_object *o, *cmd;

        tok = json_tokener_new();
        if (!tok) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        o = json_tokener_parse_ex(tok, line, (int) strlen(line));
        if (!o || json_tokener_get_error(tok) != json_tokener_success ||
            tok->char_offset != (int) strlen(line)) {
                snprintf(err, errlen, "request is not one JSON object: %s",
                         json_tokener_error_desc(json_tokener_get_error(tok)));
                json_object_put(o);
                json_tokener_free(tok);
                return -EINVAL;
        }
        json_tokener_free(tok);
        if (!json_object_is_type(o, json_type_object) ||
            !json_object_object_get_ex(o, "cmd", &cmd) || !json_object_is_type(cmd, json_type_string)) {
                snprintf(err, errlen, "request must be an object with a string \"cmd\"");
                json_object_put(o);
                return -EINVAL;
        }
        *ret_cmd = json_object_get_string(cmd);
        *ret = o;
        return 0;
}

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0 if none starts there. */
static size_t utf8_sequence(const unsigned char *p) {
        unsigned char c = p[0];
        size_t n;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                n = 2;
        else if (c >= 0xe0 && c <= 0xef)
                n = 3;
        else if (c >= 0xf0 && c <= 0xf4)
                n = 4;
        else
                return 0;       /* a continuation byte, an overlong lead (c0, c1) or f5..ff */
        for (size_t i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;       /* also stops at the terminating NUL */
        if ((c == 0xe0 && p[1] < 0xa0) ||       /* overlong */
            (c == 0xed && p[1] >= 0xa0) ||      /* UTF-16 surrogates */
            (c == 0xf0 && p[1] < 0x90) ||       /* overlong */
            (c == 0xf4 && p[1] >= 0x90))        /* above U+10FFFF */
                return 0;
        return n;
}

char *protocol_utf8_valid(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        size_t bad = 0, n;
        char *out, *q;

        for (size_t i = 0; p[i]; i += n ? n : 1)
                bad += (n = utf8_sequence(p + i)) == 0;
        out = malloc(strlen(s) + 2 * bad + 1);  /* each bad byte: 3 bytes of U+FFFD */
        if (!out)
                return NULL;
        q = out;
        for (size_t i = 0; p[i]; i += n ? n : 1) {
                n = utf8_sequence(p + i);
                if (n) {
                        memcpy(q, p + i, n);
                        q += n;
                } else {
                        memcpy(q, "\xef\xbf\xbd", 3);
                        q += 3;
                }
        }
        *q = '\0';
        return out;
}

/* One line for o (taken over). json-c escapes what JSON needs but copies
 * bytes >= 0x80 as they are; those are made valid UTF-8 on the way out
 * (outside strings, JSON is ASCII, so only strings are touched). */
static char *serialize(json_object *o) {
        const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        _cleanup_free_ char *valid = s ? protocol_utf8_valid(s) : NULL;
        char *line = NULL;

        if (valid && asprintf(&line, "%s\n", valid) < 0)
                line = NULL;
        json_object_put(o);
        return line;
}

char *protocol_reply_ok(json_object *result) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "ok", json_object_new_boolean(1));
        if (result)
                json_object_object_add(o, "result", json_object_get(result));
        return serialize(o);
}

static json_object *error_object(const char *message) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "ok", json_object_new_boolean(0));
        json_object_object_add(o, "error", json_object_new_string(message));
        return o;
}

char *protocol_reply_error(const char *message) {
        json_object *o = error_object(message);

        return o ? serialize(o) : NULL;
}

char *protocol_reply_busy(const char *message) {
        json_object *o = error_object(message);

        if (!o)
                return NULL;
        json_object_object_add(o, "busy", json_object_new_boolean(1));
        return serialize(o);
}

char *protocol_progress(json_object *progress) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        if (json_object_object_add(o, "progress", json_object_get(progress)) < 0)
                json_object_put(progress);      /* the reference is not taken over on failure */
        return serialize(o);
}

int protocol_parse_reply(const char *line, json_object **ret_result, char *err, size_t errlen) {
        json_object *o, *ok, *v;
        int r;

        o = json_tokener_parse(line);
        if (!o || !json_object_is_type(o, json_type_object) ||
            !json_object_object_get_ex(o, "ok", &ok) || !json_object_is_type(ok, json_type_boolean)) {
                json_object_put(o);
                return -EINVAL;
        }
        if (json_object_get_boolean(ok)) {
                *ret_result = json_object_object_get_ex(o, "result", &v) ? json_object_get(v) : NULL;
                r = 1;
        } else {
                snprintf(err, errlen, "%s",
                         json_object_object_get_ex(o, "error", &v) ? json_object_get_string(v) : "unknown error");
                r = protocol_field_flag(o, "busy") ? -EBUSY : 0;
        }
        json_object_put(o);
        return r;
}

json_object *protocol_field_get(json_object *o, const char *key) {
        json_object *v = NULL;

        return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

uint64_t protocol_field_u64(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_int) ? json_object_get_uint64(v) : 0;
}

const char *protocol_field_str(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

bool protocol_field_flag(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

bool protocol_field_false(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_boolean) && !json_object_get_boolean(v);
}

size_t protocol_field_count(json_object *o, const char *key) {
        json_object *v = protocol_field_get(o, key);

        return json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
}

json_object *protocol_field_item(json_object *o, const char *key, size_t i) {
        return i < protocol_field_count(o, key) ? json_object_array_get_idx(protocol_field_get(o, key), i) : NULL;
}
