import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { InvalidParameterError } from '../../src/domain/errors.ts';
import { checkHookUrl, hookDestinationRules } from '../../src/domain/hook-destinations.ts';
import { HookRefusedError, checkedLookup, postHook } from '../../src/jobs/hook-sender.ts';

const rules = hookDestinationRules();

describe('hook destinations', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['169.254.169.254', 'link-local'],
    ['169.254.170.2', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fd00:ec2::254', 'unique local'],
    ['168.63.129.16', 'metadata'],
    ['100.100.100.200', 'carrier-grade NAT'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.192', 'metadata'],
    ['198.18.0.1', 'reserved'],
    // IPv4 inside IPv6: mapped (both spellings), NAT64, IPv4-compatible, 6to4.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.1.2.3', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['::7f00:1', 'loopback'],
    ['::192.168.0.1', 'private'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:a9fe:a9fe::', 'link-local'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(rules.refusal(address)).toContain(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('allows %s, outside any internal network', (address) => {
    expect(rules.refusal(address)).toBeNull();
  });

  it('allows the networks the operator lists, and only those', () => {
    const allowing = hookDestinationRules(['127.0.0.0/8', '10.20.0.0/16', 'fd00::/8']);
    for (const address of ['127.0.0.1', '::ffff:127.0.0.1', '10.20.3.4', 'fd00::1'])
      expect(allowing.refusal(address), address).toBeNull();
    for (const address of ['::1', '10.21.0.1', '169.254.169.254', 'fc00::1'])
      expect(allowing.refusal(address), address).not.toBeNull();
  });

  it.each([
    'http://127.0.0.1:5432/',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://0x7f000001/',
    'http://0177.0.0.1/',
    'http://017700000001/',
    'http://%31%32%37.0.0.1/',
    'http://127.0.0.1.:8080/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://0/',
    'https://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'http://10.0.0.5/hook',
    'http://localhost:8080/',
    'http://LOCALHOST./',
    'http://api.localhost/',
  ])('refuses %s at run start, naming hookURL', (url) => {
    let error: unknown;
    try {
      checkHookUrl(url, rules);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as Error).message).toMatch(/^Parameter 'hookURL' points at .+, an? .*address.*--hook-allow-networks/);
  });

  it('leaves names to the check at send time, and lets allowed addresses through', () => {
    expect(() => checkHookUrl('https://ci.example.com/hook', rules)).not.toThrow();
    expect(() => checkHookUrl('http://8.8.8.8/hook', rules)).not.toThrow();
    expect(() => checkHookUrl('http://127.0.0.1:9/hook', hookDestinationRules(['127.0.0.1']))).not.toThrow();
    expect(() => checkHookUrl('http://localhost:9/hook', hookDestinationRules(['127.0.0.0/8']))).not.toThrow();
  });

  it('answers a socket lookup with the allowed addresses only, or a refusal', async () => {
    const answers: Record<string, Array<{ address: string; family: number }>> = {
      mixed: [
        { address: '127.0.0.1', family: 4 },
        { address: '8.8.8.8', family: 4 },
        { address: 'fd00::1', family: 6 },
        { address: '2001:4860:4860::8888', family: 6 },
      ],
      internal: [
        { address: '169.254.169.254', family: 4 },
        { address: '::1', family: 6 },
      ],
    };
    const lookup = checkedLookup(rules, (name, callback) => callback(null, answers[name] ?? []));
    const ask = (name: string, options: { all?: boolean; family?: number }) =>
      new Promise<unknown>((resolve) =>
        lookup(name, options as never, (error: Error | null, address: unknown, family?: number) =>
          resolve(error ?? { address, family }),
        ),
      );
    expect(await ask('mixed', { all: true })).toEqual({
      address: [
        { address: '8.8.8.8', family: 4 },
        { address: '2001:4860:4860::8888', family: 6 },
      ],
      family: undefined,
    });
    expect(await ask('mixed', {})).toEqual({ address: '8.8.8.8', family: 4 });
    expect(await ask('mixed', { family: 6 })).toEqual({ address: '2001:4860:4860::8888', family: 6 });
    const refused = (await ask('internal', { all: true })) as Error;
    expect(refused.message).toBe(
      'refused: internal resolves to 169.254.169.254, a link-local address (cloud metadata services live there)',
    );
    expect((refused as Error & { code: string }).code).toBe('EHOOKREFUSED');
  });
});

describe('sending a hook', () => {
  const request = (url: string, resolved: string[]) => ({
    url,
    body: new URLSearchParams({ testRunId: '1' }),
    timeoutMs: 5000,
    rules,
    resolve: (
      _name: string,
      callback: (error: Error | null, addresses: Array<{ address: string; family: number }>) => void,
    ) =>
      callback(
        null,
        resolved.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      ),
  });

  it.each(['http', 'https'])(
    'refuses over %s before any connection, whether the address is in the URL or resolved',
    async (scheme) => {
      await expect(postHook(request(`${scheme}://ci.example.test/hook`, ['10.0.0.7', 'fd00::7']))).rejects.toThrow(
        new HookRefusedError('refused: ci.example.test resolves to 10.0.0.7, a private address'),
      );
      await expect(postHook(request(`${scheme}://[::ffff:a9fe:a9fe]/hook`, []))).rejects.toThrow(
        new HookRefusedError(
          'refused: [::ffff:a9fe:a9fe] is a link-local address (cloud metadata services live there)',
        ),
      );
      await expect(postHook(request(`${scheme}://localhost:1/hook`, ['127.0.0.1']))).rejects.toBeInstanceOf(
        HookRefusedError,
      );
    },
  );
});

describe('--hook-allow-networks', () => {
  it('is none by default, and takes networks and addresses separated by commas', () => {
    expect(loadConfig({ env: {} }).hookAllowNetworks).toEqual([]);
    expect(
      loadConfig({ env: { DEVICECLOUD_HOOK_ALLOW_NETWORKS: '10.20.0.0/16, 127.0.0.1,fd00::/8' } }).hookAllowNetworks,
    ).toEqual(['10.20.0.0/16', '127.0.0.1/32', 'fd00::/8']);
    expect(loadConfig({ flags: { hookAllowNetworks: '' } }).hookAllowNetworks).toEqual([]);
  });

  it.each(['10.0.0.0/33', 'example.com', '10.0.0.0/8/8', 'fd00::/129', '10.0.0.0/x'])(
    'stops the start on %s, naming the setting',
    (value) => {
      expect(() => loadConfig({ flags: { hookAllowNetworks: value } })).toThrow(
        /^Invalid --hook-allow-networks: .* must be networks separated by commas/,
      );
    },
  );
});
