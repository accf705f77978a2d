/* SPDX-License-Identifier: MIT */
/* The wire format between cachectl and cachekeeperd: one JSON object per
 * line each way. Requests {"cmd":"status", ...}; replies {"ok":true,
 * "result":{...}} or {"ok":false,"error":"..."}, the latter with
 * "busy":true when the daemon turned the connection away (too many); before
 * the reply, a long request may send {"progress":...} lines. Every line the
 * daemon sends is valid UTF-8, whatever bytes it echoes. Pure; linked into
 * both. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define PROTOCOL_REQUEST_MAX 4096          /* bytes in one request line, newline included */
#define PROTOCOL_REPLY_MAX   (1u << 20)    /* bytes in one reply line */

/* Parses one request line (without its newline). On success stores the
 * request object (caller unrefs) and its "cmd" string (borrowed from it) and
 * returns 0; on failure returns -EINVAL with a message for the client. */
int protocol_parse_request(const char *line, json_object **ret, const char **ret_cmd,
                           char *err, size_t errlen);

/* Serialise a line the daemon sends, with its newline, malloc'd; NULL on
 * ENOMEM. Any byte sequence that is not UTF-8 in a string (a name a client
 * sent, a path) goes out as U+FFFD, one per bad byte; the rest is kept.
 * protocol_reply_ok and protocol_progress borrow their argument
 * (protocol_reply_ok: NULL means no result). */
char *protocol_reply_ok(json_object *result);
char *protocol_reply_error(const char *message);
char *protocol_reply_busy(const char *message);         /* a connection turned away */
char *protocol_progress(json_object *progress);

/* Copies s, each byte that does not belong to a valid UTF-8 sequence
 * replaced by U+FFFD. NULL on ENOMEM. */
char *protocol_utf8_valid(const char *s);

/* Parses a reply line. Returns 1 for ok (result, possibly NULL, stored in
 * *ret_result, caller unrefs), 0 for an error reply (message in err),
 * -EBUSY for a connection the daemon turned away (message in err), and
 * -EINVAL when the line is not a reply at all. */
int protocol_parse_reply(const char *line, json_object **ret_result, char *err, size_t errlen);

/* Tolerant readers of a result's fields, for what the other side sent: a
 * missing or mistyped field reads as NULL, 0, "", false or an empty array,
 * never as a crash (json-c asserts on an array call on a non-array). */
json_object *protocol_field_get(json_object *o, const char *key);
uint64_t protocol_field_u64(json_object *o, const char *key);
const char *protocol_field_str(json_object *o, const char *key);
bool protocol_field_flag(json_object *o, const char *key);
bool protocol_field_false(json_object *o, const char *key);              /* present, and the boolean false */
size_t protocol_field_count(json_object *o, const char *key);            /* array length */
json_object *protocol_field_item(json_object *o, const char *key, size_t i);
