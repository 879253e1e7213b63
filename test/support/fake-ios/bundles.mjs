/**
 * Reads what the fake installs: a signed .app folder (what `ios sign app` makes) or an .ipa (what
 * zsign makes): the Info.plist, the embedded profile, the signature, and the XCTest bundles in
 * PlugIns with their Info.plist (a bundle's DCFakeScenario names the recorded run it replays).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse, parseBinary } from 'plist';
import yauzl from 'yauzl';

function parsePlist(data) {
  return data.subarray(0, 8).toString('latin1') === 'bplist00' ? parseBinary(data) : parse(data.toString('utf8'));
}

export function profileOf(data) {
  if (!data) return null;
  const text = data.toString('latin1');
  const start = text.indexOf('<?xml');
  const end = text.indexOf('</plist>');
  if (start === -1 || end === -1) return null;
  return parse(data.subarray(start, end + 8).toString('utf8'));
}

function readZip(file) {
  return new Promise((resolve, reject) => {
    const files = new Map();
    yauzl.open(file, { lazyEntries: true }, (error, zip) => {
      if (error) return reject(error);
      zip.on('entry', (entry) => {
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError) return reject(streamError);
          const chunks = [];
          stream.on('data', (chunk) => chunks.push(chunk));
          stream.on('end', () => {
            files.set(entry.fileName, Buffer.concat(chunks));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(files));
      zip.readEntry();
    });
  });
}

/** The files of the bundle, by path relative to the .app folder. */
async function bundleFiles(target) {
  const files = new Map();
  if (fs.statSync(target).isDirectory()) {
    const walk = (dir) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else files.set(path.relative(target, full), fs.readFileSync(full));
      }
    };
    walk(target);
    return { name: path.basename(target), files };
  }
  const zipped = await readZip(target);
  let name = null;
  for (const [entry, data] of zipped) {
    const match = /^Payload\/([^/]+\.app)\/(.+)$/.exec(entry);
    if (!match) continue;
    name = match[1];
    files.set(match[2], data);
  }
  if (name === null) throw new Error('no Payload/<Name>.app in the ipa');
  return { name, files };
}

export async function readInstallable(target) {
  const { name, files } = await bundleFiles(target);
  const info = files.get('Info.plist');
  if (!info) throw new Error(`${name} has no Info.plist`);
  const xctests = {};
  for (const [file, data] of files) {
    const match = /^PlugIns\/([^/]+\.xctest)\/Info\.plist$/.exec(file);
    if (match) xctests[match[1]] = parsePlist(data);
  }
  return {
    name,
    info: parsePlist(info),
    profile: profileOf(files.get('embedded.mobileprovision')),
    signature: files.get('_CodeSignature/CodeResources')?.toString('utf8') ?? null,
    xctests,
  };
}
