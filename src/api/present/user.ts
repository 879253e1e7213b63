import type { Storage } from '../../domain/storage.ts';
import { type User, fullName } from '../../domain/users.ts';
import Type from 'typebox';
import { Bool, Id, MaybeStr, MaybeTime, SelfURI, Str, Time } from './fields.ts';
import { Nested, type Rep, entity, entitySchema } from './representation.ts';

export const ApiRole = entitySchema('apiRole', { id: Id, name: Str, value: Type.Null(), expireTime: Type.Null() });

const storageFields = {
  storageUsedBytes: Type.Integer({ minimum: 0, description: 'Bytes of files and artifacts the account keeps' }),
  storageQuotaBytes: Type.Integer({ minimum: 0, description: 'The most it may keep' }),
};

const accountFields = {
  id: Id,
  selfURI: SelfURI,
  email: Str,
  firstName: Str,
  lastName: Str,
  name: Str,
  organization: MaybeStr,
  country: MaybeStr,
  timeZone: MaybeStr,
  createTime: Time,
  lastLoginTime: MaybeTime,
  lastLaunchedTestTime: MaybeTime,
  enabled: Bool,
  status: Str,
};
const planFields = { plan: Str, roles: Type.Array(Nested(ApiRole)), accountId: Id, isMainUser: Bool, ...storageFields };

export const ApiUser = entitySchema('apiUser', { ...accountFields, ...planFields });

/** The account with its API key: to its owner, authenticated with the key itself or just given a new one. */
export const ApiUserWithKey = entitySchema(
  'apiUser',
  { ...accountFields, apiKey: Str, ...planFields },
  { title: 'apiUserWithKey' },
);

/** What `/me` answers: the key is in its place only when shown. */
export const ApiMe = Type.Union([ApiUserWithKey, ApiUser], { title: 'apiMe' });

/** An account as operators see it (`/admin/users`). */
export const ApiManagedUser = entitySchema(
  'apiUser',
  {
    id: Id,
    selfURI: SelfURI,
    email: Str,
    firstName: Str,
    lastName: Str,
    name: Str,
    organization: MaybeStr,
    createTime: Time,
    lastLoginTime: MaybeTime,
    lastLaunchedTestTime: MaybeTime,
    enabled: Bool,
    status: Str,
    plan: Str,
    role: Str,
    ...storageFields,
  },
  { title: 'apiManagedUser' },
);

/**
 * The account record, with its storage used and quota. `apiKey` is there only when given: to its
 * owner, and only when they used the key itself or just received a new one (routes/users.ts decides).
 */
export function presentUser(user: User, storage: Storage, apiKey?: string): Rep {
  const account = {
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
  };
  const plan = {
    plan: user.plan,
    roles: [
      entity(ApiRole, { id: 1, name: user.role, value: null, expireTime: null }),
      entity(ApiRole, { id: 2, name: `PRIORITY_${user.plan}`, value: null, expireTime: null }),
    ],
    accountId: user.id,
    isMainUser: true,
    ...presentStorage(storage),
  };
  return apiKey === undefined
    ? entity(ApiUser, { ...account, ...plan })
    : entity(ApiUserWithKey, { ...account, apiKey, ...plan });
}

/** Bytes of files and artifacts the account keeps, and its quota (domain/storage.ts). */
function presentStorage(storage: Storage) {
  return { storageUsedBytes: storage.usedBytes, storageQuotaBytes: storage.quotaBytes };
}

/** A user as operators see it (`/admin/users`): plan, role and status, never the API key. */
export function presentManagedUser(user: User, storage: Storage): Rep {
  return entity(ApiManagedUser, {
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
