/* SPDX-License-Identifier: MIT */
/* The shipped etc/cachekeeper.conf, compiled in: what the daemon runs on when
 * started without -c and /etc/cachekeeper.conf does not exist. */
#include "config/config.h"

#ifndef CONFIG_BUILTIN_PATH
#error "CONFIG_BUILTIN_PATH must name the shipped config (the Makefile sets it)"
#endif

__asm__(".section .rodata\n"
        ".global config_builtin_text\n"
        ".type config_builtin_text, @object\n"
        "config_builtin_text:\n"
        ".incbin \"" CONFIG_BUILTIN_PATH "\"\n"
        ".byte 0\n"
        ".size config_builtin_text, .-config_builtin_text\n"
        ".previous\n");
