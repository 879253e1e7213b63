/**
 * The bubblewrap sandbox (Debian package `bubblewrap`). The script gets new mount, PID, IPC, UTS
 * and cgroup namespaces (and a network namespace of its own, with only its loopback, when the
 * network is `none`), a read-only /usr and a short list of /etc, a fresh /proc of its PID namespace,
 * a private /tmp, minimal /dev, and only the folders the driver hands it, at their own paths.
 * bwrap itself starts with the script's environment only, so nothing of the agent's (its token)
 * is in any /proc/<pid>/environ the script could read.
 *
 * Its uid: where the agent runs as root, bwrap needs no user namespace, and the script drops to a
 * uid of its own per run (uidBase + n, with setpriv), with rlimits set by prlimit; the run's
 * folders are chowned to it first. Otherwise bwrap maps the agent's uid to 65534 in a user
 * namespace: files outside still belong to the agent's user, so only the mount namespace keeps the
 * script from the agent's files. Either way prlimit sets per-process limits on the command (after the
 * uid drop and the driver's launcher, which is the agent's code and counts only toward the totals).
 *
 * When the outer bwrap dies, its child (PID 1 of the namespace) gets SIGKILL (--die-with-parent),
 * and the kernel ends every process of a namespace whose PID 1 ends: nothing the script started,
 * setsid daemons included, outlives the run.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { namespaceProcesses, pidNamespaceOf, signalSession } from './process-tree.ts';
import type { Sandbox, SandboxLimits, SandboxNetwork, SandboxSpec, SandboxedProcess } from './sandbox.ts';

/** What tools commonly read under /etc; nothing secret (no shadow, no ssh keys, no config of ours). */
const ETC_READ_ONLY = [
  'alternatives',
  'ssl',
  'ca-certificates',
  'resolv.conf',
  'hosts',
  'host.conf',
  'nsswitch.conf',
  'gai.conf',
  'localtime',
  'timezone',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'mime.types',
  'protocols',
  'services',
  'os-release',
  'debian_version',
  'magic',
  'bash.bashrc',
  'inputrc',
  'terminfo',
  'profile',
  'java-17-openjdk',
  'java-21-openjdk',
  'python3',
  'perl',
  'fonts',
  'xml',
  'sgml',
].map((name) => path.join('/etc', name));
const SYSTEM_READ_ONLY = ['/usr'];
const MERGED_USR = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

export interface BubblewrapOptions {
  readonly bwrap: string;
  readonly network: SandboxNetwork;
  readonly limits: SandboxLimits;
  /** First uid of the range runs take when the agent is root; one per run at a time. */
  readonly uidBase: number;
  readonly uidCount?: number;
  /** More paths to show read-only (an Android SDK outside /opt, say). */
  readonly extraReadOnly?: readonly string[];
  /** Where the generated /etc/passwd and /etc/group of runs go. */
  readonly stateDir: string;
}

