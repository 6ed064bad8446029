#ifndef TINY_WORDS_H
#define TINY_WORDS_H
#include <stddef.h>
size_t count_words(const char *text);
#endif
