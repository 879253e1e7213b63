import type { Device } from '../../domain/devices.ts';
import type { Agent } from '../../domain/agents.ts';
import { presentManagedDevice } from './device.ts';
import Type from 'typebox';
import { Count, Id, MaybeStr, MaybeTime, Str, Time } from './fields.ts';
import { ApiManagedDevice } from './device.ts';
import { Nested, type Rep, entity, entitySchema } from './representation.ts';

export const ApiAgent = entitySchema('apiAgent', {
  id: Id,
  selfURI: Type.Null(),
  name: Str,
  hostname: MaybeStr,
  version: MaybeStr,
  createTime: Time,
  lastSeenTime: MaybeTime,
  deviceCount: Count,
  onlineDeviceCount: Count,
  devices: Type.Array(Nested(ApiManagedDevice)),
});

/** A device host's agent, for operators, with the devices it registered. */
export function presentAgent(agent: Agent, devices: readonly Device[]): Rep {
  return entity(ApiAgent, {
    id: agent.id,
    selfURI: null,
    name: agent.name,
    hostname: agent.hostname,
    version: agent.version,
    createTime: agent.createTime,
    lastSeenTime: agent.lastSeenTime,
    deviceCount: devices.length,
    onlineDeviceCount: devices.filter((device) => device.online).length,
    devices: devices.map(presentManagedDevice),
  });
}
