/* An OSS-Fuzz-style harness for OpenJPEG (autotune's bug benchmark), our own, doing in C what
 * OpenJPEG's own tests/fuzzers/opj_decompress_fuzzer_J2K.cpp and _JP2.cpp do, as one harness: a
 * J2K codestream (starting with SOC, FF 4F) or a JP2 file (its first box 'jP  ') served from memory,
 * its header, a decode area of at most 1024 x 1024 from the image's origin (a larger image: all of
 * it at the first reduced resolution that fits, as opj_decompress -r, where its components have
 * that many), the decode; then what opj_decompress does with a decoded image before writing it
 * (src/bin/common/color.c, built with the harness: 3 components with subsampled chroma taken as
 * sYCC; sYCC, e-sYCC and CMYK to RGB; no ICC profiles, as without lcms2). Bounded: an image of more
 * than 16 components, or whose tiles hold more than 2^22 samples over its components, is not
 * decoded. Nothing is written anywhere. C11. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "openjpeg.h"
#include "color.h"

#define MAX_AREA_SIDE 1024u
#define MAX_TILE_SAMPLES (1u << 22)
#define MAX_COMPONENTS 16u

struct memfile {
  const uint8_t *data;
  size_t len;
  size_t pos;
};

static OPJ_SIZE_T read_mem(void *buf, OPJ_SIZE_T n, void *user) {
  struct memfile *m = user;
  if (m->pos >= m->len || n == 0)
    return (OPJ_SIZE_T)-1;
  size_t left = m->len - m->pos;
  size_t got = n < left ? n : left;
  memcpy(buf, m->data + m->pos, got);
  m->pos += got;
  return got;
}

static OPJ_OFF_T skip_mem(OPJ_OFF_T n, void *user) {
  struct memfile *m = user;
  if (n < 0) {
    size_t back = (size_t)-n;
    m->pos = back > m->pos ? 0 : m->pos - back;
  } else {
    size_t left = m->len - (m->pos < m->len ? m->pos : m->len);
    m->pos += (size_t)n < left ? (size_t)n : left;
  }
  return n;
}

static OPJ_BOOL seek_mem(OPJ_OFF_T n, void *user) {
  struct memfile *m = user;
  if (n < 0 || (uint64_t)n > m->len)
    return OPJ_FALSE;
  m->pos = (size_t)n;
  return OPJ_TRUE;
}

static void quiet(const char *msg, void *user) {
  (void)msg;
  (void)user;
}

/* opj_decompress's colour handling of a decoded image (src/bin/jp2/opj_decompress.c) */
static void convert_colours(opj_image_t *image) {
  if (image->color_space != OPJ_CLRSPC_SYCC && image->numcomps == 3 &&
      image->comps[0].dx == image->comps[0].dy && image->comps[1].dx != 1)
    image->color_space = OPJ_CLRSPC_SYCC;
  else if (image->numcomps <= 2)
    image->color_space = OPJ_CLRSPC_GRAY;
  if (image->color_space == OPJ_CLRSPC_SYCC)
    color_sycc_to_rgb(image);
  else if (image->color_space == OPJ_CLRSPC_CMYK)
    color_cmyk_to_rgb(image);
  else if (image->color_space == OPJ_CLRSPC_EYCC)
    color_esycc_to_rgb(image);
}

/* the tile's samples over all components are within the bound */
static int bounded(opj_codec_t *codec, const opj_image_t *image) {
  if (image->numcomps == 0 || image->numcomps > MAX_COMPONENTS)
    return 0;
  opj_codestream_info_v2_t *info = opj_get_cstr_info(codec);
  if (info == NULL)
    return 0;
  uint64_t samples = (uint64_t)info->tdx * info->tdy * image->numcomps;
  opj_destroy_cstr_info(&info);
  return samples <= MAX_TILE_SAMPLES;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const uint8_t soc[2] = {0xff, 0x4f};
  static const uint8_t jp[4] = {0x6a, 0x50, 0x20, 0x20}; /* 'jP  ' */
  OPJ_CODEC_FORMAT format;
  if (size >= 2 && memcmp(data, soc, 2) == 0)
    format = OPJ_CODEC_J2K;
  else if (size >= 8 && memcmp(data + 4, jp, 4) == 0)
    format = OPJ_CODEC_JP2;
  else
    return 0;

  opj_codec_t *codec = opj_create_decompress(format);
  if (codec == NULL)
    return 0;
  opj_set_info_handler(codec, quiet, NULL);
  opj_set_warning_handler(codec, quiet, NULL);
  opj_set_error_handler(codec, quiet, NULL);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters(&params);
  opj_setup_decoder(codec, &params);

  struct memfile m = {data, size, 0};
  opj_stream_t *stream = opj_stream_create(1024, OPJ_TRUE);
  if (stream == NULL) {
    opj_destroy_codec(codec);
    return 0;
  }
  opj_stream_set_user_data(stream, &m, NULL);
  opj_stream_set_user_data_length(stream, size);
  opj_stream_set_read_function(stream, read_mem);
  opj_stream_set_skip_function(stream, skip_mem);
  opj_stream_set_seek_function(stream, seek_mem);

  opj_image_t *image = NULL;
  if (opj_read_header(stream, codec, &image) && bounded(codec, image)) {
    OPJ_UINT32 w = image->x1 - image->x0, h = image->y1 - image->y0;
    /* an image of more than 1024 on a side: all of it at the first resolution that brings it within
       1024 x 1024 (opj_decompress -r) when its components have that many, else its top left
       1024 x 1024 at full resolution (OpenJPEG's fuzzers) */
    OPJ_UINT32 reduce = 0;
    while (reduce < 31 && (((w - 1) >> reduce) >= MAX_AREA_SIDE || ((h - 1) >> reduce) >= MAX_AREA_SIDE))
      reduce++;
    int whole = reduce > 0 && opj_set_decoded_resolution_factor(codec, reduce);
    if (reduce > 0 && !whole)
      opj_set_decoded_resolution_factor(codec, 0);
    if (w > MAX_AREA_SIDE)
      w = MAX_AREA_SIDE;
    if (h > MAX_AREA_SIDE)
      h = MAX_AREA_SIDE;
    if ((whole || opj_set_decode_area(codec, image, (OPJ_INT32)image->x0, (OPJ_INT32)image->y0,
                                      (OPJ_INT32)(image->x0 + w), (OPJ_INT32)(image->y0 + h))) &&
        opj_decode(codec, stream, image) && opj_end_decompress(codec, stream))
      convert_colours(image);
  }
  opj_stream_destroy(stream);
  opj_destroy_codec(codec);
  opj_image_destroy(image);
  return 0;
}
