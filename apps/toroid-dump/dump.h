/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-dump's parts: the decoder and reader (main.c), --attach (attach.c). */
#ifndef TOROID_DUMP_H
#define TOROID_DUMP_H

#include <toroid/topo.h>

/** X,Y,Z (each 0..255, digits and commas only) into @p c. 0 or -EINVAL. */
int dump_parse_coord(const char *s, struct trd_coord *c);

/** A packet type by name (trd_pkt_type_name, any case) or number 0..255; -EINVAL if neither. */
int dump_parse_type(const char *s);

/** toroid-dump --attach ...: start a running engine's capture, wait, stop it. Exit status. */
int dump_attach_main(int argc, char **argv);

#endif
