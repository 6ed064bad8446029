/* A libFuzzer-style harness for zlib (https://zlib.net), written for autotune's tests and benchmarks.
 *
 * One input exercises three parts of the library:
 *  1. the input inflated as a zlib or gzip stream (inflateInit2 with header detection, the gzip
 *     header's fields read by inflateGetHeader, a preset dictionary supplied when one is asked for),
 *     then as a raw deflate stream, each into a small window of output and at most DECODE_CAP bytes
 *     in all, so a stream that expands without end stops;
 *  2. a deflate round trip whose parameters come from the first two bytes (level, strategy, window
 *     size, memory level, wrapper, a flush in the middle, a preset dictionary), inflated back;
 *  3. the one-call API's round trip (compress2, uncompress2) at a level from the first byte.
 * A round trip that does not give the input back is a library bug: the harness aborts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zlib.h"

#define MAX_INPUT (1u << 16)  /* larger inputs are skipped: a level-9 round trip of them is slow */
#define DECODE_CAP (1u << 18) /* output limit for inflating untrusted input */
#define WINDOW 4096u          /* inflate's output buffer: streams refer back past it */
#define DICT_LEN 32u

static const uint8_t DICT[DICT_LEN] = "zlib harness dictionary 0123456";

static void inflate_stream(const uint8_t *data, size_t size, int window_bits, uint8_t *out)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, window_bits) != Z_OK)
        return;
    gz_header head;
    uint8_t extra[64], name[64], comment[64];
    memset(&head, 0, sizeof head);
    head.extra = extra;
    head.extra_max = sizeof extra;
    head.name = name;
    head.name_max = sizeof name;
    head.comment = comment;
    head.comm_max = sizeof comment;
    if (window_bits > 15)
        (void)inflateGetHeader(&s, &head);
    s.next_in = (Bytef *)data;
    s.avail_in = (uInt)size;
    int ret;
    do {
        s.next_out = out;
        s.avail_out = WINDOW;
        ret = inflate(&s, Z_NO_FLUSH);
        if (ret == Z_NEED_DICT)
            ret = inflateSetDictionary(&s, DICT, DICT_LEN);
        else if (ret == Z_STREAM_END && s.avail_in > 0 && window_bits > 15)
            ret = inflateReset(&s); /* another member follows (concatenated gzip or zlib streams) */
    } while (ret == Z_OK && s.total_out < DECODE_CAP);
    inflateEnd(&s);
}

/* deflate data with the parameters of p0 and p1 (each in 0..255), inflate it back, compare */
static void round_trip_stream(const uint8_t *data, size_t size, uint8_t p0, uint8_t p1, uint8_t *comp,
                              size_t comp_cap, uint8_t *back)
{
    static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED};
    static const int flushes[] = {Z_NO_FLUSH, Z_SYNC_FLUSH, Z_FULL_FLUSH, Z_PARTIAL_FLUSH, Z_BLOCK};
    const int level = p0 % 10;
    const int strategy = strategies[(p0 / 10) % 5];
    const int flush = flushes[(p0 / 50) % 5];
    const int bits = 9 + p1 % 7;              /* 9..15 */
    const int mem_level = 1 + (p1 / 7) % 9;   /* 1..9 */
    const int wrapper = (p1 / 63) % 3;        /* 0: zlib, 1: gzip, 2: raw */
    const int window_bits = wrapper == 0 ? bits : wrapper == 1 ? bits + 16 : -bits;
    const int with_dict = wrapper != 1 && (p1 & 0x80);

    z_stream d;
    memset(&d, 0, sizeof d);
    if (deflateInit2(&d, level, Z_DEFLATED, window_bits, mem_level, strategy) != Z_OK)
        abort(); /* every parameter is in range */
    if (with_dict && deflateSetDictionary(&d, DICT, DICT_LEN) != Z_OK)
        abort();
    const size_t half = size / 2;
    d.next_in = (Bytef *)data;
    d.avail_in = (uInt)half;
    d.next_out = comp;
    d.avail_out = (uInt)comp_cap;
    if (deflate(&d, flush) == Z_STREAM_ERROR)
        abort();
    d.avail_in += (uInt)(size - half);
    if (deflate(&d, Z_FINISH) != Z_STREAM_END)
        abort(); /* comp_cap suffices */
    const size_t csize = d.total_out;
    deflateEnd(&d);

    z_stream i;
    memset(&i, 0, sizeof i);
    if (inflateInit2(&i, window_bits) != Z_OK)
        abort();
    if (with_dict && wrapper == 2 && inflateSetDictionary(&i, DICT, DICT_LEN) != Z_OK)
        abort(); /* a raw stream asks for no dictionary: it is set up front */
    i.next_in = comp;
    i.avail_in = (uInt)csize;
    i.next_out = back;
    i.avail_out = (uInt)(size + 1);
    int ret = inflate(&i, Z_FINISH);
    if (ret == Z_NEED_DICT) {
        if (inflateSetDictionary(&i, DICT, DICT_LEN) != Z_OK)
            abort();
        ret = inflate(&i, Z_FINISH);
    }
    if (ret != Z_STREAM_END || i.total_out != size || memcmp(data, back, size) != 0)
        abort();
    inflateEnd(&i);
}

static void round_trip_simple(const uint8_t *data, size_t size, int level, uint8_t *comp, size_t comp_cap,
                              uint8_t *back)
{
    uLongf csize = (uLongf)comp_cap;
    if (compress2(comp, &csize, data, (uLong)size, level) != Z_OK)
        abort();
    uLongf dsize = (uLongf)size;
    uLong consumed = csize;
    if (uncompress2(back, &dsize, comp, &consumed) != Z_OK || dsize != size || consumed != csize ||
        memcmp(data, back, size) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT)
        return 0;
    /* over deflateBound's conservative bound (any level, memory level and wrapper) and the flush's markers */
    const size_t comp_cap = size + size / 4 + 1024;
    uint8_t *comp = malloc(comp_cap);
    uint8_t *back = malloc(size + 1);
    uint8_t *out = malloc(WINDOW);
    if (!comp || !back || !out)
        abort();
    inflate_stream(data, size, 15 + 32, out); /* zlib or gzip, by the header */
    inflate_stream(data, size, -15, out);     /* raw deflate */
    const uint8_t p0 = size > 0 ? data[0] : 0, p1 = size > 1 ? data[1] : 0;
    round_trip_stream(data, size, p0, p1, comp, comp_cap, back);
    round_trip_simple(data, size, p0 % 10, comp, comp_cap, back);
    free(out);
    free(back);
    free(comp);
    return 0;
}
