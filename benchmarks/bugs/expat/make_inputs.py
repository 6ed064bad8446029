"""Make expat's seeds and the crafted inputs of its bugs (benchmarks/bugs/expat/{seeds,inputs}).
An input is an options byte, an allocation byte (the n-th allocation fails; 0: none), the document,
then each external entity's text after four NUL bytes (expat_harness.c).

    python benchmarks/bugs/expat/make_inputs.py     # rewrites seeds/ and inputs/
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # buglibs.py
from buglibs import library  # noqa: E402

NS, EXTERNAL, SUSPEND, DECLS, DOC_ENCODING = 0x01, 0x02, 0x04, 0x08, 0x10
BOM = b"\xef\xbb\xbf"
SEPARATOR = b"\0\0\0\0"  # before each external text
# the allocation that fails (counted by the harness from the parser's creation on; found by trying
# each on the plain build): the root parser's copy of its encoding name (EXP004.reach), the external
# subset parser's (EXP004.trigger), the copy of the "xml" prefix's name in setContext (EXP010)
ROOT_ENCODING_COPY, SUBSET_ENCODING_COPY, XML_PREFIX_COPY = 5, 13, 9


def inp(doc: str | bytes, *texts: str | bytes, options: int = 0, fail: int = 0) -> bytes:
    """The harness's input: the option bytes, the document, the external texts after separators."""
    def raw(s: str | bytes) -> bytes:
        return s if isinstance(s, bytes) else s.encode()
    return bytes([options, fail]) + raw(doc) + b"".join(SEPARATOR + raw(t) for t in texts)


def laughs(levels: int, base: str) -> str:
    """A document whose root holds the top of ``levels`` entities, each ten references to the one
    below (the bottom one ``base``): 10**levels copies of ``base`` (a billion laughs)."""
    decls = f'<!ENTITY l0 "{base}">' + "".join(
        f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, levels + 1))
    return f"<!DOCTYPE r [{decls}]><r>&l{levels};</r>"


def nested(name: str, depth: int) -> str:
    """An element declaration whose content model nests ``depth`` groups."""
    return f"<!ELEMENT {name} {'(' * depth}x{')' * depth}>"


