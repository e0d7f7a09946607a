import { HighlightStyle } from '@codemirror/language';
import { tags } from '@lezer/highlight';

/*
 * CodeMirror's default (light) and One Dark's syntax colours, with the few that fall under 4.5:1
 * (WCAG AA) on the editor's surface or its active line brought up to it. Only those colours
 * differ; the tag groups are theirs, so code looks as it did.
 */

export const lightHighlightStyle = HighlightStyle.define([
  { tag: tags.meta, color: '#404740' },
  { tag: tags.link, textDecoration: 'underline' },
  { tag: tags.heading, textDecoration: 'underline', fontWeight: 'bold' },
  { tag: tags.emphasis, fontStyle: 'italic' },
  { tag: tags.strong, fontWeight: 'bold' },
  { tag: tags.strikethrough, textDecoration: 'line-through' },
  { tag: tags.keyword, color: '#708' },
  { tag: [tags.atom, tags.bool, tags.url, tags.contentSeparator, tags.labelName], color: '#219' },
  { tag: [tags.literal, tags.inserted], color: '#164' },
  { tag: [tags.string, tags.deleted], color: '#a11' },
  // #e40 in CodeMirror's style: 3.8:1.
  { tag: [tags.regexp, tags.escape, tags.special(tags.string)], color: '#b83600' },
  { tag: tags.definition(tags.variableName), color: '#00f' },
  { tag: tags.local(tags.variableName), color: '#30a' },
  // #085: 4.1:1 on the active line.
  { tag: [tags.typeName, tags.namespace], color: '#00704a' },
  { tag: tags.className, color: '#167' },
  { tag: [tags.special(tags.variableName), tags.macroName], color: '#256' },
  { tag: tags.definition(tags.propertyName), color: '#00c' },
  { tag: tags.comment, color: '#940' },
  // #f00: 4.0:1.
  { tag: tags.invalid, color: '#d00000' },
]);

const chalky = '#e5c07b';
// One Dark's coral (#e06c75) and stone (#7d8799) are 4.4:1 and 3.9:1 on the active line.
const coral = '#e8777f';
const cyan = '#56b6c2';
const ivory = '#abb2bf';
const stone = '#939cac';
const malibu = '#61afef';
const sage = '#98c379';
const whiskey = '#d19a66';
const violet = '#c678dd';

export const darkHighlightStyle = HighlightStyle.define([
  { tag: tags.keyword, color: violet },
  { tag: [tags.name, tags.deleted, tags.character, tags.propertyName, tags.macroName], color: coral },
  { tag: [tags.function(tags.variableName), tags.labelName], color: malibu },
  { tag: [tags.color, tags.constant(tags.name), tags.standard(tags.name)], color: whiskey },
  { tag: [tags.definition(tags.name), tags.separator], color: ivory },
  {
    tag: [
      tags.typeName,
      tags.className,
      tags.number,
      tags.changed,
      tags.annotation,
      tags.modifier,
      tags.self,
      tags.namespace,
    ],
    color: chalky,
  },
  {
    tag: [
      tags.operator,
      tags.operatorKeyword,
      tags.url,
      tags.escape,
      tags.regexp,
      tags.link,
      tags.special(tags.string),
    ],
    color: cyan,
  },
  { tag: [tags.meta, tags.comment], color: stone },
  { tag: tags.strong, fontWeight: 'bold' },
  { tag: tags.emphasis, fontStyle: 'italic' },
  { tag: tags.strikethrough, textDecoration: 'line-through' },
  { tag: tags.link, color: stone, textDecoration: 'underline' },
  { tag: tags.heading, fontWeight: 'bold', color: coral },
  { tag: [tags.atom, tags.bool, tags.special(tags.variableName)], color: whiskey },
  { tag: [tags.processingInstruction, tags.string, tags.inserted], color: sage },
  { tag: tags.invalid, color: '#ffffff' },
]);
