/**
 * The test packages of the hostile-tenant scenario. The attacker's `run-tests.sh` tries, from
 * inside its device run, each way a tenant's code has been seen to reach what is not its own, and
 * reports each as a JUnit test case: passed when the attempt was refused, failed with the word
 * BREACH and its evidence when it worked. What it cannot see from inside (a file it left in the
 * host's /tmp, a daemon that outlived it, a poisoned cache used by the next run) the scenario checks
 * from outside. The attacker knows the cloud's layout on the host, as anyone reading the docs does:
 * it is given as run parameters (TARGET, SERVER_PORT).
 */
import { zip } from '../../test/support/zips.ts';

/** What the honest user's tests report: their own test case, named after their run's secret. */
export const HONEST_SCRIPT = `set -eu
mkdir -p "$OUTPUT_DIR"
echo '<testsuite name="honest" tests="1"><testcase classname="honest.Checkout" name="paysWithCard"/></testsuite>' > "$OUTPUT_DIR/junit.xml"
[ -n "\${SECRET:-}" ] && echo "the secret is in this run's own environment only" > "$OUTPUT_DIR/note.txt"
# Like many tests, it leaves a file on the device (virtual devices: $DEVICE_STORAGE).
if [ -n "\${DEVICE_STORAGE:-}" ]; then echo "notes of the honest user: \${SECRET:-}" > "$DEVICE_STORAGE/honest-notes.txt"; fi
`;

/** Put in place of the victim's cached package: if it ever runs, the victim's results say so and the secret leaks. */
const POISON_SCRIPT = `mkdir -p "$OUTPUT_DIR"
echo "<testsuite name=\\"poisoned\\" tests=\\"1\\"><testcase classname=\\"attack\\" name=\\"POISONED-\${SECRET:-none}\\"/></testsuite>" > "$OUTPUT_DIR/junit.xml"
`;

/** The marker in the command line of the daemon the attacker leaves behind (looked for on the host afterwards). */
export const DAEMON_MARK = 'devicecloud-attack-daemon';
/** The file the attacker tries to leave in the host's /tmp (looked for on the host afterwards). */
export const TMP_MARK = '/tmp/devicecloud-attack-was-here';

const ATTACK_SCRIPT = `set -u
cases=""
breach() { cases="$cases<testcase classname=\\"attack\\" name=\\"$1\\"><failure message=\\"BREACH: $(printf '%s' "$2" | head -c 200 | tr -cd '[:alnum:] ._/:=,-')\\"/></testcase>"; }
refused() { cases="$cases<testcase classname=\\"attack\\" name=\\"$1\\"/>"; }
T="\${TARGET:-/nonexistent}"

# The agent's token, from any process's environment it can see, or its own.
found=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -m1 -o '^DEVICECLOUD_[A-Z_]*' || true)
if [ -n "$found" ]; then breach agent-environment "$found"; else refused agent-environment; fi

# The server's database (SQLite on the same host, as with devicecloud local).
if head -c 15 "$T/server/devicecloud.db" 2>/dev/null | grep -q 'SQLite format'; then breach server-database "read $T/server/devicecloud.db"; else refused server-database; fi

# The agent's input cache: the victim's package replaced by the attacker's.
poisoned=""
for f in $(find "$T" -path '*/cache/*' -type f 2>/dev/null); do
  [ -f "$f" ] || continue
  case "$f" in *.part) continue;; esac
  cp poison.zip "$f" 2>/dev/null && poisoned="$poisoned $(basename "$f")"
done
if [ -n "$poisoned" ]; then breach input-cache "overwrote$poisoned"; else refused input-cache; fi

# What the previous run left on the device (its user's files in the device's storage).
if [ -n "\${DEVICE_STORAGE:-}" ] && [ -s "$DEVICE_STORAGE/honest-notes.txt" ]; then breach device-storage "read the last run's honest-notes.txt"; else refused device-storage; fi

# Other runs' folders on the host (their scripts and results).
others=$(find "$T" -path '*/work/*' -name run-tests.sh -not -path "$PWD/*" 2>/dev/null | head -3 | tr '\\n' ' ')
if [ -n "$others" ]; then breach other-runs "$others"; else refused other-runs; fi

# The server's blob store.
if touch "$T/server/blobs/attack" 2>/dev/null; then breach server-blobs "wrote $T/server/blobs/attack"; else refused server-blobs; fi

# The database hard-linked into the output folder, to come back as an artifact.
mkdir -p "$OUTPUT_DIR"
if ln "$T/server/devicecloud.db" "$OUTPUT_DIR/stolen.db" 2>/dev/null; then breach hard-link "linked the database into the output"; else refused hard-link; fi

# The host's own services: the API, the agent protocol, PostgreSQL.
for port in "\${SERVER_PORT:-8080}" 5432; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then breach "loopback-$port" "connected to 127.0.0.1:$port"; else refused "loopback-$port"; fi
done

# Other phones on the host, through the ADB server the script is given (adb driver).
if [ -n "\${ADB_SERVER_SOCKET:-}" ]; then
  adb=$(python3 adb-probe.py 2>&1 | tail -1)
  case "$adb" in
    "own yes listed  reached  killed no") refused adb-other-phones;;
    *) breach adb-other-phones "$adb";;
  esac
fi

# A file in the host's /tmp, and a daemon that outlives the run (both checked from outside).
touch ${TMP_MARK} 2>/dev/null || true
( setsid bash -c 'exec -a ${DAEMON_MARK} sleep 300' </dev/null >/dev/null 2>&1 & ) &
refused left-behind-checked-outside

echo "<testsuite name=\\"attacks\\">$cases</testsuite>" > "$OUTPUT_DIR/junit.xml"
`;

