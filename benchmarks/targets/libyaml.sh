#!/usr/bin/env bash
# libyaml (Debian's source package) built through its own CMake build, and a libFuzzer-style
# harness, in OSS-Fuzz's build-script convention: run by `autotune validate --build-script` /
# `autotune compare --build-script` with CC, CFLAGS, LIB_FUZZING_ENGINE, OUT and WORK set; writes
# $OUT/fuzzer. LIBYAML_SRC names the unpacked source tree (benchmarks/targets/fetch.py fetches it).
# The harness is written here so that the script's digest (autotune's build cache key) covers it.
set -euo pipefail
: "${LIBYAML_SRC:?set LIBYAML_SRC to an unpacked libyaml tree: python benchmarks/targets/fetch.py libyaml}"

cmake -S "$LIBYAML_SRC" -B "$WORK/build" -DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS" \
  -DCMAKE_BUILD_TYPE=None -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF >"$WORK/cmake.log"
cmake --build "$WORK/build" --target yaml -j2 >>"$WORK/cmake.log"

cat >"$WORK/harness.c" <<'HARNESS'
/* Parse the input as a YAML stream (events), then load it as documents and emit each one back
 * out: the scanner, parser, loader, emitter and writer all see the input. */
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

static int drop_output(void *ctx, unsigned char *buffer, size_t size) {
  (void)ctx, (void)buffer, (void)size;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  yaml_parser_t parser;
  yaml_event_t event;
  if (!yaml_parser_initialize(&parser)) return 0;
  yaml_parser_set_input_string(&parser, data, size);
  for (int done = 0; !done;) {
    if (!yaml_parser_parse(&parser, &event)) break;
    done = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
  }
  yaml_parser_delete(&parser);

  yaml_emitter_t emitter;
  yaml_document_t doc;
  if (!yaml_parser_initialize(&parser)) return 0;
  if (!yaml_emitter_initialize(&emitter)) {
    yaml_parser_delete(&parser);
    return 0;
  }
  yaml_parser_set_input_string(&parser, data, size);
  yaml_emitter_set_output(&emitter, drop_output, NULL);
  yaml_emitter_set_unicode(&emitter, 1);
  int opened = yaml_emitter_open(&emitter);
  for (int n = 0; n < 64 && yaml_parser_load(&parser, &doc); n++) {
    if (!yaml_document_get_root_node(&doc)) {
      yaml_document_delete(&doc);
      break;
    }
    if (opened) opened = yaml_emitter_dump(&emitter, &doc); /* dump deletes doc */
    else yaml_document_delete(&doc);
  }
  if (opened) yaml_emitter_close(&emitter);
  yaml_emitter_delete(&emitter);
  yaml_parser_delete(&parser);
  return 0;
}
HARNESS

$CC $CFLAGS $LIB_FUZZING_ENGINE -I "$LIBYAML_SRC/include" "$WORK/harness.c" "$WORK/build/libyaml.a" -o "$OUT/fuzzer"
