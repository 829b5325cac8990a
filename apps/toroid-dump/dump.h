/* SPDX-License-Identifier: BSD-3-Clause */
/* toroid-dump's parts: the decoder and reader (main.c), --attach (attach.c). */
#ifndef TOROID_DUMP_H
#define TOROID_DUMP_H

/** toroid-dump --attach ...: start a running engine's capture, wait, stop it. Exit status. */
int dump_attach_main(int argc, char **argv);

#endif
