/**
 * Writes Android binary XML ("AXML"), the format of AndroidManifest.xml inside an APK: a string
 * pool, a resource map for the android: attributes, then namespace and element chunks. Just
 * enough of the format to produce real manifests for the sample apps, since no Android SDK is
 * available here. Reference: frameworks/base/libs/androidfw/include/androidfw/ResourceTypes.h.
 */
export type AttrValue = string | number | boolean;

export interface Element {
  readonly name: string;
  /** `android:`-namespaced attributes need a resource id (below); plain ones (package) do not. */
  readonly attrs?: Readonly<Record<string, AttrValue>>;
  readonly children?: readonly Element[];
}

const ANDROID_NS = 'http://schemas.android.com/apk/res/android';

/** Resource ids of the android: attributes the samples use (android.R.attr). */
const ATTR_IDS: Readonly<Record<string, number>> = {
  label: 0x01010001,
  icon: 0x01010002,
  name: 0x01010003,
  exported: 0x01010010,
  targetPackage: 0x01010021,
  minSdkVersion: 0x0101020c,
  versionCode: 0x0101021b,
  versionName: 0x0101021c,
  targetSdkVersion: 0x01010270,
};

const RES_XML = 0x0003;
const RES_STRING_POOL = 0x0001;
const RES_RESOURCE_MAP = 0x0180;
const START_NAMESPACE = 0x0100;
const END_NAMESPACE = 0x0101;
const START_ELEMENT = 0x0102;
const END_ELEMENT = 0x0103;
const TYPE_STRING = 0x03;
const TYPE_INT_DEC = 0x10;
const TYPE_INT_BOOLEAN = 0x12;
const NONE = 0xffffffff;

export function encodeAxml(root: Element): Buffer {
  const strings: string[] = [];
  const index = (text: string) => {
    let at = strings.indexOf(text);
    if (at === -1) at = strings.push(text) - 1;
    return at;
  };
  // Attribute names with resource ids come first: the resource map maps string index → id.
  const androidAttrs = new Set<string>();
  const visit = (element: Element) => {
    for (const name of Object.keys(element.attrs ?? {}))
      if (name.startsWith('android:')) androidAttrs.add(name.slice(8));
    element.children?.forEach(visit);
  };
  visit(root);
  const mapped = [...androidAttrs].sort((a, b) => idOf(a) - idOf(b));
  mapped.forEach(index);
  const nsPrefix = index('android');
  const nsUri = index(ANDROID_NS);

  const nodes: Buffer[] = [];
  nodes.push(node(START_NAMESPACE, u32(nsPrefix), u32(nsUri)));
  const write = (element: Element) => {
    const attrs = Object.entries(element.attrs ?? {}).map(([qualified, value]) => {
      const android = qualified.startsWith('android:');
      const name = index(android ? qualified.slice(8) : qualified);
      const [type, data, raw] =
        typeof value === 'string'
          ? [TYPE_STRING, index(value), index(value)]
          : typeof value === 'boolean'
            ? [TYPE_INT_BOOLEAN, value ? NONE : 0, NONE]
            : [TYPE_INT_DEC, value, NONE];
      return Buffer.concat([
        u32(android ? nsUri : NONE),
        u32(name),
        u32(raw),
        u16(8),
        Buffer.from([0, type]),
        u32(data >>> 0),
      ]);
    });
    const elementName = index(element.name);
    const extension = Buffer.concat([
      u32(NONE),
      u32(elementName),
      u16(20),
      u16(20),
      u16(attrs.length),
      u16(0),
      u16(0),
      u16(0),
    ]);
    nodes.push(node(START_ELEMENT, extension, ...attrs));
    element.children?.forEach(write);
    nodes.push(node(END_ELEMENT, u32(NONE), u32(elementName)));
  };
  write(root);
  nodes.push(node(END_NAMESPACE, u32(nsPrefix), u32(nsUri)));

  const pool = stringPool(strings);
  const resourceMap = chunk(RES_RESOURCE_MAP, 8, Buffer.concat(mapped.map((name) => u32(idOf(name)))));
  const body = Buffer.concat([pool, resourceMap, ...nodes]);
  return Buffer.concat([header(RES_XML, 8, 8 + body.length), body]);
}

function idOf(attr: string): number {
  const id = ATTR_IDS[attr];
  if (id === undefined) throw new Error(`no resource id known for android:${attr}`);
  return id;
}

function stringPool(strings: readonly string[]): Buffer {
  const encoded = strings.map((text) => {
    const chars = Buffer.from(text, 'utf16le');
    return Buffer.concat([u16(text.length), chars, u16(0)]);
  });
  const offsets: number[] = [];
  let offset = 0;
  for (const item of encoded) {
    offsets.push(offset);
    offset += item.length;
  }
  let data = Buffer.concat(encoded);
  if (data.length % 4 !== 0) data = Buffer.concat([data, Buffer.alloc(4 - (data.length % 4))]);
  const headerSize = 28;
  const stringsStart = headerSize + 4 * strings.length;
  const fields = Buffer.concat([u32(strings.length), u32(0), u32(0), u32(stringsStart), u32(0)]);
  return Buffer.concat([
    header(RES_STRING_POOL, headerSize, stringsStart + data.length),
    fields,
    ...offsets.map(u32),
    data,
  ]);
}

function node(type: number, ...parts: Buffer[]): Buffer {
  // line number 1, no comment
  return chunk(type, 16, Buffer.concat([u32(1), u32(NONE), ...parts]));
}

function chunk(type: number, headerSize: number, body: Buffer): Buffer {
  return Buffer.concat([header(type, headerSize, 8 + body.length), body]);
}

function header(type: number, headerSize: number, size: number): Buffer {
  return Buffer.concat([u16(type), u16(headerSize), u32(size)]);
}

function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16LE(value);
  return buffer;
}

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value >>> 0);
  return buffer;
}
