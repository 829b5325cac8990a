/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the engine's whole receive path (parse, torus checks, forwarding,
 * reliability, puts, FIFO messages and their reassembly, remote gets, atomics, replies).
 *
 * An input is a sequence of received frames, each as a 3-byte record header then the frame:
 *   length (2 bytes, big-endian; cut to what the input has left), segment size (1 byte: 0 one
 *   contiguous mbuf, else a chain of segments of that many bytes).
 * Every input starts from the same idle node (fuzz_node.c). After it: no byte outside the
 * registered regions changed, the read-only region did not change, and once the node is
 * idle again its pool is full (no mbuf leaked).
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_node.h"

#define FZ_MAX_FRAMES 64

static struct fz z;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	if (fz_eal_init((*argv)[0]) != 0 || fz_setup(&z) != 0)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int frames = 0;

	while (size >= 3 && frames++ < FZ_MAX_FRAMES) {
		uint32_t len = (uint32_t)data[0] << 8 | data[1];
		uint32_t seg = data[2];

		data += 3;
		size -= 3;
		if (len > size)
			len = (uint32_t)size;
		fz_deliver(&z, data, len, seg);
		data += len;
		size -= len;
	}
	fz_finish(&z);
	return 0;
}
