/* An OSS-Fuzz-style harness for libtiff (autotune's bug benchmark) on the part it shares with the
 * tests' libtiff harness (benchmarks/targets/libtiff/tiff_fuzz.h): open the input from memory
 * (TIFFClientOpen over our own read/seek/size procedures), then for each directory (at most
 * MAX_DIRS): print its tags to /dev/null; read its image through TIFFReadRGBAImageOriented when it
 * has at most MAX_PIXELS pixels, and tile by tile through TIFFReadRGBATile when tiled; read it
 * scanline by scanline (TIFFReadScanline, a failed line skipped, as a viewer shows what it can)
 * when stripped; and decode each strip or tile raw, up to MAX_BYTES decoded. Warnings and errors
 * are silenced: malformed files are the inputs. */
#include <stdint.h>

#include <tiffio.h>

static void read_rgba_tiles(TIFF *tif, uint32_t w, uint32_t h);
static void read_scanlines(TIFF *tif, uint32_t h);
#define READ_IMAGE(tif, w, h)                                                                      \
  do {                                                                                             \
    read_rgba(tif, w, h);                                                                          \
    if (TIFFIsTiled(tif))                                                                          \
      read_rgba_tiles(tif, w, h);                                                                  \
    else                                                                                           \
      read_scanlines(tif, h);                                                                      \
  } while (0)
#include "../../targets/libtiff/tiff_fuzz.h"

#define MAX_TILES 64u

static void read_rgba_tiles(TIFF *tif, uint32_t w, uint32_t h) {
  uint32_t tw = 0, th = 0;
  if (TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw) != 1 || TIFFGetField(tif, TIFFTAG_TILELENGTH, &th) != 1 ||
      tw == 0 || th == 0 || (uint64_t)tw * th > MAX_PIXELS)
    return;
  uint32_t *tile = malloc((size_t)tw * th * sizeof(uint32_t));
  if (tile == NULL)
    return;
  unsigned done = 0;
  for (uint32_t row = 0; row < h && done < MAX_TILES; row += th)
    for (uint32_t col = 0; col < w && done < MAX_TILES; col += tw, done++)
      (void)TIFFReadRGBATile(tif, col, row, tile);
  free(tile);
}

static void read_scanlines(TIFF *tif, uint32_t h) {
  tmsize_t n = TIFFScanlineSize(tif);
  if (n <= 0 || (uint64_t)n * h > MAX_BYTES)
    return;
  void *line = malloc((size_t)n);
  if (line == NULL)
    return;
  for (uint32_t row = 0; row < h; row++)
    (void)TIFFReadScanline(tif, line, row, 0);
  free(line);
}
