// Just enough XML to follow the TwiML a voice agent platform answers with: <Connect><Stream> (with
// <Parameter name value> children), <Dial>, <Hangup/>, <Reject/>, <Say>, <Pause>, <Redirect>.
// Anything else is reported as unsupported, and the call moves on, as Twilio skips what it cannot run.

export type TwimlVerb =
  | { verb: 'stream'; url: string; parameters: Record<string, string> }
  | { verb: 'dial'; number: string }
  | { verb: 'hangup' }
  | { verb: 'reject'; reason: string }
  | { verb: 'say'; text: string }
  | { verb: 'pause'; seconds: number }
  | { verb: 'redirect'; url: string; method: string }
  | { verb: 'unsupported'; name: string };

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

export class TwimlError extends Error {}

/** The verbs of a TwiML document, in order. Throws TwimlError (Twilio's 12100) when it is not TwiML. */
export function parseTwiml(xml: string): TwimlVerb[] {
  const root = parseXml(xml);
  if (root.name !== 'Response') throw new TwimlError(`the root element is <${root.name}>, not <Response>`);
  return root.children.map(toVerb);
}

function toVerb(element: XmlElement): TwimlVerb {
  switch (element.name) {
    case 'Connect': {
      const stream = element.children.find((child) => child.name === 'Stream');
      if (!stream?.attributes.url) return { verb: 'unsupported', name: 'Connect without <Stream url>' };
      const parameters: Record<string, string> = {};
      for (const parameter of stream.children.filter((child) => child.name === 'Parameter')) {
        if (parameter.attributes.name !== undefined) parameters[parameter.attributes.name] = parameter.attributes.value ?? '';
      }
      return { verb: 'stream', url: stream.attributes.url, parameters };
    }
    case 'Dial': {
      // <Dial>+1555…</Dial> or <Dial><Number>+1555…</Number></Dial>
      const nested = element.children.find((child) => child.name === 'Number' || child.name === 'Sip' || child.name === 'Client');
      return { verb: 'dial', number: (nested?.text ?? element.text).trim() };
    }
    case 'Hangup':
      return { verb: 'hangup' };
    case 'Reject':
      return { verb: 'reject', reason: element.attributes.reason ?? 'rejected' };
    case 'Say':
      return { verb: 'say', text: element.text.trim() };
    case 'Pause':
      return { verb: 'pause', seconds: Number(element.attributes.length ?? '1') || 1 };
    case 'Redirect':
      return { verb: 'redirect', url: element.text.trim(), method: element.attributes.method ?? 'POST' };
    default:
      return { verb: 'unsupported', name: element.name };
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, entity: string) => {
    if (entity[0] === '#') {
      const code = entity[1].toLowerCase() === 'x' ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1));
      return Number.isFinite(code) ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[entity] ?? whole;
  });
}

const TOKEN = /<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[([\s\S]*?)\]\]>|<(\/?)([\w:.-]+)((?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)/g;
const ATTRIBUTE = /([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

/** A small non-validating XML reader: elements, attributes, text, CDATA; comments and prologs skipped. */
function parseXml(xml: string): XmlElement {
  const document: XmlElement = { name: '#document', attributes: {}, children: [], text: '' };
  const open: XmlElement[] = [document];
  let consumed = 0;
  for (const match of xml.matchAll(TOKEN)) {
    if (match.index !== consumed) throw new TwimlError(`unreadable XML at offset ${consumed}`);
    consumed = match.index + match[0].length;
    const [, cdata, closing, name, attributeText, selfClosing, text] = match;
    const current = open[open.length - 1];
    if (cdata !== undefined) current.text += cdata;
    else if (text !== undefined) current.text += decodeEntities(text);
    else if (name === undefined) continue;
    else if (closing) {
      if (current.name !== name) throw new TwimlError(`</${name}> closes <${current.name}>`);
      open.pop();
    } else {
      const element: XmlElement = { name, attributes: readAttributes(attributeText ?? ''), children: [], text: '' };
      current.children.push(element);
      if (!selfClosing) open.push(element);
    }
  }
  if (consumed !== xml.length) throw new TwimlError(`unreadable XML at offset ${consumed}`);
  if (open.length !== 1) throw new TwimlError(`<${open[open.length - 1].name}> is never closed`);
  if (document.children.length !== 1) throw new TwimlError('a TwiML document has exactly one root element');
  return document.children[0];
}

function readAttributes(text: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of text.matchAll(ATTRIBUTE)) attributes[match[1]] = decodeEntities(match[2] ?? match[3] ?? '');
  return attributes;
}
