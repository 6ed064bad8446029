/* An OSS-Fuzz-style harness for expat (autotune's bug benchmark), a superset of expat 2.2.10's own
 * fuzz/xml_parse_fuzzer.c. That one creates a parser with XML_ParserCreate (no namespaces), sets
 * only the element handlers and parses the input twice (XML_Parse of the data, not final, then of
 * the same data again, final). It never reaches namespace processing, external entities (no
 * external entity handler, no parameter entity parsing), content models (no element declaration
 * handler), suspension, or out-of-memory paths, where most fixes to 2.2.10 are.
 *
 * The input: an options byte, an allocation byte, the document, then the external entities'
 * texts, each after four NUL bytes (no XML text has them, UTF-16's neither).
 *   options 0x01  namespaces: XML_ParserCreate_MM with separator '\n', as expat's later fuzzers
 *           0x02  external entities: parameter entity parsing always, an external entity handler
 *                 that parses the i-th external text (i counting the handler's calls, modulo the
 *                 number of texts) in an XML_ExternalEntityParserCreate parser, not final, then
 *                 final with no more data (no text: the handler parses nothing)
 *           0x04  suspension: the comment and processing-instruction handlers suspend the parser
 *                 (resumable), the harness resumes it
 *           0x08  declaration handlers: element (content models), attribute list, entity, XML and
 *                 doctype declarations, character data
 *           0x10  the document's own encoding (XML_ParserCreate_MM with no encoding) instead of
 *                 ENCODING_FOR_FUZZING
 *   allocation n > 0: the n-th allocation of the run fails (once)
 * Options 0 and allocation 0 parse as expat's own harness does (the hash salt from the input,
 * another hash than its siphash). ENCODING_FOR_FUZZING comes from the build (build.sh). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expat.h"

#ifndef ENCODING_FOR_FUZZING
#error "ENCODING_FOR_FUZZING was not provided to this fuzz target."
#endif
#define XSTR(s) STR(s)
#define STR(s) #s

enum {
  OPT_NS = 0x01,
  OPT_EXTERNAL = 0x02,
  OPT_SUSPEND = 0x04,
  OPT_DECLS = 0x08,
  OPT_DOC_ENCODING = 0x10,
};

#define MAX_INPUT (256u << 10)
#define SEPARATOR_LEN 4 /* four NUL bytes */
#define MAX_TEXTS 8
#define MAX_EXTERNAL_DEPTH 4
#define MAX_EXTERNAL_CALLS 32
#define MAX_RESUMES 4096

static struct {
  unsigned options;
  unsigned fail_at; /* the allocation that fails, counted from 1; 0: none */
  unsigned allocations;
  const XML_Char *encoding;
  const char *text[MAX_TEXTS];
  size_t text_len[MAX_TEXTS];
  unsigned texts;
  unsigned external_calls;
  unsigned external_depth;
} run;

static int fail_now(void) {
  return ++run.allocations == run.fail_at;
}

static void *h_malloc(size_t size) {
  return fail_now() ? NULL : malloc(size);
}

static void *h_realloc(void *ptr, size_t size) {
  return fail_now() ? NULL : realloc(ptr, size);
}

static const XML_Memory_Handling_Suite memory = {h_malloc, h_realloc, free};

static void XMLCALL on_start(void *arg, const XML_Char *name, const XML_Char **atts) {
  (void)arg;
  (void)name;
  (void)atts;
}

static void XMLCALL on_end(void *arg, const XML_Char *name) {
  (void)arg;
  (void)name;
}

static void XMLCALL on_comment(void *arg, const XML_Char *data) {
  (void)data;
  XML_StopParser((XML_Parser)arg, XML_TRUE);
}

static void XMLCALL on_pi(void *arg, const XML_Char *target, const XML_Char *data) {
  (void)target;
  (void)data;
  XML_StopParser((XML_Parser)arg, XML_TRUE);
}

static void XMLCALL on_element_decl(void *arg, const XML_Char *name, XML_Content *model) {
  (void)name;
  XML_FreeContentModel((XML_Parser)arg, model);
}

static void XMLCALL on_attlist_decl(void *arg, const XML_Char *elname, const XML_Char *attname,
                                    const XML_Char *att_type, const XML_Char *dflt, int isrequired) {
  (void)arg;
  (void)elname;
  (void)attname;
  (void)att_type;
  (void)dflt;
  (void)isrequired;
}

static void XMLCALL on_entity_decl(void *arg, const XML_Char *name, int is_param, const XML_Char *value,
                                   int value_len, const XML_Char *base, const XML_Char *system_id,
                                   const XML_Char *public_id, const XML_Char *notation) {
  (void)arg;
  (void)name;
  (void)is_param;
  (void)value;
  (void)value_len;
  (void)base;
  (void)system_id;
  (void)public_id;
  (void)notation;
}

static void XMLCALL on_xml_decl(void *arg, const XML_Char *version, const XML_Char *encoding, int standalone) {
  (void)arg;
  (void)version;
  (void)encoding;
  (void)standalone;
}

