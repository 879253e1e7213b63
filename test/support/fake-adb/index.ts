export { FakeAdbServer } from './server.ts';
export { FakeDevice, type FakeDeviceOptions, recording } from './device.ts';
export { SCENARIOS, type Scenario, tracesOf } from './scenarios.ts';
export { GOOGLE_USERS, type GoogleUser } from './ui.ts';
