/* libyaml harness: parse the input as a YAML stream, event by event, then load it as documents
 * (the parser and the loader: many small functions). Our own harness for the benchmarks. */
#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

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

  if (!yaml_parser_initialize(&parser)) return 0;
  yaml_parser_set_input_string(&parser, data, size);
  for (int docs = 0; docs < 16; docs++) {
    yaml_document_t doc;
    if (!yaml_parser_load(&parser, &doc)) break;
    int empty = yaml_document_get_root_node(&doc) == NULL;
    yaml_document_delete(&doc);
    if (empty) break;
  }
  yaml_parser_delete(&parser);
  return 0;
}
