/* The part our two libtiff harnesses share (benchmarks/targets/libtiff/libtiff_harness.c, the tests'
 * target, and benchmarks/bugs/libtiff/tiff_harness.c, the bug benchmark's), included by each at its
 * top: LLVMFuzzerTestOneInput opens the input from memory (TIFFClientOpen over our own
 * read/seek/size procedures, no file), then for each directory (at most MAX_DIRS) prints its tags
 * (and its colour map) to /dev/null, reads its image as the harness's READ_IMAGE(tif, w, h) says
 * when it has a width and a height, and decodes each strip or tile raw (read_raw), up to MAX_BYTES
 * decoded. read_rgba, the whole image through TIFFReadRGBAImageOriented when it has at most
 * MAX_PIXELS pixels, is here for READ_IMAGE to call. READ_IMAGE is a macro (a statement), not a
 * function: through a function the optimiser shapes LLVMFuzzerTestOneInput otherwise, and the bug
 * benchmark's harness must compile (and be instrumented) as it did before it shared this file.
 * Warnings and errors are silenced: malformed files are the inputs, and their messages would only
 * cost time. */
#ifndef AUTOTUNE_TIFF_FUZZ_H
#define AUTOTUNE_TIFF_FUZZ_H

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

#ifndef READ_IMAGE
#error "define READ_IMAGE(tif, w, h), the harness's reading of a directory's image, before including tiff_fuzz.h"
#endif

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
        w > 0 && h > 0)
      READ_IMAGE(tif, w, h);
    read_raw(tif);
  } while (++dirs < MAX_DIRS && TIFFReadDirectory(tif) == 1);
  TIFFClose(tif);
  return 0;
}

#endif
