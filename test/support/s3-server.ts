/**
 * s3rver, the S3 server the tests store blobs in, with one race of its own taken out. It keeps
 * objects as files and, after deleting one, removes the folders the deletion left empty. A put into
 * the same folder at that moment (our blob store puts every upload under `tmp/` and deletes it
 * after the copy) has made the folder and not yet opened its file: the open fails with ENOENT on a
 * stream nobody listens to, and the error is thrown in the test's process. Real S3 has no folders,
 * so the fake keeps its folders instead.
 */
import fs from 'node:fs';
import S3rver from 's3rver';

interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  deleteObject(bucket: string, key: string): Promise<void>;
}

export async function startS3Server(
  directory: string,
): Promise<{ readonly server: S3rver; readonly endpoint: string }> {
  const server = new S3rver({ port: 0, address: '127.0.0.1', directory, silent: true });
  const store = (server as unknown as { store: FilesystemStore }).store;
  store.deleteObject = async (bucket, key) => {
    const files = ['object', 'object.md5', 'metadata.json'].map((resource) =>
      store.getResourcePath(bucket, key, resource),
    );
    await Promise.all(files.map((file) => fs.promises.rm(file, { force: true })));
  };
  const { port } = await server.run();
  return { server, endpoint: `http://127.0.0.1:${port}` };
}