/**
 * Speaks the ADB server protocol (4 hex digits of length, then the request) to $ADB_SERVER_SOCKET:
 * which serials it lists besides the script's own, which of the host's other phones (ADB_SERIALS,
 * known to the attacker) it can select, and whether it can kill the host's ADB server. Prints
 * "own yes|no listed <serials> reached <serials> killed yes|no": its own phone must be there
 * (else the probe proved nothing), and nothing else.
 */
const ADB_PROBE = String.raw`import os, socket
spec = os.environ['ADB_SERVER_SOCKET']
own = os.environ.get('DEVICE_SERIAL', '')
def connect():
    kind, _, rest = spec.partition(':')
    if kind == 'tcp':
        host, _, port = rest.rpartition(':')
        return socket.create_connection((host or '127.0.0.1', int(port)), timeout=5)
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(rest)
    return s
def ask(text):
    s = connect()
    s.sendall(b'%04x' % len(text) + text.encode())
    status = s.recv(4)
    return s, status
def read_exactly(s, n):
    data = b''
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data
listed, reached, killed, mine = [], [], 'no', 'no'
try:
    s, status = ask('host:devices')
    if status == b'OKAY':
        listing = read_exactly(s, int(read_exactly(s, 4), 16)).decode()
        serials = [line.split('\t')[0] for line in listing.splitlines() if line]
        mine = 'yes' if own in serials else 'no'
        listed = [serial for serial in serials if serial != own]
    s.close()
    for serial in os.environ.get('ADB_SERIALS', '').split():
        if serial == own:
            continue
        s, status = ask('host:transport:' + serial)
        if status == b'OKAY':
            reached.append(serial)
        s.close()
    s, status = ask('host:kill')
    s.close()
    if status == b'OKAY':
        killed = 'yes'
except Exception as error:
    print('probe error', error)
print('own', mine, 'listed', ' '.join(listed), 'reached', ' '.join(reached), 'killed', killed)
`;

/** The attacker's package: the attack script, and the package it puts in the victim's place. */
export async function attackPackage(): Promise<Buffer> {
  const poison = await zip([['run-tests.sh', POISON_SCRIPT, 0o100755]]);
  return zip([
    ['run-tests.sh', ATTACK_SCRIPT, 0o100755],
    ['poison.zip', poison],
    ['adb-probe.py', ADB_PROBE],
  ]);
}

export function honestPackage(): Promise<Buffer> {
  return zip([['run-tests.sh', HONEST_SCRIPT, 0o100755]]);
}

/** JUnit the server used to refuse (a 5,000-character name, a 200 KB message, a 2 MB stack trace): cut, never dropped. */
export function oversizeResultPackage(): Promise<Buffer> {
  const script = `set -eu
mkdir -p "$OUTPUT_DIR"
name=$(head -c 5000 /dev/zero | tr '\\0' n)
message=$(head -c 200000 /dev/zero | tr '\\0' m)
{
  printf '<testsuite name="oversize" tests="2"><testcase classname="oversize" name="%s"><failure message="%s">' "$name" "$message"
  head -c 2000000 /dev/zero | tr '\\0' s
  printf '</failure></testcase><testcase classname="oversize" name="small"/></testsuite>'
} > "$OUTPUT_DIR/junit.xml"
`;
  return zip([['run-tests.sh', script, 0o100755]]);
}

/** A package whose script crashes at once: the customer's fault, not the device's. */
export function crashingPackage(): Promise<Buffer> {
  return zip([['run-tests.sh', 'kill -SEGV $$\n', 0o100755]]);
}
