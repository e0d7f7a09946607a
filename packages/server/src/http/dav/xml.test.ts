import { DOMParser, type Element } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';
import { XmlScan } from './xml.js';

/** Elements and attributes (namespace declarations included) as the parser sees them. */
function parsedCount(xml: string): { nodes: number; depth: number } {
  const doc = new DOMParser().parseFromString(xml, 'application/xml');
  let nodes = 0;
  let depth = 0;
  const walk = (el: Element, d: number) => {
    nodes += 1 + el.attributes.length;
    depth = Math.max(depth, d);
    for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) walk(n as Element, d + 1);
  };
  walk(doc.documentElement!, 1);
  return { nodes, depth };
}

const DOCUMENTS = [
  '<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>',
  '<D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:a attr=\'x>y/\' b="/>">t &lt; u</Z:a></D:prop></D:set></D:propertyupdate>',
  '<a><!-- <b><c> --><![CDATA[<d><e/></d>]]><?pi <f> ?><g x="1"\n  y="2" /><h></h ></a>',
  '<a>é<b>ü€😀</b><c\tz = "1"/></a>',
];

describe('XmlScan', () => {
  it.each(DOCUMENTS)('counts what the parser builds, fed whole or byte by byte: %s', (xml) => {
    const expected = parsedCount(xml);
    const bytes = Buffer.from(xml);
    for (const pieces of [[bytes], [...bytes].map((b) => Buffer.from([b]))]) {
      const scan = new XmlScan({ bytes: 1 << 20, depth: 100, nodes: 1000 });
      let deepest = 0;
      for (const piece of pieces) {
        scan.feed(piece);
        deepest = Math.max(deepest, scan.depth);
      }
      expect(scan.nodes).toBe(expected.nodes);
      expect(scan.depth).toBe(0);
      if (pieces.length > 1) expect(deepest).toBe(expected.depth);
    }
  });

  it('refuses a declaration, and stops at the first byte past a bound', () => {
    expect(() => new XmlScan({ bytes: 100, depth: 10, nodes: 10 }).feed(Buffer.from('<!DOCTYPE a>'))).toThrow(
      'document type declaration',
    );
    const deep = new XmlScan({ bytes: 1 << 20, depth: 3, nodes: 100 });
    expect(() => deep.feed(Buffer.from('<a><b><c><d>'))).toThrow('nested deeper than 3');
    const wide = new XmlScan({ bytes: 1 << 20, depth: 3, nodes: 4 });
    expect(() => wide.feed(Buffer.from('<a x="1" y="2"><b/><c/>'))).toThrow(
      'too many elements and attributes',
    );
  });
});
