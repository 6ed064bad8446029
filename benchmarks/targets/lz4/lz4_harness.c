/* A libFuzzer-style harness for lz4 (https://github.com/lz4/lz4), written for autotune's tests.
 *
 * One input exercises four parts of the library:
 *  1. block round trip: LZ4_compress_default, then LZ4_decompress_safe must give the input back;
 *  2. HC round trip at a level taken from the first byte (LZ4_compress_HC, levels 1..12);
 *  3. the raw input decoded as an lz4 block (LZ4_decompress_safe and its _partial form);
 *  4. the raw input decoded as an lz4 frame (LZ4F_decompress: headers, skippable frames,
 *     checksums), so the lz4 tool's .lz4 files and the golden samples are meaningful inputs.
 * A round trip that does not give the input back is a library bug: the harness aborts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lz4.h"
#include "lz4frame.h"
#include "lz4hc.h"

#define DECODE_CAP (1u << 20) /* output limit for decoding untrusted input */

static void round_trip_block(const uint8_t *data, size_t size, char *comp, char *back, int hc_level)
{
    const int bound = LZ4_compressBound((int)size);
    const int csize = hc_level ? LZ4_compress_HC((const char *)data, comp, (int)size, bound, hc_level)
                               : LZ4_compress_default((const char *)data, comp, (int)size, bound);
    if (csize <= 0)
        abort(); /* a buffer of LZ4_compressBound bytes always suffices */
    const int dsize = LZ4_decompress_safe(comp, back, csize, (int)size);
    if (dsize != (int)size || memcmp(data, back, size) != 0)
        abort();
}

static void decode_block(const uint8_t *data, size_t size, char *out)
{
    (void)LZ4_decompress_safe((const char *)data, out, (int)size, (int)DECODE_CAP);
    if (size > 0) /* ask for a prefix whose length comes from the input */
        (void)LZ4_decompress_safe_partial((const char *)data, out, (int)size, data[0] * 64, (int)DECODE_CAP);
}

static void decode_frame(const uint8_t *data, size_t size, char *out)
{
    LZ4F_dctx *dctx = NULL;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        return;
    size_t pos = 0;
    while (pos < size) {
        size_t out_size = DECODE_CAP;
        size_t in_size = size - pos;
        const size_t hint = LZ4F_decompress(dctx, out, &out_size, data + pos, &in_size, NULL);
        if (LZ4F_isError(hint) || (in_size == 0 && out_size == 0))
            break;
        pos += in_size;
        if (hint == 0) /* end of a frame: another may follow */
            LZ4F_resetDecompressionContext(dctx);
    }
    LZ4F_freeDecompressionContext(dctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (size_t)LZ4_MAX_INPUT_SIZE)
        return 0;
    const size_t bound = (size_t)LZ4_compressBound((int)size);
    char *comp = malloc(bound ? bound : 1);
    char *back = malloc(size ? size : 1);
    char *out = malloc(DECODE_CAP);
    if (!comp || !back || !out)
        abort();
    round_trip_block(data, size, comp, back, 0);
    if (size > 0)
        round_trip_block(data, size, comp, back, 1 + data[0] % LZ4HC_CLEVEL_MAX);
    decode_block(data, size, out);
    decode_frame(data, size, out);
    free(out);
    free(back);
    free(comp);
    return 0;
}