/** The bwrap executable, or undefined when it is not installed. */
export function findBwrap(pathEnv = process.env.PATH ?? ''): string | undefined {
  for (const dir of [...pathEnv.split(':'), '/usr/bin', '/usr/local/bin']) {
    if (dir === '' || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, 'bwrap');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}

export function createBubblewrapSandbox(options: BubblewrapOptions): Sandbox {
  const asRoot = process.getuid?.() === 0;
  const uidCount = options.uidCount ?? 1000;
  const taken = new Set<number>();
  fs.mkdirSync(options.stateDir, { recursive: true });

  const system = [...SYSTEM_READ_ONLY, ...ETC_READ_ONLY, ...(options.extraReadOnly ?? [])].filter((entry) =>
    fs.existsSync(entry),
  );
  const usrLinks = MERGED_USR.filter((name) => isLinkInto(`/${name}`, 'usr'));
  const usrDirs = MERGED_USR.filter((name) => !usrLinks.includes(name) && fs.existsSync(`/${name}`));

  return {
    kind: 'bubblewrap',
    description: `bubblewrap (${asRoot ? `own uid from ${options.uidBase}` : 'user namespace, uid 65534 inside'}, network ${options.network}, limits: ${describeLimits(options.limits)})`,
    network: options.network,
    limits: options.limits,
    spawn(spec) {
      // As root, the run takes a uid of its own, and its folders become its own.
      let uid: number | undefined;
      if (asRoot) {
        uid = options.uidBase;
        while (taken.has(uid)) uid += 1;
        if (uid >= options.uidBase + uidCount) throw new Error(`no free sandbox uid (${uidCount} runs at once)`);
        taken.add(uid);
      }
      try {
        return start(spec, uid);
      } catch (error) {
        // A run that never started gives its uid back.
        if (uid !== undefined) taken.delete(uid);
        throw error;
      }
    },
  };
  function start(spec: SandboxSpec, uid: number | undefined): SandboxedProcess {
    if (uid !== undefined) for (const dir of spec.writable) chownTree(dir, uid);
    const args = [
      '--die-with-parent',
      '--new-session',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      ...(asRoot ? [] : ['--unshare-user', '--uid', '65534', '--gid', '65534', '--disable-userns']),
      ...(options.network === 'none' ? ['--unshare-net'] : []),
      '--hostname',
      'sandbox',
      ...mounts([
        // The private /tmp first: a path to show below /tmp is bound over it, not hidden by it.
        ['--perms', '1777', '--size', String(Math.min(options.limits.diskMb, 1024) * 1024 * 1024), '--tmpfs', '/tmp'],
        ['--proc', '/proc'],
        ['--dev', '/dev'],
        // POSIX shared memory (browsers use it), small: a tmpfs counts in no process's memory.
        [
          '--perms',
          '1777',
          '--size',
          String(Math.min(Math.ceil(options.limits.memoryMb / 4), 256) * 1024 * 1024),
          '--tmpfs',
          '/dev/shm',
        ],
        ...system.map((entry) => ['--ro-bind', entry, entry]),
        ...usrLinks.map((name) => ['--symlink', `usr/${name}`, `/${name}`]),
        ...usrDirs.map((name) => ['--ro-bind', `/${name}`, `/${name}`]),
        ...identityFiles(options.stateDir, uid ?? 65534).map(([file, target]) => ['--ro-bind', file, target]),
        ...spec.readOnly.filter((entry) => fs.existsSync(entry)).map((entry) => ['--ro-bind', entry, entry]),
        ...spec.writable.map((entry) => ['--bind', entry, entry]),
      ]),
      '--chdir',
      spec.cwd,
      '--info-fd',
      '3',
      '--',
      // The uid first, then the agent's launcher, then the customer's rlimits: they bind the command alone.
      ...(asRoot ? dropToUid(uid!) : []),
      ...(spec.launcher ?? []),
      ...rlimits(options.limits),
      ...spec.command,
    ];
    const child = spawn(options.bwrap, args, {
      env: { ...spec.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let namespace: number | undefined;
    let info = '';
    child.stdio[3]?.on('data', (chunk: Buffer) => {
      info += chunk.toString('utf8');
      const pid = /"child-pid":\s*(\d+)/.exec(info)?.[1];
      if (pid !== undefined && namespace === undefined) namespace = pidNamespaceOf(pid);
    });
    child.stdio[3]?.on('error', () => undefined);
    child.once('close', () => uid !== undefined && taken.delete(uid));
    const sid = child.pid;
    const killAll = () => {
      // PID 1 of the namespace goes with its parent, and takes every process inside with it.
      if (sid !== undefined) signalSession(sid, 'SIGKILL');
      if (namespace !== undefined) for (const member of namespaceProcesses(namespace)) safeKill(member.pid, 'SIGKILL');
    };
    return {
      child,
      pid: sid,
      members: () => (namespace === undefined ? [] : namespaceProcesses(namespace)),
      terminate: () => {
        if (namespace === undefined) return killAll();
        // PID 1 (bwrap) is left: it ends when the script does.
        for (const member of namespaceProcesses(namespace))
          if (member.pid !== firstPid(info)) safeKill(member.pid, 'SIGTERM');
      },
      kill: killAll,
    } satisfies SandboxedProcess;
  }
}

/**
 * The mounts in order, each preceded by the folders leading to it that nothing mounted yet: bwrap
 * would make those itself, but as root it makes them 0700, which the script's uid cannot cross.
 */
function mounts(list: readonly string[][]): string[] {
  const done: string[] = [];
  const made = new Set<string>();
  const args: string[] = [];
  const covered = (dir: string) => done.some((target) => dir === target || dir.startsWith(`${target}/`));
  for (const mount of list) {
    const target = mount.at(-1)!;
    const parents: string[] = [];
    for (let dir = path.dirname(target); dir !== '/'; dir = path.dirname(dir)) parents.unshift(dir);
    for (const dir of parents) {
      if (made.has(dir) || covered(dir)) continue;
      made.add(dir);
      args.push('--perms', '0755', '--dir', dir);
    }
    args.push(...mount);
    // Below a bound folder, folders exist with their own modes; below a tmpfs, bwrap makes them.
    if (mount[0] === '--bind' || mount[0] === '--ro-bind') done.push(target);
  }
  return args;
}

/**
 * Limits of each process (prlimit). The process count is per uid: as root the run's uid is its
 * own; in a user namespace the count is kept per namespace (Linux 5.14 and later), so it is the
 * sandbox's either way.
 */
function rlimits(limits: SandboxLimits): string[] {
  return [
    'prlimit',
    `--nproc=${limits.processes}`,
    `--fsize=${limits.diskMb * 1024 * 1024}`,
    // A backstop per process, above the watched total, so that the watcher names the limit first.
    `--data=${limits.memoryMb * 4 * 1024 * 1024}`,
    '--core=0',
    '--',
  ];
}

/** As root: a uid of the run's own, no capabilities (setpriv). */
function dropToUid(uid: number): string[] {
  return [
    'setpriv',
    `--reuid=${uid}`,
    `--regid=${uid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
  ];
}

/** /etc/passwd and /etc/group naming the sandbox's user, for tools that look it up. */
function identityFiles(stateDir: string, uid: number): Array<[string, string]> {
  const passwd = path.join(stateDir, `passwd-${uid}`);
  const group = path.join(stateDir, `group-${uid}`);
  if (!fs.existsSync(passwd))
    fs.writeFileSync(
      passwd,
      `root:x:0:0:root:/nonexistent:/usr/sbin/nologin\ntests:x:${uid}:${uid}:tests:/tmp:/bin/sh\n`,
      { mode: 0o644 },
    );
  if (!fs.existsSync(group)) fs.writeFileSync(group, `root:x:0:\ntests:x:${uid}:\n`, { mode: 0o644 });
  return [
    [passwd, '/etc/passwd'],
    [group, '/etc/group'],
  ];
}

function chownTree(dir: string, uid: number): void {
  fs.chownSync(dir, uid, uid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    try {
      fs.lchownSync(path.join(entry.parentPath, entry.name), uid, uid);
    } catch {
      // removed meanwhile
    }
  }
}

function firstPid(info: string): number | undefined {
  const pid = /"child-pid":\s*(\d+)/.exec(info)?.[1];
  return pid === undefined ? undefined : Number(pid);
}

function safeKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}

function isLinkInto(file: string, target: string): boolean {
  try {
    return fs.lstatSync(file).isSymbolicLink() && fs.readlinkSync(file).replace(/^\//, '').startsWith(target);
  } catch {
    return false;
  }
}

function describeLimits(limits: SandboxLimits): string {
  return `${limits.memoryMb} MiB memory, ${limits.processes} processes, ${limits.cpuSeconds} s CPU, ${limits.diskMb} MiB disk`;
}

/**
 * Whether bubblewrap works here as it will be used: the answer is the reason it does not, or
 * null. Runs `true` in the same kind of sandbox (namespaces, and the uid drop as root).
 */
export function probeBubblewrap(bwrap: string | undefined, stateDir: string): string | null {
  if (bwrap === undefined) return 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap';
  const asRoot = process.getuid?.() === 0;
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-net',
    // Every option runs use, so that an older bwrap that lacks one (--disable-userns and --size came in 0.8) fails here.
    ...(asRoot ? [] : ['--unshare-user', '--uid', '65534', '--gid', '65534', '--disable-userns']),
    '--unshare-cgroup-try',
    '--hostname',
    'sandbox',
    '--perms',
    '1777',
    '--size',
    '1048576',
    '--tmpfs',
    '/tmp',
    '--ro-bind',
    '/usr',
    '/usr',
    ...MERGED_USR.filter((name) => isLinkInto(`/${name}`, 'usr')).flatMap((name) => [
      '--symlink',
      `usr/${name}`,
      `/${name}`,
    ]),
    ...MERGED_USR.filter((name) => !isLinkInto(`/${name}`, 'usr') && fs.existsSync(`/${name}`)).flatMap((name) => [
      '--ro-bind',
      `/${name}`,
      `/${name}`,
    ]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--',
    'prlimit',
    '--nproc=64',
    '--',
    ...(asRoot
      ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--']
      : []),
    'true',
  ];
  try {
    fs.mkdirSync(stateDir, { recursive: true });
    execFileSync(bwrap, args, { env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    return null;
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '')
      .trim()
      .split('\n')[0];
    return `bubblewrap cannot create a sandbox here (${stderr || (error as Error).message}); user namespaces may be off (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or an AppArmor restriction)`;
  }
}
