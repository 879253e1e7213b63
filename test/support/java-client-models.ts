/**
 * The fields of the Java client's models (bitbar/testdroid-api src/main/java/com/testdroid/api/model),
 * as client-models.ts holds the JavaScript client's: their JSON types, read from the model file
 * named in each entry's `source`; facts only. Java `Date`s and `Long`s are numbers, enums strings.
 * Every model extends `APIEntity` (APIEntity.java @008b7c89: `id`, `selfURI`), so each carries
 * `selfURI`; a getter named `isX` is read as `x` (`isShared` is `shared`).
 */
import type { ClientModel } from './client-models.ts';

const JAVA = 'bitbar/testdroid-api src/main/java/com/testdroid/api/model';
/**
 * The newest stored versions (jakarta.xml, LocalDateTime era), read in full. Of those, APIProject,
 * APIUser, APIUserFile, APITestRun, APITestCaseRun, APIScreenshot, APIFramework, APIDeviceGroup
 * and APITestRunConfig have no field beyond their JS models' (client-models.ts): only the models
 * that add one are listed below.
 */
const NEWEST = 'newest stored version';
const ENTITY = { id: 'number', selfURI: 'string' } as const;

export const JAVA_USER: ClientModel = {
  source: `${JAVA}/APIUser.java @f22edb1b`,
  fields: {
    ...ENTITY,
    activeServiceId: 'number',
    accountId: 'number',
    address: 'string',
    city: 'string',
    code: 'string',
    country: 'string',
    createTime: 'number',
    deleteTime: 'number',
    email: 'string',
    enabled: 'boolean',
    isMainUser: 'boolean',
    lastLoginTime: 'number',
    mainUserEmail: 'string',
    mainUserId: 'number',
    name: 'string',
    organization: 'string',
    phone: 'string',
    roles: 'array',
    state: 'string',
    status: 'string',
    timeZone: 'string',
    vatId: 'string',
    apiKey: 'string',
    createdById: 'number',
    createdByEmail: 'string',
  },
};

export const JAVA_ROLE: ClientModel = {
  source: `${JAVA}/APIRole.java @8c27eece`,
  fields: { ...ENTITY, expireTime: 'number', name: 'string', useLimit: 'number' },
};

export const JAVA_PROJECT: ClientModel = {
  source: `${JAVA}/APIProject.java @d6882d03`,
  fields: { ...ENTITY, name: 'string', description: 'string', type: 'string', common: 'boolean', sharedById: 'number' },
};

export const JAVA_TEST_RUN: ClientModel = {
  source: `${JAVA}/APITestRun.java @5a88e779`,
  fields: {
    ...ENTITY,
    config: 'object',
    createTime: 'number',
    displayName: 'string',
    executionRatio: 'number',
    number: 'number',
    projectId: 'number',
    startedByDisplayName: 'string',
    state: 'string',
    successRatio: 'number',
    screenshotsFileId: 'number',
    logsFileId: 'number',
  },
};

/** An item of a TestRunConfig's `files`. */
export const FILE_CONFIG: ClientModel = {
  source: `${JAVA}/APIFileConfig.java @67334a41`,
  fields: { ...ENTITY, action: 'string', availableActions: 'array', file: 'object' },
};

/**
 * What the newest APIDeviceSession has beyond the JS DeviceSession (client-models.ts), which a
 * session is checked against too: the rest of its fields are the JS model's.
 */
export const JAVA_DEVICE_SESSION: ClientModel = {
  source: `${JAVA}/APIDeviceSession.java (${NEWEST}), beyond the JS DeviceSession`,
  fields: { ...ENTITY, abortTime: 'number' },
};

/** The legacy view of a device session (`…/runs/{id}/device-runs`). */
export const DEVICE_RUN: ClientModel = {
  source: `${JAVA}/APIDeviceRun.java @00fdbccc`,
  fields: {
    ...ENTITY,
    runTime: 'number',
    device: 'object',
    testCaseSuccessNo: 'number',
    testCaseAllNo: 'number',
    testCaseCount: 'number',
    softwareVersion: 'object',
    createTime: 'number',
    startTime: 'number',
    currentState: 'object',
    interruptedByState: 'object',
    runStatus: 'string',
  },
};

/** A device run's state (`…/device-runs/{id}/states`, a device run's `currentState`); its `type` is read as `deviceRunStateType`. */
export const DEVICE_RUN_STATE: ClientModel = {
  source: `${JAVA}/APIDeviceRunState.java (${NEWEST})`,
  fields: {
    ...ENTITY,
    deviceRunId: 'number',
    failReason: 'string',
    finishTimeMS: 'number',
    retryTime: 'number',
    startTimeMS: 'number',
    status: 'string',
    deviceRunStateType: 'string',
  },
};

