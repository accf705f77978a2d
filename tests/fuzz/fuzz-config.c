/* SPDX-License-Identifier: MIT */
/* libFuzzer: any config text either loads (and dumps) or is refused with a
 * "NAME:LINE: message" error; never a crash, a leak or undefined behaviour. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char err[CONFIG_ERROR_MAX], *text;
        Config *c = NULL;

        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (config_load_string(text, "fuzz", err, sizeof(err), &c) == 0) {
                FILE *f = fopen("/dev/null", "w");
                if (f) {
                        config_dump(c, f);
                        fclose(f);
                }
                config_free(c);
        } else if (strncmp(err, "fuzz", 4) != 0 && strncmp(err, "(null)", 6) != 0)
                abort();   /* every refusal names the input */
        free(text);
        return 0;
}
