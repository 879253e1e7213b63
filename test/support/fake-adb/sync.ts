/** The fake phone's file service (`sync:`): STAT, LIST, SEND/DATA/DONE, RECV and QUIT, the first sync protocol. */
import type { Socket } from 'node:net';
import type { FakeDevice } from './device.ts';
import { type SocketReader, syncPacket } from './wire.ts';

const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const SYNC_CHUNK = 64 * 1024;

export async function serveSync(socket: Socket, reader: SocketReader, device: FakeDevice): Promise<void> {
  for (;;) {
    const head = await reader.read(8);
    if (head === null) return;
    const id = head.toString('ascii', 0, 4);
    const length = head.readUInt32LE(4);
    if (id === 'QUIT') {
      socket.end();
      return;
    }
    const argument = (await reader.read(length))?.toString('utf8');
    if (argument === undefined) return;
    device.commands.push(`sync:${id} ${argument}`);
    if (id === 'STAT') {
      const entry = device.files.get(argument);
      const stat = Buffer.alloc(12);
      if (entry !== undefined) {
        stat.writeUInt32LE(entry === null ? S_IFDIR | 0o771 : S_IFREG | 0o644, 0);
        stat.writeUInt32LE(entry?.length ?? 4096, 4);
        stat.writeUInt32LE(Math.floor(Date.now() / 1000), 8);
      }
      socket.write(Buffer.concat([Buffer.from('STAT'), stat]));
    } else if (id === 'LIST') {
      const prefix = `${argument.replace(/\/+$/, '')}/`;
      for (const [file, content] of device.files) {
        if (!file.startsWith(prefix) || file.slice(prefix.length).includes('/')) continue;
        const name = Buffer.from(file.slice(prefix.length));
        const dent = Buffer.alloc(16);
        dent.writeUInt32LE(content === null ? S_IFDIR | 0o771 : S_IFREG | 0o644, 0);
        dent.writeUInt32LE(content?.length ?? 4096, 4);
        dent.writeUInt32LE(Math.floor(Date.now() / 1000), 8);
        dent.writeUInt32LE(name.length, 12);
        socket.write(Buffer.concat([Buffer.from('DENT'), dent, name]));
      }
      socket.write(Buffer.concat([Buffer.from('DONE'), Buffer.alloc(16)]));
    } else if (id === 'SEND') {
      const target = argument.slice(0, argument.lastIndexOf(','));
      const chunks: Buffer[] = [];
      for (;;) {
        const packet = await reader.read(8);
        if (packet === null) return;
        const kind = packet.toString('ascii', 0, 4);
        const size = packet.readUInt32LE(4);
        if (kind === 'DONE') break;
        if (kind !== 'DATA') {
          socket.end(syncPacket('FAIL', 0));
          return;
        }
        const data = await reader.read(size);
        if (data === null) return;
        chunks.push(data);
      }
      device.writeFile(target, Buffer.concat(chunks));
      socket.write(syncPacket('OKAY', 0));
    } else if (id === 'RECV') {
      const content = device.files.get(argument);
      if (content === undefined || content === null) {
        const message = Buffer.from(
          `open failed: ${content === null ? 'Is a directory' : 'No such file or directory'}`,
        );
        socket.write(syncPacket('FAIL', message.length, message));
        continue;
      }
      for (let at = 0; at < content.length; at += SYNC_CHUNK) {
        const part = content.subarray(at, at + SYNC_CHUNK);
        socket.write(syncPacket('DATA', part.length, part));
      }
      socket.write(syncPacket('DONE', 0));
    } else {
      const message = Buffer.from(`unknown sync command ${id}`);
      socket.end(syncPacket('FAIL', message.length, message));
      return;
    }
  }
}
