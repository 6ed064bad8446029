#include "config.h"
#include <math.h>
#include <stdio.h>
#include "words.h"

int main(int argc, char **argv)
{
    size_t words = 0;
    for (int i = 1; i < argc; i++)
        words += count_words(argv[i]);
#if defined(HAVE_MEMMEM) && defined(RUN_PROBE_OK) && !defined(HAVE_NO_SUCH_FUNCTION_XYZ)
    const char *probes = "ok";
#else
    const char *probes = "wrong";
#endif
    printf("words %zu cos0 %.1f sizeof_long %d probes %s\n", words, cos(0.0), SIZEOF_LONG, probes);
    return 0;
}