def main() -> None:
    seeds = {
        "plain.xml": inp('<?xml version="1.0" encoding="UTF-8"?>\n<catalog kind="books" lang="en">\n'
                         '  <book id="b1" year="1999"><title>Über Zeichen &amp; Text</title>'
                         '<price cur="EUR">12.50</price></book>\n  <!-- a comment -->\n  <?render mode="fast"?>\n'
                         '  <note><![CDATA[if (a < b && c > d) { return; }]]></note>\n'
                         '  <chars>&#65;&#x42;&lt;&gt;&quot;&apos;</chars>\n</catalog>\n'),
        "namespaces.xml": inp('<inv:inventory xmlns:inv="urn:example:inventory" xmlns="http://example.org/default"'
                              ' xmlns:x="urn:x"><inv:item x:code="A-1" qty="3"><name>bolt</name></inv:item>'
                              '<item xmlns="">plain</item><x:empty x:flag="on"/></inv:inventory>', options=NS),
        "dtd.xml": inp('<!DOCTYPE memo [\n<!ELEMENT memo (to+, from?, body)>\n<!ELEMENT to (#PCDATA)>\n'
                       '<!ELEMENT from (#PCDATA)>\n<!ELEMENT body (#PCDATA | em | sec)*>\n<!ELEMENT sec ((h, p?) | p+)>\n'
                       '<!ATTLIST memo prio (low|high) "low" id ID #IMPLIED ver CDATA #FIXED "2">\n'
                       '<!NOTATION png SYSTEM "image/png">\n<!ENTITY logo SYSTEM "logo.png" NDATA png>\n'
                       '<!ENTITY sig "-- the team">\n]>\n'
                       '<memo prio="high" id="m1"><to>all</to><body>see <em>this</em>&sig;</body></memo>',
                       options=DECLS),
        "entities.xml": inp('<!DOCTYPE page [<!ENTITY who "world"><!ENTITY greet "hello &who;">'
                            '<!ENTITY line "<em>&greet;</em>!">]><page title="&greet;">&line; &#169; &line;</page>'),
        "external.xml": inp('<!DOCTYPE doc SYSTEM "doc.dtd" [<!ENTITY % local "<!ENTITY loc \'here\'>"> %local;'
                            '<!ENTITY chap SYSTEM "chap.xml">]><doc ver="3">&chap; &loc;</doc>',
                            '<?xml version="1.0" encoding="UTF-8"?><!ELEMENT doc (#PCDATA|sec)*>'
                            '<!ELEMENT sec (#PCDATA)><!ATTLIST doc ver CDATA "1">',
                            '<?xml encoding="UTF-8"?><sec>chapter one</sec>', options=EXTERNAL | DECLS),
        "suspend.xml": inp('<?xml version="1.0"?><!-- head --><?app start?><!DOCTYPE log [<!ENTITY sep " | ">]>'
                           '<log><!-- first --><entry>a&sep;b</entry><?app tick?><entry>c</entry><!-- last --></log>',
                           options=SUSPEND),
        "utf16.xml": inp(b"\xff\xfe" + '<?xml version="1.0" encoding="UTF-16"?><msg lang="fr">Ça va ? Oui.</msg>'
                         .encode("utf-16-le")),
        "utf16be.xml": inp(b"\xfe\xff" + '<list><i n="1">eins</i><i n="2">zwei</i><!-- fin --></list>'
                           .encode("utf-16-be")),
        "latin1.xml": inp('<?xml version="1.0" encoding="ISO-8859-1"?><p class="menu">café crème, à 3 francs</p>'
                          .encode("latin-1"), options=DOC_ENCODING),
    }
    dtd_subset = '<!DOCTYPE r SYSTEM "r.dtd"><r/>'
    value_of_ext_pe = '<!ENTITY % part SYSTEM "part.ent"><!ENTITY % whole "[%part;]">'
    text_decl = '<?xml version="1.0" encoding="UTF-8"?>'
    inputs = {
        # EXP001: names with valid two-byte UTF-8 characters (reach) / a lead byte followed by an
        # ASCII letter, taken as U+00C1 (trigger)
        "EXP001.reach": inp("<caf\u00e9 n\u00e4me='1'/>"),
        "EXP001.trigger": inp(b"<a\xc3A/>"),
        # EXP002: a namespace declaration (reach) / one whose URI holds the separator '\n' (trigger)
        "EXP002.reach": inp('<r xmlns:p="urn:p:q"><p:e/></r>', options=NS),
        "EXP002.trigger": inp('<r xmlns:p="urn:p&#10;q"><p:e/></r>', options=NS),
        # EXP003: resumed in content (reach) / resumed inside an entity, whose end leaves the parser
        # in the document, where a tag opens before the buffer ends (trigger)
        "EXP003.reach": inp("<r><!--x--><a/></r>", options=SUSPEND),
        "EXP003.trigger": inp('<!DOCTYPE r [<!ENTITY e "<!--c-->t">]><r>&e;<open>', options=SUSPEND),
        # EXP004: the root parser's encoding name not copied (reach) / the external subset parser's,
        # whose DTD is the root's (trigger)
        "EXP004.reach": inp("<r/>", fail=ROOT_ENCODING_COPY),
        "EXP004.trigger": inp(dtd_subset, "<!ELEMENT r EMPTY>", options=EXTERNAL, fail=SUBSET_ENCODING_COPY),
        # EXP005: an external parameter entity in an entity value, read in two calls (reach) / its
        # text starting with a byte order mark (trigger)
        "EXP005.reach": inp(dtd_subset, value_of_ext_pe, "abc", options=EXTERNAL),
        "EXP005.trigger": inp(dtd_subset, value_of_ext_pe, BOM + b"abc", options=EXTERNAL),
        # EXP006: entities expanded (reach) / six levels of ten (13 MiB from a 400-byte document)
        "EXP006.reach": inp('<!DOCTYPE r [<!ENTITY a "xyz"><!ENTITY b "&a;&a;">]><r t="&b;">&b;</r>'),
        "EXP006.trigger": inp(laughs(6, "laughter")),
        # EXP007: resumed in an inner entity that ends without suspending (reach) / that suspends
        # again at its end while the outer entity is open (trigger)
        "EXP007.reach": inp('<!DOCTYPE r [<!ENTITY b "<!--1-->x"><!ENTITY a "&b;y">]><r>&a;</r>', options=SUSPEND),
        "EXP007.trigger": inp('<!DOCTYPE r [<!ENTITY b "<!--1--><!--2-->"><!ENTITY a "&b;y">]><r>&a;</r>',
                              options=SUSPEND),
        # EXP008: an entity value stored (reach) / an empty external parameter entity in one (trigger)
        "EXP008.reach": inp('<!DOCTYPE r [<!ENTITY e "v">]><r>&e;</r>'),
        "EXP008.trigger": inp(dtd_subset, '<!ENTITY % empty SYSTEM "e.ent"><!ENTITY % v "%empty;">', "",
                              options=EXTERNAL),
        # EXP009: an external parameter entity in an entity value, with a text declaration (reach) /
        # and a start tag after it (trigger: the tokenizer loops)
        "EXP009.reach": inp(dtd_subset, value_of_ext_pe, text_decl + "abc", options=EXTERNAL),
        "EXP009.trigger": inp(dtd_subset, value_of_ext_pe, text_decl + "<abc", options=EXTERNAL),
        # EXP010: the namespace parser's "xml" prefix (reach) / its name's copy out of memory: the
        # second parse call's setContext finds the nameless prefix (trigger)
        "EXP010.reach": inp("<r/>", options=NS),
        "EXP010.trigger": inp("<r/>", options=NS, fail=XML_PREFIX_COPY),
        # EXP011: a content model's groups (reach) / 65 nested groups (scaffIndex of 128), an external
        # parameter entity with 33 (scaffIndex shrunk to 64), then 65 again (trigger)
        "EXP011.reach": inp("<!DOCTYPE r [<!ELEMENT r ((a, b) | c)*>]><r/>", options=DECLS),
        "EXP011.trigger": inp(f'<!DOCTYPE r [{nested("p", 65)}<!ENTITY % ext SYSTEM "ext.dtd"> %ext;'
                              f'{nested("q", 65)}]><r/>', nested("m", 33), options=EXTERNAL | DECLS),
    }
    library(HERE.name).write_inputs(seeds=seeds, inputs=inputs)


if __name__ == "__main__":
    main()
