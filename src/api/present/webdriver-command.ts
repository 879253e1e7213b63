/**
 * One WebDriver command of an Appium client side session (docs/api.md#appium-client-side), as its
 * command log lists it: what the client sent and what the device answered. Screenshots are not
 * repeated here (the session's screenshots hold them): long answers are cut.
 */
import Type from 'typebox';
import type { WebDriverCommand } from '../../domain/webdriver.ts';
import { Id, MaybeStr, MaybeTime, Str, Time } from './fields.ts';
import { type Rep, entity, entitySchema } from './representation.ts';

const SHOWN_CHARS = 2000;

export const ApiDeviceSessionCommand = entitySchema('apiDeviceSessionCommand', {
  id: Id,
  deviceSessionId: Id,
  sessionId: MaybeStr,
  method: Str,
  uri: Str,
  body: MaybeStr,
  state: Str,
  statusCode: Type.Union([Type.Null(), Type.Integer()]),
  response: MaybeStr,
  createTime: Time,
  answerTime: MaybeTime,
  duration: Type.Union([Type.Null(), Type.Integer({ minimum: 0, description: 'Milliseconds' })]),
});

const cut = (text: string | null) =>
  text === null || text === '' ? null : text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;

export function presentCommand(command: WebDriverCommand, sessionId: string | null): Rep {
  return entity(ApiDeviceSessionCommand, {
    id: command.id,
    deviceSessionId: command.deviceRunId,
    sessionId,
    method: command.method,
    // Interactive sessions' inputs (docs/api.md#interactive-sessions) are not WebDriver commands.
    uri: command.path.startsWith('/interactive/') ? command.path : `/wd/hub${command.path}`,
    body: cut(command.body),
    state: command.state,
    statusCode: command.status,
    response: cut(command.answer),
    createTime: command.createTime,
    answerTime: command.answerTime,
    duration: command.answerTime === null ? null : Math.max(0, command.answerTime - command.createTime),
  });
}
