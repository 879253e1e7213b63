import type { Storage } from '../../domain/storage.ts';
import { type User, fullName } from '../../domain/users.ts';
import Type from 'typebox';
import { AlwaysNull, Bool, Id, MaybeStr, MaybeTime, SelfURI, Str, Time } from './fields.ts';
import { Nested, type Rep, entity, entitySchema } from './representation.ts';

/** A role of the account (USER or ADMIN) or its plan (`PRIORITY_<PLAN>`); roles have no resource of their own here. */
export const ApiRole = entitySchema('apiRole', {
  id: Id,
  selfURI: AlwaysNull,
  name: Str,
  value: AlwaysNull,
  expireTime: AlwaysNull,
  addedByEmail: AlwaysNull,
  valueCalculated: Bool,
  userRole: Bool,
  useLimit: AlwaysNull,
});

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
  address: MaybeStr,
  city: MaybeStr,
  code: MaybeStr,
  state: MaybeStr,
  phone: MaybeStr,
  vatId: MaybeStr,
  createTime: Time,
  lastLoginTime: MaybeTime,
  lastLaunchedTestTime: MaybeTime,
  deleteTime: AlwaysNull,
  createdById: AlwaysNull,
  createdByEmail: AlwaysNull,
  registrationIP: AlwaysNull,
  enabled: Bool,
  status: Str,
};
/** Every account here is one user, its own main user and owner; there are no paid services. */
const planFields = {
  plan: Str,
  roles: Type.Array(Nested(ApiRole)),
  accountId: Id,
  accountName: Str,
  userAccountName: Str,
  isMainUser: Bool,
  isAccountOwner: Bool,
  mainUserId: Id,
  mainUserEmail: Str,
  activeServiceId: AlwaysNull,
  serviceIds: Type.Array(Id),
  accountServiceIds: Type.Array(Id),
  ...storageFields,
};

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
    address: user.address,
    city: user.city,
    code: user.code,
    state: user.state,
    phone: user.phone,
    vatId: user.vatId,
    createTime: user.createTime,
    lastLoginTime: user.lastLoginTime,
    lastLaunchedTestTime: user.lastLaunchedTestTime,
    // Accounts are made by operators (no sign-up, so no registration address) and removed at once.
    deleteTime: null,
    createdById: null,
    createdByEmail: null,
    registrationIP: null,
    enabled: user.status === 'ENABLED',
    status: user.status,
  };
  const plan = {
    plan: user.plan,
    roles: [role(1, user.role), role(2, `PRIORITY_${user.plan}`)],
    accountId: user.id,
    accountName: accountName(user),
    userAccountName: accountName(user),
    isMainUser: true,
    isAccountOwner: true,
    mainUserId: user.id,
    mainUserEmail: user.email,
    activeServiceId: null,
    serviceIds: [],
    accountServiceIds: [],
    ...presentStorage(storage),
  };
  return apiKey === undefined
    ? entity(ApiUser, { ...account, ...plan })
    : entity(ApiUserWithKey, { ...account, apiKey, ...plan });
}

function role(id: number, name: string): Rep {
  return entity(ApiRole, {
    id,
    selfURI: null,
    name,
    value: null,
    expireTime: null,
    addedByEmail: null,
    valueCalculated: false,
    userRole: true,
    useLimit: null,
  });
}

/** The account's name: its organization when the user gave one, else the user's e-mail. */
function accountName(user: User): string {
  return user.organization ?? user.email;
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
