/* A tiny library of our own, the example of docs/BUGS.md ("Your own library"). */
#ifndef MINI_H
#define MINI_H
#include <stddef.h>
#include <stdint.h>

/* The sum of the payload bytes of every 'C' record of a MINI file ("MINI", version byte 2, then
 * records: type byte, length byte, payload); 0, or -1 for a malformed file. */
int mini_checksum(const uint8_t *data, size_t size, uint32_t *sum);

#endif
