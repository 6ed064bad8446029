/* An OSS-Fuzz-style harness for libxml2 (autotune's bug benchmark), after the manner of libxml2's
 * own later fuzz/xml.c: the input's first 4 bytes choose the parser options (XML_PARSE_HUGE is
 * masked off, XML_PARSE_NONET forced on), the rest is the document. It is parsed into a tree
 * (xmlReadMemory) and serialised again; when its root is an XML Schema's <schema>, the tree is
 * also parsed as a schema; then it is read once more through the streaming xmlTextReader with the
 * same options. No external resource is loaded (an entity loader that refuses all), errors are
 * silenced. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>
#include <libxml/xmlschemas.h>

#define MAX_INPUT (64u << 10)

static void quiet(void *ctx, const char *msg, ...) {
  (void)ctx;
  (void)msg;
}

static void quiet_structured(void *ctx, xmlErrorPtr err) {
  (void)ctx;
  (void)err;
}

static xmlParserInputPtr no_external(const char *url, const char *id, xmlParserCtxtPtr ctxt) {
  (void)url;
  (void)id;
  (void)ctxt;
  return NULL;
}

static int is_schema(xmlDocPtr doc) {
  xmlNodePtr root = xmlDocGetRootElement(doc);
  return root != NULL && root->name != NULL && xmlStrEqual(root->name, BAD_CAST "schema");
}

static void parse_schema(xmlDocPtr doc) {
  xmlDocPtr copy = xmlCopyDoc(doc, 1); /* the schema parser may change its tree */
  if (copy == NULL)
    return;
  xmlSchemaParserCtxtPtr pctxt = xmlSchemaNewDocParserCtxt(copy);
  if (pctxt != NULL) {
    xmlSchemaSetParserErrors(pctxt, quiet, quiet, NULL);
    xmlSchemaSetParserStructuredErrors(pctxt, quiet_structured, NULL);
    xmlSchemaPtr schema = xmlSchemaParse(pctxt);
    if (schema != NULL)
      xmlSchemaFree(schema);
    xmlSchemaFreeParserCtxt(pctxt);
  }
  xmlFreeDoc(copy);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  xmlInitParser();
  xmlSetGenericErrorFunc(NULL, quiet);
  xmlSetStructuredErrorFunc(NULL, quiet_structured);
  xmlSetExternalEntityLoader(no_external);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4 || size > MAX_INPUT)
    return 0;
  int opts = (int)((uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24);
  opts = (opts & ~XML_PARSE_HUGE) | XML_PARSE_NONET;
  const char *doc_text = (const char *)data + 4;
  int len = (int)(size - 4);

  xmlDocPtr doc = xmlReadMemory(doc_text, len, "doc.xml", NULL, opts);
  if (doc != NULL) {
    xmlChar *out = NULL;
    int out_len = 0;
    xmlDocDumpMemory(doc, &out, &out_len);
    xmlFree(out);
    if (is_schema(doc))
      parse_schema(doc);
    xmlFreeDoc(doc);
  }

  xmlTextReaderPtr reader = xmlReaderForMemory(doc_text, len, "doc.xml", NULL, opts);
  if (reader != NULL) {
    while (xmlTextReaderRead(reader) == 1)
      ;
    xmlFreeTextReader(reader);
  }
  xmlResetLastError();
  return 0;
}
