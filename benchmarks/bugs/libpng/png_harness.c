/* An OSS-Fuzz-style harness for libpng (autotune's bug benchmark). libpng's own
 * contrib/oss-fuzz/libpng_read_fuzzer.cc reads rows with a fixed set of transforms and never
 * reaches the simplified API or png_set_quantize, where the bugs of this benchmark are; this
 * harness reads both ways. The input's first 2 bytes are options, the rest the PNG file:
 *   byte 0   the simplified API's output format (one of FORMATS, modulo their count)
 *   byte 1   bit 0: composite onto a background colour given by the caller (else the file's)
 *            bit 1: read rows with png_set_quantize for palette images (else expand to RGB(A))
 *            bit 2: the output buffer starts white (0xff bytes), else black: without a background
 *                   colour an image with alpha is composited onto what the buffer holds
 *            bits 4-7: the quantize's maximum colours, (value + 1) * 16
 * 1. the simplified API: png_image_begin_read_from_memory, png_image_finish_read;
 * 2. row by row (png_read_info, transforms, png_read_row over every interlace pass).
 * Images are limited to MAX_SIDE pixels a side; warnings and errors are silenced. */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#define MAX_SIDE 1024u
#define MAX_BYTES (16u << 20)

static const png_uint_32 FORMATS[] = {
    PNG_FORMAT_GRAY,          PNG_FORMAT_GA,           PNG_FORMAT_AG,           PNG_FORMAT_RGB,
    PNG_FORMAT_BGR,           PNG_FORMAT_RGBA,         PNG_FORMAT_ARGB,         PNG_FORMAT_BGRA,
    PNG_FORMAT_ABGR,          PNG_FORMAT_LINEAR_Y,     PNG_FORMAT_LINEAR_Y_ALPHA, PNG_FORMAT_LINEAR_RGB,
    PNG_FORMAT_LINEAR_RGB_ALPHA, PNG_FORMAT_RGB_COLORMAP, PNG_FORMAT_BGR_COLORMAP, PNG_FORMAT_RGBA_COLORMAP,
    PNG_FORMAT_ARGB_COLORMAP, PNG_FORMAT_BGRA_COLORMAP, PNG_FORMAT_ABGR_COLORMAP,
};
#define N_FORMATS (sizeof FORMATS / sizeof FORMATS[0])

static void read_simplified(const uint8_t *png, size_t size, uint8_t format, uint8_t flags) {
  png_image image;
  memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, png, size))
    return;
  image.format = FORMATS[format % N_FORMATS];
  if (image.width <= MAX_SIDE && image.height <= MAX_SIDE && PNG_IMAGE_SIZE(image) <= MAX_BYTES) {
    void *buffer = malloc(PNG_IMAGE_SIZE(image));
    void *colormap = (image.format & PNG_FORMAT_FLAG_COLORMAP) ? malloc(PNG_IMAGE_COLORMAP_SIZE(image)) : NULL;
    png_color background = {0x40, 0x80, 0xc0};
    if (buffer != NULL)
      memset(buffer, (flags & 4) ? 0xff : 0, PNG_IMAGE_SIZE(image));
    if (buffer != NULL && ((image.format & PNG_FORMAT_FLAG_COLORMAP) == 0 || colormap != NULL))
      (void)png_image_finish_read(&image, (flags & 1) ? &background : NULL, buffer, 0, colormap);
    free(colormap);
    free(buffer);
  }
  png_image_free(&image);
}

struct mem {
  const uint8_t *data;
  size_t size, pos;
};

static void mem_read(png_structp png, png_bytep out, size_t n) {
  struct mem *m = (struct mem *)png_get_io_ptr(png);
  if (n > m->size - m->pos)
    png_error(png, "read past the end");
  memcpy(out, m->data + m->pos, n);
  m->pos += n;
}

static void quiet(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

static void fail(png_structp png, png_const_charp msg) {
  (void)msg;
  png_longjmp(png, 1);
}

static void read_rows(const uint8_t *png_data, size_t size, uint8_t flags) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, fail, quiet);
  if (png == NULL)
    return;
  png_infop info = png_create_info_struct(png);
  png_bytep row = NULL;
  if (info == NULL || setjmp(png_jmpbuf(png))) {
    free(row);
    png_destroy_read_struct(&png, info ? &info : NULL, NULL);
    return;
  }
  struct mem m = {png_data, size, 0};
  png_set_read_fn(png, &m, mem_read);
  png_set_user_limits(png, MAX_SIDE, MAX_SIDE);
  png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
  png_read_info(png, info);
  png_colorp palette = NULL;
  int num_palette = 0;
  if ((flags & 2) && png_get_color_type(png, info) == PNG_COLOR_TYPE_PALETTE &&
      png_get_PLTE(png, info, &palette, &num_palette) == PNG_INFO_PLTE) {
    png_uint_16p histogram = NULL;
    if (png_get_hIST(png, info, &histogram) != PNG_INFO_hIST)
      histogram = NULL;
    png_set_packing(png);
    png_set_quantize(png, palette, num_palette, ((flags >> 4) + 1) * 16, histogram, 0);
  } else {
    png_set_gray_to_rgb(png);
    png_set_expand(png);
    png_set_packing(png);
    png_set_scale_16(png);
    png_set_tRNS_to_alpha(png);
  }
  int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  size_t rowbytes = png_get_rowbytes(png, info);
  png_uint_32 height = png_get_image_height(png, info);
  if (rowbytes == 0 || rowbytes > MAX_BYTES)
    png_error(png, "row too large");
  row = malloc(rowbytes);
  if (row == NULL)
    png_error(png, "out of memory");
  for (int pass = 0; pass < passes; pass++)
    for (png_uint_32 y = 0; y < height; y++)
      png_read_row(png, row, NULL);
  png_read_end(png, info);
  free(row);
  png_destroy_read_struct(&png, &info, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 + 8)
    return 0;
  read_simplified(data + 2, size - 2, data[0], data[1]);
  read_rows(data + 2, size - 2, data[1]);
  return 0;
}
