// jsoncpp harness (autotune's own): parse the input as JSON the lenient way (comments, jsoncpp's
// defaults), and if that succeeds write the value back and read it again the strict way; parse the
// input the strict way as well. Both readers, the writer and Value's comparison are exercised.
// jsoncpp reports a nesting deeper than its stack limit by throwing; that is its API, not a bug.
#include <json/json.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace {

bool parse(const Json::CharReaderBuilder &builder, const char *begin, const char *end, Json::Value *root) {
  std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
  std::string errors;
  try {
    return reader->parse(begin, end, root, &errors);
  } catch (const Json::Exception &) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *begin = reinterpret_cast<const char *>(data);
  const char *end = begin + size;
  Json::CharReaderBuilder lenient;
  lenient["stackLimit"] = 200;
  Json::CharReaderBuilder strict;
  Json::CharReaderBuilder::strictMode(&strict.settings_);
  strict["stackLimit"] = 200;

  Json::Value root;
  if (parse(lenient, begin, end, &root)) {
    Json::StreamWriterBuilder writer;
    writer["indentation"] = (size & 1) ? "" : "  ";
    const std::string text = Json::writeString(writer, root);
    Json::Value again;
    volatile bool same = parse(strict, text.data(), text.data() + text.size(), &again) && again == root;
    (void)same;
  }
  Json::Value other;
  parse(strict, begin, end, &other);
  return 0;
}
