/* A libFuzzer-style harness for libtiff (tiff_fuzz.h): open the input from memory (TIFFClientOpen
 * over our own read/seek/size procedures, no file), then for each directory (at most MAX_DIRS)
 * print its tags (and its colour map) to /dev/null, read its image through
 * TIFFReadRGBAImageOriented when it has at most MAX_PIXELS pixels, and decode each strip or tile
 * raw, up to MAX_BYTES decoded. Warnings and errors are silenced: malformed files are the inputs,
 * and their messages would only cost time. */
#define READ_IMAGE(tif, w, h) read_rgba(tif, w, h)
#include "tiff_fuzz.h"
