import type { Storage } from '../../domain/storage.ts';
import { type User, fullName } from '../../domain/users.ts';
import { type Rep, rep } from './representation.ts';

/**
 * The account record, with its storage used and quota. `apiKey` is there only when given: to its
 * owner, and only when they used the key itself or just received a new one (routes/users.ts decides).
 */
export function presentUser(user: User, storage: Storage, apiKey?: string): Rep {
  return rep('apiUser', {
    id: user.id,
    selfURI: `/users/${user.id}`,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    name: fullName(user),
    organization: user.organization,
    country: user.country,
    timeZone: user.timeZone,
    createTime: user.createTime,
    lastLoginTime: user.lastLoginTime,
    lastLaunchedTestTime: user.lastLaunchedTestTime,
    enabled: user.status === 'ENABLED',
    status: user.status,
    ...(apiKey !== undefined && { apiKey }),
    plan: user.plan,
    roles: [
      rep('apiRole', { id: 1, name: user.role, value: null, expireTime: null }),
      rep('apiRole', { id: 2, name: `PRIORITY_${user.plan}`, value: null, expireTime: null }),
    ],
    accountId: user.id,
    isMainUser: true,
    ...presentStorage(storage),
  });
}

/** Bytes of files and artifacts the account keeps, and its quota (domain/storage.ts). */
function presentStorage(storage: Storage) {
  return { storageUsedBytes: storage.usedBytes, storageQuotaBytes: storage.quotaBytes };
}

/** A user as operators see it (`/admin/users`): plan, role and status, never the API key. */
export function presentManagedUser(user: User, storage: Storage): Rep {
  return rep('apiUser', {
    id: user.id,
    selfURI: `/admin/users/${user.id}`,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    name: fullName(user),
    organization: user.organization,
    createTime: user.createTime,
    lastLoginTime: user.lastLoginTime,
    lastLaunchedTestTime: user.lastLaunchedTestTime,
    enabled: user.status === 'ENABLED',
    status: user.status,
    plan: user.plan,
    role: user.role,
    ...presentStorage(storage),
  });
}
