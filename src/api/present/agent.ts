import type { Device } from '../../domain/devices.ts';
import type { Agent } from '../../domain/agents.ts';
import { presentManagedDevice } from './device.ts';
import { type Rep, rep } from './representation.ts';

/** A device host's agent, for operators, with the devices it registered. */
export function presentAgent(agent: Agent, devices: readonly Device[]): Rep {
  return rep('apiAgent', {
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
