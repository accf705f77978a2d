/* SPDX-License-Identifier: MIT */
/* libFuzzer: any config text either loads, and its dump loads again and
 * dumps the same (cachekeeperd -t's round trip), or is refused with a
 * "NAME:LINE: message" error; never a crash, a leak or undefined behaviour. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* config_dump into a string; NULL on ENOMEM. */
static char *dump(const Config *c) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return NULL;
        config_dump(c, f);
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char err[CONFIG_ERROR_MAX], *text;
        Config *c = NULL;

        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (config_load_string(text, "fuzz", err, sizeof(err), &c) == 0) {
                char *once = dump(c), *twice = NULL;
                Config *again = NULL;

                config_free(c);
                if (once && config_load_string(once, "fuzz", err, sizeof(err), &again) != 0)
                        abort();   /* -t printed what -t refuses */
                twice = again ? dump(again) : NULL;
                if (once && twice && strcmp(once, twice) != 0)
                        abort();   /* ... or what means something else */
                config_free(again);
                free(once);
                free(twice);
        } else if (strncmp(err, "fuzz", 4) != 0 && strncmp(err, "(null)", 6) != 0)
                abort();   /* every refusal names the input */
        free(text);
        return 0;
}