static void XMLCALL on_doctype_start(void *arg, const XML_Char *name, const XML_Char *sysid, const XML_Char *pubid,
                                     int has_internal_subset) {
  (void)arg;
  (void)name;
  (void)sysid;
  (void)pubid;
  (void)has_internal_subset;
}

static void XMLCALL on_doctype_end(void *arg) {
  (void)arg;
}

static void XMLCALL on_characters(void *arg, const XML_Char *s, int len) {
  (void)arg;
  (void)s;
  (void)len;
}

/* XML_Parse, then XML_ResumeParser as long as a handler suspended the parser. */
static enum XML_Status parse(XML_Parser p, const char *data, size_t len, int is_final) {
  enum XML_Status status = XML_Parse(p, data, (int)len, is_final);
  for (unsigned i = 0; status == XML_STATUS_SUSPENDED && i < MAX_RESUMES; i++)
    status = XML_ResumeParser(p);
  return status;
}

static int XMLCALL on_external_entity(XML_Parser p, const XML_Char *context, const XML_Char *base,
                                      const XML_Char *system_id, const XML_Char *public_id) {
  (void)base;
  (void)system_id;
  (void)public_id;
  if (run.texts == 0)
    return XML_STATUS_OK; /* not read: as an application that loads no external entity */
  if (run.external_depth >= MAX_EXTERNAL_DEPTH || run.external_calls >= MAX_EXTERNAL_CALLS)
    return XML_STATUS_ERROR;
  unsigned i = run.external_calls++ % run.texts;
  XML_Parser ext = XML_ExternalEntityParserCreate(p, context, run.encoding);
  if (ext == NULL)
    return XML_STATUS_ERROR;
  run.external_depth++;
  enum XML_Status status = parse(ext, run.text[i], run.text_len[i], 0);
  if (status == XML_STATUS_OK)
    status = parse(ext, "", 0, 1);
  run.external_depth--;
  XML_ParserFree(ext);
  return status == XML_STATUS_ERROR ? XML_STATUS_ERROR : XML_STATUS_OK;
}

/* The first separator in [from, end), or NULL. */
static const char *separator_in(const char *from, const char *end) {
  for (const char *p = from; end - p >= SEPARATOR_LEN; p++)
    if (p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0)
      return p;
  return NULL;
}

static unsigned long salt_of(const uint8_t *data, size_t size) {
  uint64_t h = 0xcbf29ce484222325u; /* FNV-1a, 64 bits: deterministic, never 0 below */
  for (size_t i = 0; i < size; i++)
    h = (h ^ data[i]) * 0x100000001b3u;
  return (unsigned long)(h | 1u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2 || size > MAX_INPUT)
    return 0;
  memset(&run, 0, sizeof run);
  run.options = data[0];
  run.fail_at = data[1];
  run.encoding = (run.options & OPT_DOC_ENCODING) ? NULL : XSTR(ENCODING_FOR_FUZZING);

  const char *doc = (const char *)data + 2;
  const char *end = (const char *)data + size;
  const char *sep = separator_in(doc, end);
  size_t doc_len = (size_t)((sep ? sep : end) - doc);
  for (const char *t = sep; t != NULL && run.texts < MAX_TEXTS;) {
    const char *start = t + SEPARATOR_LEN;
    const char *next = separator_in(start, end);
    run.text[run.texts] = start;
    run.text_len[run.texts] = (size_t)((next ? next : end) - start);
    run.texts++;
    t = next;
  }

  static const XML_Char separator[] = {'\n', 0};
  XML_Parser p = XML_ParserCreate_MM(run.encoding, &memory, (run.options & OPT_NS) ? separator : NULL);
  if (p == NULL)
    return 0;
  XML_SetHashSalt(p, salt_of(data, size));
  XML_UseParserAsHandlerArg(p); /* handlers get the parser they run in (external parsers: their own) */
  XML_SetElementHandler(p, on_start, on_end);
  if (run.options & OPT_EXTERNAL) {
    XML_SetParamEntityParsing(p, XML_PARAM_ENTITY_PARSING_ALWAYS);
    XML_SetExternalEntityRefHandler(p, on_external_entity);
  }
  if (run.options & OPT_SUSPEND) {
    XML_SetCommentHandler(p, on_comment);
    XML_SetProcessingInstructionHandler(p, on_pi);
  }
  if (run.options & OPT_DECLS) {
    XML_SetElementDeclHandler(p, on_element_decl);
    XML_SetAttlistDeclHandler(p, on_attlist_decl);
    XML_SetEntityDeclHandler(p, on_entity_decl);
    XML_SetXmlDeclHandler(p, on_xml_decl);
    XML_SetDoctypeDeclHandler(p, on_doctype_start, on_doctype_end);
    XML_SetCharacterDataHandler(p, on_characters);
  }
  /* as expat's own harness: the data, not final, then the same data again, final (whatever the
     first call returned: after an error the second call fails at once, or retries the start) */
  parse(p, doc, doc_len, 0);
  parse(p, doc, doc_len, 1);
  XML_ParserFree(p);
  return 0;
}
