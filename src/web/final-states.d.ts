// The server writes /final-states.js from the domain (src/api/dashboard-modules.ts): the dashboard
// keeps no copy of it. This declares it for the dashboard's type check.
import type { DeviceSessionState } from '../client/api-types.ts';

/** The device-session states after which nothing changes any more. */
export declare const FINAL_DEVICE_SESSION_STATES: readonly DeviceSessionState[];
