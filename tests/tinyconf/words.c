#include "config.h"
#include "words.h"

size_t count_words(const char *text)
{
    size_t n = 0;
    int in_word = 0;
    for (; *text; text++) {
        const int space = *text == ' ' || *text == '\t' || *text == '\n';
        if (!space && !in_word)
            n++;
        in_word = !space;
    }
    return n;
}
