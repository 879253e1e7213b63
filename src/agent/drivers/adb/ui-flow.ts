/**
 * Walking a phone through screens toward a goal: dump, recognise, act, then wait for the screen
 * to change, under a deadline for each screen and one for the whole flow, stopping at once on
 * abort. What each screen is and what to do on it is the caller's (google-account.ts); this
 * holds the pacing, the deadlines and how a screen is named when the flow stops on it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type UiAutomator,
  type UiNode,
  type UiTimings,
  fixedTexts,
  screenSignature,
  screenTitle,
} from './ui-automator.ts';

/** The flow cannot go on: a screen that needs a person, one it does not know, or one that never changed. */
export class UiFlowError extends Error {}

export interface Screen {
  readonly nodes: readonly UiNode[];
  /** The package of the window (its root node). */
  readonly packageName: string;
  /** Its first label or heading, with any secret masked: what errors and the log call it. */
  readonly title: string;
  readonly texts: readonly string[];
  readonly signature: string;
}

export type Decision =
  /** Not yet (loading, or not a screen of this flow); the text says what was awaited, should it never come. */
  | { readonly wait: string }
  | { readonly done: true }
  /** What is done, for the log, and doing it. */
  | { readonly act: string; run(): Promise<void> };

export interface UiFlowOptions {
  readonly timings: UiTimings;
  readonly log: (message: string) => void;
  readonly signal?: AbortSignal;
}

export async function runUiFlow(
  ui: UiAutomator,
  flow: string,
  secrets: readonly string[],
  options: UiFlowOptions,
  decide: (screen: Screen) => Decision | Promise<Decision>,
): Promise<void> {
  const { timings, signal } = options;
  const flowDeadline = Date.now() + timings.flowTimeoutMs;
  let screenDeadline = Date.now() + timings.screenTimeoutMs;
  let acted: { signature: string; what: string } | null = null;
  let awaited = 'the first screen';
  let last = '';
  for (;;) {
    signal?.throwIfAborted();
    if (Date.now() >= flowDeadline)
      throw new UiFlowError(
        `${flow} did not finish within ${Math.round(timings.flowTimeoutMs / 1000)} s (last screen: "${last}")`,
      );
    if (Date.now() >= screenDeadline) throw new UiFlowError(`${flow} stopped: ${awaited}`);
    const dump = await ui.dump();
    if (dump.nodes === null) {
      awaited = `UI Automator could not read the screen (${mask(dump.problem, secrets)})`;
    } else {
      const screen = describeScreen(dump.nodes, secrets);
      last = screen.title;
      if (acted !== null && screen.signature === acted.signature) {
        awaited = `the screen "${screen.title}" did not change after ${acted.what}`;
      } else {
        const decision = await decide(screen);
        if ('done' in decision) return;
        if ('wait' in decision) awaited = decision.wait;
        else {
          options.log(`${flow}: "${screen.title}": ${decision.act}`);
          await decision.run();
          acted = { signature: screen.signature, what: decision.act };
          screenDeadline = Date.now() + timings.screenTimeoutMs;
        }
      }
    }
    await sleep(timings.pollMs, undefined, { signal });
  }
}

export function describeScreen(nodes: readonly UiNode[], secrets: readonly string[]): Screen {
  return {
    nodes,
    packageName: nodes[0]?.packageName ?? '',
    title: mask(screenTitle(nodes), secrets),
    texts: fixedTexts(nodes),
    signature: screenSignature(nodes),
  };
}

/** A screen's words go into errors and logs: a secret a screen happened to show must not. */
export function mask(text: string, secrets: readonly string[]): string {
  return secrets.filter((secret) => secret !== '').reduce((masked, secret) => masked.replaceAll(secret, '•••'), text);
}
