/* A libFuzzer-style harness for libjpeg-turbo's TurboJPEG API: read the header, then decompress
 * images of at most 2^20 pixels to RGB, and, when that works, decode to planar YUV too (another
 * path through the upsampling and colour code). Errors are the library's to report: each call's
 * return value is checked and the handle is reused only within one input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <turbojpeg.h>

#define MAX_PIXELS (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tjhandle h = tjInitDecompress();
  if (h == NULL)
    return 0;
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(h, data, (unsigned long)size, &width, &height, &subsamp, &colorspace) == 0 &&
      width > 0 && height > 0 && (uint64_t)width * (uint64_t)height <= MAX_PIXELS) {
    unsigned char *rgb = malloc((size_t)width * (size_t)height * 3);
    if (rgb != NULL) {
      if (tjDecompress2(h, data, (unsigned long)size, rgb, width, 0, height, TJPF_RGB, TJFLAG_ACCURATEDCT) == 0 &&
          subsamp >= 0 && subsamp < TJ_NUMSAMP) {
        unsigned long yuv_size = tjBufSizeYUV2(width, 4, height, subsamp);
        unsigned char *yuv = yuv_size != (unsigned long)-1 ? malloc(yuv_size) : NULL;
        if (yuv != NULL) {
          (void)tjDecompressToYUV2(h, data, (unsigned long)size, yuv, width, 4, height, 0);
          free(yuv);
        }
      }
      free(rgb);
    }
  }
  tjDestroy(h);
  return 0;
}
