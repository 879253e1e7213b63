/**
 * The WebDriver relay's in-memory channel (src/services/webdriver-channels.ts): what an agent
 * polling this server takes and answers, what is taken back for the database path, who may
 * answer, and the command log written behind the answers, in order, its failures reported.
 */
import { describe, expect, it } from 'vitest';
import { commandTopic, webDriverChannels } from '../../src/services/webdriver-channels.ts';
import type { LoggedCommand } from '../../src/domain/webdriver.ts';
import { memoryNotifier } from '../../src/store/notifier.ts';

const NO_LOG = { writeLog: async () => undefined };
const answered = (path: string): LoggedCommand => ({
  deviceRunId: 7,
  method: 'GET',
  path,
  body: '',
  status: 200,
  answer: '{"value":null}',
  createTime: 1,
  answerTime: 2,
});
const command = (path: string) => ({ deviceRunId: 7, method: 'GET', path, body: '', createTime: 1 });

describe('WebDriver channels', () => {
  it('hands a command to the agent that polls here, and only its answer resolves the client', async () => {
    const channels = webDriverChannels({ notifier: memoryNotifier() }, NO_LOG);
    const channel = channels.attach(7, 1);
    let woken = false;
    channel.wake = () => (woken = true);
    const sent = channels.send(channel, command('/session/a/source'));
    expect(woken).toBe(true);
    // Its poll was waiting: it takes the command at once, so the hub may wait longer for that.
    expect(sent.polled).toBe(true);
    expect(sent.queued()).toBe(true);
    // Above every database id, so an answer never names the wrong command.
    expect(sent.command.id).toBeGreaterThan(2 ** 52);
    expect(channels.take(channel).map((each) => each.path)).toEqual(['/session/a/source']);
    expect(sent.queued()).toBe(false);
    expect(sent.withdraw()).toBe(false);

    expect(channels.answer(7, 2, sent.command.id, { status: 200, body: 'stolen' })).toBeUndefined();
    expect(channels.answer(8, 1, sent.command.id, { status: 200, body: 'elsewhere' })).toBeUndefined();
    expect(channels.answer(7, 1, sent.command.id, { status: 200, body: '{"value":"<x/>"}' })?.path).toBe(
      '/session/a/source',
    );
    expect(await sent.answer).toEqual({ status: 200, body: '{"value":"<x/>"}' });
    // A repeated answer is not the in-memory command's any more.
    expect(channels.answer(7, 1, sent.command.id, { status: 200, body: 'again' })).toBeUndefined();
    channels.detach(7);
  });

  it('takes back a command no poll took, for the database path; a detached channel is not live', () => {
    const channels = webDriverChannels({ notifier: memoryNotifier() }, NO_LOG);
    const channel = channels.attach(7, 1);
    expect(channels.live(7)).toBe(channel);
    const sent = channels.send(channel, command('/session/a/title'));
    // No poll waits here (the agent is between two polls): its next one may go to another server.
    expect(sent.polled).toBe(false);
    expect(sent.withdraw()).toBe(true);
    expect(sent.queued()).toBe(false);
    expect(channels.take(channel)).toEqual([]);
    channels.remember('a', 7);
    channels.detach(7);
    expect(channels.live(7)).toBeUndefined();
    expect(channels.deviceRunOf('a')).toBeUndefined();
  });

  it('gives a taken command back to the next poll, ahead of newer ones, unless it was answered since', () => {
    const channels = webDriverChannels({ notifier: memoryNotifier() }, NO_LOG);
    const channel = channels.attach(7, 1);
    const first = channels.send(channel, command('/session/a/title'));
    const answered = channels.send(channel, command('/session/a/url'));
    expect(channels.take(channel)).toHaveLength(2);
    channels.answer(7, 1, answered.command.id, { status: 200, body: '{"value":"u"}' });
    const later = channels.send(channel, command('/session/a/source'));
    let woken = false;
    channel.wake = () => (woken = true);
    channels.giveBack(7, [first.command.id, answered.command.id]);
    expect(woken).toBe(true);
    expect(channels.take(channel).map((each) => each.id)).toEqual([first.command.id, later.command.id]);
    channels.giveBack(8, [first.command.id]);
    expect(channels.take(channel)).toEqual([]);
    channels.detach(7);
  });

  it('is told when commands wait in the database, so that the poll looks there', async () => {
    const notifier = memoryNotifier();
    const channels = webDriverChannels({ notifier }, NO_LOG);
    const channel = channels.attach(7, 1);
    channel.dirty = false;
    const woken = new Promise<void>((resolve) => (channel.wake = resolve));
    // The watcher listens from the next tick on.
    await new Promise((resolve) => setImmediate(resolve));
    notifier.notify(commandTopic(7));
    await woken;
    expect(channel.dirty).toBe(true);
    // Closing stops the watcher: its wait would otherwise hold the process for up to a minute.
    channels.close();
    expect(channel.stop.signal.aborted).toBe(true);
    expect(channels.live(7)).toBeUndefined();
  });

  it('follows its context to another notifier, dropping the channels of the one before', async () => {
    // The tests' app pool hands one app from test to test: each with its own store and notifier.
    const source = { notifier: memoryNotifier() };
    const channels = webDriverChannels(source, NO_LOG);
    const before = channels.attach(7, 1);
    channels.remember('a', 7);
    source.notifier = memoryNotifier();
    expect(channels.of(7, 1)).toBeUndefined();
    expect(before.stop.signal.aborted).toBe(true);
    expect(channels.deviceRunOf('a')).toBeUndefined();
    const after = channels.attach(7, 1);
    expect(after).not.toBe(before);
    after.dirty = false;
    const woken = new Promise<void>((resolve) => (after.wake = resolve));
    await new Promise((resolve) => setImmediate(resolve));
    source.notifier.notify(commandTopic(7));
    await woken;
    expect(after.dirty).toBe(true);
    channels.close();
  });

  it('writes the log in order behind the answers, several per statement, and reports a failed write to a later answer', async () => {
    const batches: string[][] = [];
    let started!: () => void;
    const writing = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const writeLog = async (rows: readonly LoggedCommand[]) => {
      started();
      if (batches.length === 0) await slow;
      if (rows.some((row) => row.path === '/fail')) throw new Error('the database went away');
      batches.push(rows.map((row) => row.path));
    };
    // Only the session's last command, the end of a channel or a full backlog write: no timer in this test.
    const channels = webDriverChannels({ notifier: memoryNotifier() }, { writeLog, logEveryMs: 3_600_000 });
    channels.attach(7, 1);
    const first = channels.logAfter(answered('/first'), true);
    await writing;
    // Queued behind the first write, which is slow: they wait for it, in one statement.
    const second = channels.logAfter(answered('/second'), false);
    const third = channels.logAfter(answered('/third'), true);
    // Nothing is ahead enough to wait for: the agent goes on.
    await first.room();
    await second.room();
    expect(batches).toEqual([]);
    release();
    await third.this;
    expect(batches).toEqual([['/first'], ['/second', '/third']]);
    await expect(second.this).resolves.toBeUndefined();

    const failing = channels.logAfter(answered('/fail'), true);
    await expect(failing.this).rejects.toThrow('the database went away');
    const fourth = channels.logAfter(answered('/fourth'), false);
    await expect(fourth.room()).rejects.toThrow('the database went away');
    await expect(channels.logAfter(answered('/fifth'), false).room()).resolves.toBeUndefined();
    // The channel's end writes what waits, in order.
    channels.detach(7);
    await fourth.this;
    expect(batches.at(-1)).toEqual(['/fourth', '/fifth']);
    // Without a channel (the session ended here meanwhile): written alone.
    await channels.logAfter(answered('/late'), false).this;
    expect(batches.at(-1)).toEqual(['/late']);
  });
});
