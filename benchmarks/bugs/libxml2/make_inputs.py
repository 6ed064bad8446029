"""Make libxml2's seeds and the crafted inputs of its bugs (benchmarks/bugs/libxml2/{seeds,inputs}).
An input is 4 bytes of parser options (little-endian, libxml2's xmlParserOption bits) and the
document (xml_harness.c).

    python benchmarks/bugs/libxml2/make_inputs.py     # rewrites seeds/ and inputs/
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # buglibs.py
from buglibs import library  # noqa: E402
RECOVER, NOENT, DTDLOAD, DTDATTR, DTDVALID = 1, 2, 4, 8, 16
XINCLUDE, NODICT = 1024, 4096
XS = 'xmlns:xs="http://www.w3.org/2001/XMLSchema"'
XI = 'xmlns:xi="http://www.w3.org/2001/XInclude"'


def doc(text: str, options: int = 0) -> bytes:
    return struct.pack("<I", options) + text.encode()


def schema(body: str) -> bytes:
    return doc(f"<xs:schema {XS}>{body}</xs:schema>")


def main() -> None:
    seeds = {
        "plain.xml": doc('<?xml version="1.0"?><doc a="1"><b>text &amp; more</b><!-- c --><?pi x?></doc>'),
        "ns.xml": doc('<p:doc xmlns:p="urn:p" p:a="v"><p:e/><![CDATA[x<y]]></p:doc>'),
        "dtd.xml": doc('<!DOCTYPE d [<!ELEMENT d (e*)><!ELEMENT e (#PCDATA)><!ATTLIST e id ID #IMPLIED>'
                       '<!ENTITY ent "value">]><d><e id="i1">&ent;</e></d>', DTDVALID | NOENT),
        "entities.xml": doc('<!DOCTYPE d [<!ENTITY a "alpha"><!ENTITY % p "<!ENTITY b \'beta\'>"> %p;]>'
                            '<d x="&a;">&a;&b;</d>', DTDATTR),
        "xinclude.xml": doc(f'<d {XI}><xi:include href="other.xml"><xi:fallback>f</xi:fallback></xi:include></d>',
                            XINCLUDE),
        "schema.xsd": schema('<xs:element name="root"><xs:complexType><xs:sequence>'
                             '<xs:element name="item" type="xs:string" maxOccurs="unbounded"/></xs:sequence>'
                             '<xs:attribute name="n" type="xs:int"/></xs:complexType>'
                             '<xs:key name="k"><xs:selector xpath="item"/><xs:field xpath="."/></xs:key>'
                             '</xs:element>'),
    }
    long_prefix, long_name = "p" * 1000, "n" * 1500
    inputs = {
        # XML001: an entity's content decoded (reach)
        "XML001.reach": doc('<!DOCTYPE d [<!ENTITY e "x&amp;y">]><d a="&e;">&e;</d>'),
        # XML002: a nested content group (reach) / a nested group that fails to parse (trigger)
        "XML002.reach": doc('<!DOCTYPE d [<!ELEMENT d ((a|b),c)>]><d/>'),
        "XML002.trigger": doc('<!DOCTYPE d [<!ELEMENT d ((a,b|c),d)>]><d/>', RECOVER),
        # XML003: a parameter entity in the DTD (reach) / parameter entities doubling 16 times over
        # (their '%' written as character references, so each value holds references to the last)
        "XML003.reach": doc('<!DOCTYPE d [<!ENTITY % p "<!ELEMENT d ANY>"> %p;]><d/>'),
        "XML003.trigger": doc('<!DOCTYPE d [<!ENTITY % a0 " ">'
                              + "".join(f'<!ENTITY % a{i + 1} "&#37;a{i};&#37;a{i};">' for i in range(16))
                              + ' %a16;]><d/>'),
        # XML004: an entity loop in an attribute value whose content is long (not in the dict: reach) /
        # short (in the dict: trigger)
        "XML004.reach": doc('<!DOCTYPE d [<!ENTITY a "&b;....."><!ENTITY b "&a;.....">]><d x="&a;"/>'),
        "XML004.trigger": doc('<!DOCTYPE d [<!ENTITY a "&b;"><!ENTITY b "&a;">]><d x="&a;"/>'),
        # XML005: any name hashed (reach) / an empty default namespace: the dict hashes the empty URI
        # in place, by the quote after it (trigger; AFL++ found the like in a pilot campaign)
        "XML005.reach": doc("<d/>"),
        "XML005.trigger": doc('<d xmlns=""/>'),
        # XML006: a substitution group (reach) / one whose head is itself (trigger)
        "XML006.reach": schema('<xs:element name="h" type="xs:string"/><xs:element name="m" substitutionGroup="h"/>'),
        "XML006.trigger": schema('<xs:element name="a" substitutionGroup="a"/>'
                                 '<xs:element name="b" substitutionGroup="a" type="xs:int"/>'),
        # XML007: complex content extending a type with a sequence (reach) / a simple-content type (trigger)
        "XML007.reach": schema('<xs:complexType name="B"><xs:sequence><xs:element name="x" type="xs:int"/>'
                               '</xs:sequence></xs:complexType><xs:complexType name="D"><xs:complexContent>'
                               '<xs:extension base="B"><xs:sequence><xs:element name="y" type="xs:int"/>'
                               '</xs:sequence></xs:extension></xs:complexContent></xs:complexType>'),
        "XML007.trigger": schema('<xs:complexType name="B"><xs:simpleContent><xs:extension base="xs:string"/>'
                                 '</xs:simpleContent></xs:complexType><xs:complexType name="D"><xs:complexContent>'
                                 '<xs:extension base="B"><xs:sequence><xs:element name="y" type="xs:int"/>'
                                 '</xs:sequence></xs:extension></xs:complexContent></xs:complexType>'),
        # XML008: content that does not match its DTD model (reach) / with a 1000-byte prefix and a
        # 1500-byte name, so the second child fits each check alone but not both (trigger)
        "XML008.reach": doc('<!DOCTYPE r [<!ELEMENT r (x)><!ELEMENT y EMPTY>]><r><y/></r>', DTDVALID),
        "XML008.trigger": doc(f'<!DOCTYPE r [<!ELEMENT r (x)>]><r xmlns:{long_prefix}="urn:p">'
                              + f"<{long_prefix}:{long_name}/>" * 3 + "</r>", DTDVALID),
        # XML009, XML011: an XInclude element met by the reader (reach)
        "XML009.reach": doc(f'<d {XI}><xi:include href="nowhere.xml"/></d>', XINCLUDE),
        "XML011.reach": doc(f'<d {XI}><xi:include href="nowhere.xml"/></d>', XINCLUDE),
        # XML009: an inclusion that fails and has a child: the reader comes back up to it (trigger;
        # AFL++ found one in a pilot campaign at 281 s)
        "XML009.trigger": doc(f'<d {XI}><xi:include href="nowhere.xml"><x/></xi:include></d>', XINCLUDE),
        # XML011: an inclusion of an element that holds an XInclude itself (trigger)
        "XML011.trigger": doc(f'<d {XI}><xi:include xpointer="xpointer(//e)"/><e><xi:include href="nowhere.xml"/>'
                              '</e></d>', XINCLUDE),
        # XML010: an IDC field with the attribute:: axis (reach) / a selector with child:: (trigger)
        "XML010.reach": schema('<xs:element name="r"><xs:complexType><xs:attribute name="b"/></xs:complexType>'
                               '<xs:unique name="u"><xs:selector xpath="."/><xs:field xpath="attribute::b"/>'
                               '</xs:unique></xs:element>'),
        "XML010.trigger": schema('<xs:element name="r"><xs:complexType><xs:sequence><xs:element name="a"/>'
                                 '</xs:sequence></xs:complexType><xs:unique name="u">'
                                 '<xs:selector xpath="child::a"/><xs:field xpath="."/></xs:unique></xs:element>'),
    }
    library(HERE.name).write_inputs(seeds=seeds, inputs=inputs)


if __name__ == "__main__":
    main()
