/* An OSS-Fuzz-style harness for libtiff (autotune's bug benchmark): open the input from memory
 * (TIFFClientOpen over our own read/seek/size procedures), then for each directory (at most
 * MAX_DIRS): print its tags to /dev/null; read its image through TIFFReadRGBAImageOriented when it
 * has at most MAX_PIXELS pixels, and tile by tile through TIFFReadRGBATile when tiled; read it
 * scanline by scanline (TIFFReadScanline, a failed line skipped, as a viewer shows what it can)
 * when stripped; and decode each strip or tile raw, up to MAX_BYTES decoded. Warnings and errors
 * are silenced: malformed files are the inputs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

#define MAX_DIRS 8
#define MAX_PIXELS (1u << 20)
#define MAX_BYTES (8u << 20)
#define MAX_TILES 64u

struct mem {
  const uint8_t *data;
  toff_t size;
  toff_t pos;
};

static tmsize_t mem_read(thandle_t h, void *buf, tmsize_t n) {
  struct mem *m = (struct mem *)h;
  if (n <= 0 || m->pos >= m->size)
    return 0;
  toff_t left = m->size - m->pos;
  size_t k = (toff_t)n < left ? (size_t)n : (size_t)left;
  memcpy(buf, m->data + m->pos, k);
  m->pos += k;
  return (tmsize_t)k;
}

static tmsize_t mem_write(thandle_t h, void *buf, tmsize_t n) {
  (void)h;
  (void)buf;
  (void)n;
  return -1; /* opened read-only */
}

static toff_t mem_seek(thandle_t h, toff_t off, int whence) {
  struct mem *m = (struct mem *)h;
  toff_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->size : 0;
  m->pos = base + off; /* past the end is allowed: reads there return 0 */
  return m->pos;
}

static int mem_close(thandle_t h) {
  (void)h;
  return 0;
}

static toff_t mem_size(thandle_t h) { return ((struct mem *)h)->size; }

static int mem_map(thandle_t h, void **base, toff_t *size) {
  (void)h;
  (void)base;
  (void)size;
  return 0; /* no mapping: every read goes through mem_read */
}

static void mem_unmap(thandle_t h, void *base, toff_t size) {
  (void)h;
  (void)base;
  (void)size;
}

static void quiet(const char *module, const char *fmt, va_list ap) {
  (void)module;
  (void)fmt;
  (void)ap;
}

static FILE *devnull;

static void read_rgba(TIFF *tif, uint32_t w, uint32_t h) {
  if ((uint64_t)w * h > MAX_PIXELS)
    return;
  uint32_t *rgba = malloc((size_t)w * h * sizeof(uint32_t));
  if (rgba == NULL)
    return;
  (void)TIFFReadRGBAImageOriented(tif, w, h, rgba, ORIENTATION_TOPLEFT, 0);
  free(rgba);
}

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

/* Decode every strip (or tile) of the directory, one buffer of a strip's (a tile's) size, up to
 * MAX_BYTES decoded in all. */
static void read_raw(TIFF *tif) {
  int tiled = TIFFIsTiled(tif);
  tmsize_t n = tiled ? TIFFTileSize(tif) : TIFFStripSize(tif);
  if (n <= 0 || (uint64_t)n > MAX_BYTES)
    return;
  void *buf = malloc((size_t)n);
  if (buf == NULL)
    return;
  uint32_t parts = tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
  uint64_t total = 0;
  for (uint32_t i = 0; i < parts && total <= MAX_BYTES; i++, total += (uint64_t)n)
    if ((tiled ? TIFFReadEncodedTile(tif, i, buf, n) : TIFFReadEncodedStrip(tif, i, buf, n)) < 0)
      break;
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (devnull == NULL) {
    TIFFSetWarningHandler(quiet);
    TIFFSetErrorHandler(quiet);
    devnull = fopen("/dev/null", "w");
  }
  struct mem m = {data, (toff_t)size, 0};
  TIFF *tif = TIFFClientOpen("input", "rm", (thandle_t)&m, mem_read, mem_write, mem_seek, mem_close, mem_size,
                             mem_map, mem_unmap);
  if (tif == NULL)
    return 0;
  int dirs = 0;
  do {
    if (devnull != NULL)
      TIFFPrintDirectory(tif, devnull, TIFFPRINT_COLORMAP);
    uint32_t w = 0, h = 0;
    if (TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) == 1 && TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h) == 1 &&
        w > 0 && h > 0) {
      read_rgba(tif, w, h);
      if (TIFFIsTiled(tif))
        read_rgba_tiles(tif, w, h);
      else
        read_scanlines(tif, h);
    }
    read_raw(tif);
  } while (++dirs < MAX_DIRS && TIFFReadDirectory(tif) == 1);
  TIFFClose(tif);
  return 0;
}