export const JAVA_DEVICE_SESSION_DATA_AVAILABILITY: ClientModel = {
  source: `${JAVA}/APIDeviceSessionDataAvailability.java @1dd4f127`,
  fields: {
    ...ENTITY,
    deviceRunId: 'number',
    logs: 'boolean',
    performance: 'boolean',
    screenshots: 'boolean',
    buildLogs: 'boolean',
    resultsDataZip: 'boolean',
  },
};

export const JAVA_TEST_RUN_DATA_AVAILABILITY: ClientModel = {
  source: `${JAVA}/APITestRunDataAvailability.java @7958caf0`,
  fields: { ...ENTITY, deviceRunDataAvailabilities: 'array', testRunId: 'number' },
};

export const JAVA_CONNECTION: ClientModel = {
  source: `${JAVA}/APIConnection.java @d086b225`,
  fields: {
    ...ENTITY,
    createTime: 'number',
    endTime: 'number',
    deviceSessionId: 'number',
    password: 'string',
    type: 'string',
    url: 'string',
    port: 'number',
    path: 'string',
    urlSchema: 'string',
    host: 'string',
  },
};

/**
 * What the newest APIDevice has beyond the JS Device (client-models.ts), all of whose fields it
 * has too (`supportedCreators` as a list of MANUAL, AUTOMATIC).
 */
export const JAVA_DEVICE: ClientModel = {
  source: `${JAVA}/APIDevice.java (${NEWEST}), beyond the JS Device`,
  fields: {
    ...ENTITY,
    imageCornerRadius: 'number',
    accountName: 'string',
    availability: 'object',
    location: 'string',
    lockReason: 'string',
  },
};

export const JAVA_DEVICE_GROUP: ClientModel = {
  source: `${JAVA}/APIDeviceGroup.java @ed872736`,
  fields: {
    ...ENTITY,
    creditsPrice: 'number',
    deviceCount: 'number',
    displayName: 'string',
    name: 'string',
    osType: 'string',
    userId: 'number',
  },
};

export const JAVA_DEVICE_PROPERTY: ClientModel = {
  source: `${JAVA}/APIDeviceProperty.java @04537bde`,
  fields: { ...ENTITY, displayName: 'string', name: 'string', propertyGroupId: 'number', propertyGroupName: 'string' },
};

export const JAVA_LABEL_GROUP: ClientModel = {
  source: `${JAVA}/APILabelGroup.java @0f845f01, and the version that added labelsSortAscending`,
  fields: {
    ...ENTITY,
    displayName: 'string',
    hiddenByDefault: 'boolean',
    labelsSortAscending: 'boolean',
    name: 'string',
  },
};

export const JAVA_FRAMEWORK: ClientModel = {
  source: `${JAVA}/APIFramework.java @5665a47b`,
  fields: {
    ...ENTITY,
    accountId: 'number',
    accountName: 'string',
    canRunFromUI: 'boolean',
    createTime: 'number',
    description: 'string',
    forProjects: 'boolean',
    name: 'string',
    osType: 'string',
    requiredAppExtensions: 'string',
    requiredTestExtensions: 'string',
    documentationUrl: 'string',
    requiredTestFileTags: 'string',
    retryable: 'boolean',
    secured: 'boolean',
    skipOlderSdk: 'boolean',
    skipQueue: 'boolean',
    queueWait: 'number',
    type: 'string',
    labelId: 'number',
    labelName: 'string',
    icon: 'string',
    sampleApp: 'object',
    sampleTest: 'object',
  },
};

/** The legacy project config (`/projects/{id}/config`), the "mode" era's APITestRunConfig. */
export const PROJECT_CONFIG: ClientModel = {
  source: `${JAVA}/APITestRunConfig.java @023da245`,
  fields: {
    ...ENTITY,
    projectId: 'number',
    scheduler: 'string',
    mode: 'string',
    autoScreenshots: 'boolean',
    runAvailable: 'boolean',
    screenshotDir: 'string',
    limitationType: 'string',
    limitationValue: 'string',
    withAnnotation: 'string',
    withoutAnnotation: 'string',
    applicationUsername: 'string',
    applicationPassword: 'string',
    usedDeviceGroupId: 'number',
    creditsPrice: 'number',
    deviceLanguageCode: 'string',
    hookURL: 'string',
    uiAutomatorTestClasses: 'string',
    launchApp: 'boolean',
    instrumentationRunner: 'string',
    checkApp: 'boolean',
    appRequired: 'boolean',
  },
};
