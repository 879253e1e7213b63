/**
 * The chaos suite's HTTP client: every request it makes is counted, timed and classified, so the
 * suite can say how many requests it made, how they were answered, and how long they took.
 * Requests that get no answer (the server was killed) are counted apart from answers: they are
 * what a fault looks like to a client, not an error of the service.
 */
export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly body: any;
  readonly headers: Headers;
}

export class NoAnswer extends Error {}

export interface Traffic {
  /** Requests sent, answered or not. */
  requests: number;
  /** Requests that got no answer (connection refused or cut). */
  unanswered: number;
  readonly statuses: Map<number, number>;
  /** Milliseconds of every answered request, by the label the caller gave. */
  readonly latencies: Map<string, number[]>;
  /** Answers of 500 and above, with what was asked (a 503 while the database restarts is counted, not listed). */
  readonly serverErrors: string[];
}

export function newTraffic(): Traffic {
  return { requests: 0, unanswered: 0, statuses: new Map(), latencies: new Map(), serverErrors: [] };
}

export interface CallOptions {
  readonly key?: string;
  readonly json?: unknown;
  readonly form?: Record<string, string>;
  readonly body?: RequestInit['body'];
  readonly headers?: Record<string, string>;
  /** Groups latencies (e.g. 'poll run'); default: the method. */
  readonly label?: string;
  readonly signal?: AbortSignal;
}

export function caller(traffic: Traffic, base: () => string) {
  return async function call(method: string, route: string, options: CallOptions = {}): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.key !== undefined) headers.authorization = `Basic ${Buffer.from(`${options.key}:`).toString('base64')}`;
    let body = options.body;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    }
    traffic.requests += 1;
    const started = performance.now();
    let response: Response;
    let text: string;
    try {
      const init = { method, headers, body, signal: options.signal ?? AbortSignal.timeout(60_000), duplex: 'half' };
      response = await fetch(`${base()}${route}`, init as RequestInit);
      text = await response.text();
    } catch (error) {
      traffic.unanswered += 1;
      throw new NoAnswer(
        `${method} ${route}: ${(error as { cause?: Error }).cause?.message ?? (error as Error).message}`,
      );
    }
    const took = performance.now() - started;
    const label = options.label ?? method;
    traffic.statuses.set(response.status, (traffic.statuses.get(response.status) ?? 0) + 1);
    (traffic.latencies.get(label) ?? traffic.latencies.set(label, []).get(label)!).push(took);
    if (response.status >= 500 && response.status !== 503)
      traffic.serverErrors.push(`${method} ${route} answered ${response.status}: ${text.slice(0, 200)}`);
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, text, body: parsed, headers: response.headers };
  };
}

export type Call = ReturnType<typeof caller>;

/** The p-th percentile (0..100) of `values`, or NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Retries `work` while it gets no answer or a 503 (the server or its database is coming back). */
export async function patiently<T>(work: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      const result = await work();
      if ((result as { status?: number }).status !== 503) return result;
    } catch (error) {
      if (!(error instanceof NoAnswer)) throw error;
    }
    if (Date.now() - started > timeoutMs)
      throw new Error(`gave up after ${timeoutMs} ms: the server did not come back`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
