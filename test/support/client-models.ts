/**
 * The fields of the public clients' models and their JSON types: what a client of the established
 * API reads from each record (test/integration/client-model-fields.test.ts checks our answers
 * against them). Written from the model files named in each entry's `source`, as stored in the
 * search index at the commit given; facts only. Types are the JSON ones: enums and dates-as-text
 * are strings, Java `Date`s and `Long`s numbers, `any` fields any type. Every field may be null
 * (docs/api.md#formats): a type is checked when the value is not. This file holds the JavaScript
 * client's models; java-client-models.ts the Java client's, exported from here too.
 *
 * Java models extend `APIEntity` (bitbar/testdroid-api src/main/java/com/testdroid/api/APIEntity.java
 * @008b7c89: `id`, `selfURI`), so their entities carry `selfURI` even where the TypeScript model
 * leaves it out; the few JavaScript models below that merge in a Java one do too.
 */

export type JsonType = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'any';

export interface ClientModel {
  /** Repository, file and commit the fields were read from. */
  readonly source: string;
  readonly fields: Readonly<Record<string, JsonType>>;
}

export * from './java-client-models.ts';

const JS = 'bitbar/cloud-api-client-js src/api/models';
const JAVA = 'bitbar/testdroid-api src/main/java/com/testdroid/api/model';
const ENTITY = { id: 'number', selfURI: 'string' } as const;

export const USER: ClientModel = {
  source: `${JS}/User.ts @00119870 (User)`,
  fields: {
    accountId: 'number',
    accountName: 'string',
    userAccountName: 'string',
    accountServiceIds: 'array',
    address: 'string',
    apiKey: 'string',
    city: 'string',
    code: 'string',
    country: 'string',
    createTime: 'number',
    createdByEmail: 'string',
    createdById: 'number',
    deleteTime: 'number',
    email: 'string',
    enabled: 'boolean',
    firstName: 'string',
    id: 'number',
    isAccountOwner: 'boolean',
    lastLaunchedTestTime: 'number',
    lastLoginTime: 'number',
    lastName: 'string',
    organization: 'string',
    phone: 'string',
    registrationIP: 'string',
    roles: 'array',
    serviceIds: 'array',
    state: 'string',
    status: 'string',
    timeZone: 'string',
  },
};

export const ROLE: ClientModel = {
  source: `${JS}/Role.ts @1b7ec7ba (Role)`,
  fields: {
    addedByEmail: 'string',
    expireTime: 'number',
    id: 'number',
    name: 'string',
    value: 'number',
    valueCalculated: 'boolean',
    userRole: 'boolean',
  },
};

export const PROJECT: ClientModel = {
  source: `${JS}/Project.ts @3d781ebb (Project)`,
  fields: {
    archiveTime: 'number',
    archivingItemCount: 'number',
    archivingStrategy: 'string',
    common: 'boolean',
    createTime: 'number',
    description: 'string',
    id: 'number',
    name: 'string',
    osType: 'string',
    readOnly: 'boolean',
    rowIndex: 'number',
    shared: 'boolean',
    sharedByEmail: 'string',
    sharedById: 'number',
    sharedWithCaller: 'boolean',
    successRatio: 'number',
    userEmail: 'string',
    userId: 'number',
  },
};

export const TEST_RUN: ClientModel = {
  source: `${JS}/TestRun.ts @ffd14108 (TestRun)`,
  fields: {
    abortedDeviceCount: 'number',
    billable: 'boolean',
    config: 'object',
    createTime: 'number',
    deviceCount: 'number',
    displayName: 'string',
    errorsDeviceCount: 'number',
    excludedDeviceCount: 'number',
    executedTestCaseCount: 'number',
    executionRatio: 'number',
    failedTestCaseCount: 'number',
    finishedDeviceCount: 'number',
    frameworkId: 'number',
    frameworkName: 'string',
    id: 'number',
    logsFileId: 'number',
    message: 'string',
    number: 'number',
    projectId: 'number',
    projectName: 'string',
    rowIndex: 'number',
    runningDeviceCount: 'number',
    screenshotsFileId: 'number',
    startTime: 'number',
    startedByDisplayName: 'string',
    startedById: 'number',
    state: 'string',
    succeededDeviceCount: 'number',
    successRatio: 'number',
    successfulTestCaseCount: 'number',
    tags: 'array',
    testCaseCount: 'number',
    timeoutedDeviceCount: 'number',
    totalDeviceCount: 'number',
    uiLink: 'string',
    userId: 'number',
    waitingDeviceCount: 'number',
    warningDeviceCount: 'number',
  },
};

export const TEST_RUN_CONFIG: ClientModel = {
  source: `${JS}/TestRun.ts @ffd14108 (TestRunConfig)`,
  fields: {
    appCrawlerRun: 'boolean',
    appiumBrokerAddress: 'string',
    applicationPassword: 'string',
    applicationUsername: 'string',
    availableDeviceGroups: 'any',
    availableDevices: 'array',
    availableFrameworks: 'any',
    availableOsTypes: 'array',
    clientSideTestConfig: 'any',
    computedDevices: 'array',
    creditsPrice: 'number',
    deviceGroupId: 'number',
    deviceIds: 'any',
    deviceLanguageCode: 'string',
    deviceNamePattern: 'string',
    disableResigning: 'boolean',
    files: 'any',
    frameworkId: 'number',
    hookURL: 'string',
    id: 'number',
    instrumentationRunner: 'string',
    limitationType: 'string',
    limitationValue: 'string',
    loadedPrevious: 'boolean',
    maxAutoRetriesCount: 'number',
    maxTestTimeout: 'any',
    osType: 'string',
    projectId: 'number',
    projectName: 'string',
    resignFiles: 'boolean',
    runAvailable: 'boolean',
    scheduler: 'string',
    screenshotDir: 'string',
    selfURI: 'string',
    status: 'string',
    statusCode: 'number',
    testRunId: 'number',
    testRunName: 'string',
    testRunNameGrouping: 'string',
    testRunParameters: 'any',
    timeout: 'number',
    tunnelSettings: 'object',
    useSamples: 'boolean',
    usedDeviceGroupId: 'number',
    usedDeviceGroupName: 'string',
    videoRecordingEnabled: 'boolean',
    withAnnotation: 'string',
    withoutAnnotation: 'string',
  },
};

export const TAG: ClientModel = { source: `${JS}/Tag.ts @00bdfb45 (Tag)`, fields: { id: 'number', name: 'string' } };

export const DEVICE_SESSION: ClientModel = {
  source: `${JS}/DeviceSession.ts @9ce1f357 (DeviceSession)`,
  fields: {
    accountId: 'number',
    autoRetriesLeftCount: 'number',
    billable: 'boolean',
    biometricInstrumentation: 'boolean',
    config: 'object',
    createTime: 'number',
    clientSideId: 'string',
    device: 'object',
    deviceInstanceId: 'number',
    deviceLogFirstTimestamp: 'number',
    deviceRunId: 'number',
    deviceTime: 'number',
    duration: 'number',
    endTime: 'number',
    excludeReason: 'string',
    externalId: 'string',
    id: 'number',
    installTime: 'number',
    name: 'string',
    projectId: 'number',
    projectName: 'string',
    retryable: 'boolean',
    retryState: 'string',
    rowIndex: 'number',
    startTime: 'number',
    state: 'string',
    successRatio: 'number',
    testCaseAllCount: 'number',
    testCaseFailedCount: 'number',
    testCasePassedCount: 'number',
    testCaseSkippedCount: 'number',
    testCaseSuccessCount: 'number',
    testRunId: 'number',
    testRunName: 'string',
    timeLimit: 'number',
    type: 'string',
    uiLink: 'string',
    userEmail: 'string',
    userId: 'number',
  },
};

export const DEVICE_SESSION_STEP: ClientModel = {
  source: `${JS}/DeviceSession.ts @09fa0743 (DeviceSessionStep)`,
  fields: {
    deviceSessionId: 'number',
    excludeReason: 'string',
    failReason: 'string',
    finishTimeMS: 'number',
    id: 'number',
    startTimeMS: 'number',
    type: 'string',
  },
};

export const DEVICE_SESSION_DATA_AVAILABILITY: ClientModel = {
  source: `${JS}/DeviceSessionDataAvailability.ts @5d37c5f7`,
  fields: {
    buildLogs: 'boolean',
    deviceRunId: 'number',
    id: 'number',
    logs: 'boolean',
    performance: 'boolean',
    resultsDataZip: 'boolean',
    screenshots: 'boolean',
  },
};

export const TEST_RUN_DATA_AVAILABILITY: ClientModel = {
  source: `${JS}/TestRunDataAvailability.ts @dc379028`,
  fields: { deviceRunDataAvailabilities: 'array', id: 'number', testRunId: 'number' },
};

export const CONNECTION: ClientModel = {
  source: `${JS}/Connection.ts @c295d447`,
  fields: {
    createTime: 'number',
    deviceSessionId: 'number',
    endTime: 'number',
    externalId: 'string',
    host: 'string',
    id: 'number',
    password: 'string',
    path: 'string',
    port: 'number',
    type: 'string',
    url: 'string',
    urlSchema: 'string',
  },
};

export const DEVICE: ClientModel = {
  source: `${JS}/Device.ts @9103e5da (Device)`,
  fields: {
    accountId: 'number',
    available: 'boolean',
    browsers: 'object',
    creditsPrice: 'number',
    deviceGroupOrigin: 'string',
    displayName: 'string',
    enabled: 'boolean',
    frame100Url: 'string',
    frame160Url: 'string',
    frame400Url: 'string',
    frame80Url: 'string',
    frameExtraWidth: 'number',
    id: 'number',
    imageHeight: 'number',
    imageLeft: 'number',
    imagePrefix: 'string',
    imageTop: 'number',
    imageWidth: 'number',
    locked: 'boolean',
    mainUserEmail: 'string',
    manufacturer: 'string',
    online: 'boolean',
    osType: 'string',
    platform: 'string',
    properties: 'object',
    softwareVersion: 'object',
    supportedCreators: 'string',
  },
};

export const SOFTWARE_VERSION: ClientModel = {
  source: `${JS}/Device.ts @9103e5da (SoftwareVersion)`,
  fields: { apiLevel: 'number', id: 'number', releaseVersion: 'string' },
};

export const DEVICE_GROUP: ClientModel = {
  source: `${JS}/DeviceGroup.ts @2d15fffb (DeviceGroup)`,
  fields: {
    deviceCount: 'number',
    displayName: 'string',
    id: 'number',
    name: 'string',
    osType: 'string',
    shared: 'boolean',
    userEmail: 'string',
    userId: 'number',
  },
};

export const ACCESS_GROUP: ClientModel = {
  source: `${JS}/AccessGroup.ts @934f8d20 (AccessGroup)`,
  fields: { id: 'number', name: 'string', scope: 'string', userEmail: 'string', userId: 'number' },
};

export const SHARED_RESOURCE: ClientModel = {
  source: `${JS}/SharedResource.ts @c295d447 (SharedResource)`,
  fields: { id: 'number', name: 'string', resourceId: 'number', type: 'string' },
};

export const DEVICE_PROPERTY: ClientModel = {
  source: `${JS}/Device.ts @9103e5da (DeviceProperty)`,
  fields: {
    displayName: 'string',
    id: 'number',
    labelGroupName: 'string',
    name: 'string',
    propertyGroupId: 'number',
    propertyGroupName: 'string',
  },
};

export const LABEL_GROUP: ClientModel = {
  source: `${JS}/LabelGroup.ts @00bdfb45 (LabelGroup)`,
  fields: { displayName: 'string', id: 'number', name: 'string' },
};

export const DEVICE_PICKER: ClientModel = {
  source: `${JS}/DeviceFilter.ts @c0b091e7 (DevicePicker)`,
  fields: { deviceFilterGroups: 'array', id: 'number', selfURI: 'string' },
};

export const DEVICE_FILTER_GROUP: ClientModel = {
  source: `${JS}/DeviceFilter.ts @c0b091e7 (DeviceFilterGroup)`,
  fields: { deviceFilters: 'array', id: 'number', name: 'string', selfURI: 'string' },
};

export const DEVICE_FILTER: ClientModel = {
  source: `${JS}/DeviceFilter.ts @c0b091e7 (DeviceFilter)`,
  fields: {
    displayName: 'string',
    hidden: 'boolean',
    id: 'number',
    name: 'string',
    osType: 'string',
    selfURI: 'string',
  },
};

export const USER_FILE: ClientModel = {
  source: `${JS}/UserFile.ts @01380c59 (UserFile)`,
  fields: {
    createTime: 'number',
    directUrl: 'string',
    direction: 'string',
    duplicate: 'boolean',
    fileProperties: 'array',
    iconDirectUrl: 'string',
    id: 'number',
    inputType: 'string',
    mimetype: 'string',
    name: 'string',
    shared: 'boolean',
    size: 'number',
    state: 'string',
    userEmail: 'string',
    userId: 'number',
  },
};

/** `APIUserFileProperty` is an `APIEntity` too (APIEntity.java's @XmlSeeAlso lists it). */
export const FILE_PROPERTY: ClientModel = {
  source: `${JS}/UserFile.ts @01380c59 (FileProperty)`,
  fields: { ...ENTITY, key: 'string', value: 'string' },
};

export const FRAMEWORK: ClientModel = {
  source: `${JS}/Framework.ts @88812096 (Framework)`,
  fields: {
    accountId: 'number',
    accountName: 'string',
    canRunFromUI: 'boolean',
    createTime: 'number',
    description: 'string',
    documentationUrl: 'string',
    forProjects: 'boolean',
    icon: 'string',
    id: 'number',
    labelId: 'number',
    labelName: 'string',
    mainUserEmail: 'string',
    name: 'string',
    osType: 'string',
    queueWait: 'number',
    requiredAppExtensions: 'string',
    requiredTestExtensions: 'string',
    requiredTestFileTags: 'string',
    retryable: 'boolean',
    sampleApp: 'object',
    sampleTest: 'object',
    secured: 'boolean',
    skipOlderSdk: 'boolean',
    skipQueue: 'boolean',
    type: 'string',
  },
};

export const SCREENSHOT: ClientModel = {
  source: `${JS}/Screenshot.ts @00bdfb45 (Screenshot), and ${JAVA}/APIScreenshot.java @1e812ad7`,
  fields: {
    ...ENTITY,
    fail: 'boolean',
    originalName: 'string',
    takeTimestamp: 'number',
    type: 'string',
  },
};

export const TEST_CASE_RUN: ClientModel = {
  source: `${JS}/TestCaseRun.ts @c295d447 (TestCaseRun)`,
  fields: {
    className: 'string',
    createTime: 'number',
    duration: 'number',
    errorMessage: 'string',
    id: 'number',
    methodName: 'string',
    result: 'string',
    selfURI: 'string',
    stacktrace: 'string',
    steps: 'object',
    suiteName: 'string',
  },
};

/** A notification subscription (`/me/notifications`). */
export const NOTIFICATION: ClientModel = {
  source: `${JS}/Notification.ts @01380c59 (Notification)`,
  fields: {
    channel: 'string',
    destination: 'string',
    id: 'number',
    projectId: 'number',
    projectName: 'string',
    scope: 'string',
    selfURI: 'string',
    userEmail: 'string',
    userId: 'number',
  },
};

/** A system property (`/properties`). */
export const PROPERTY: ClientModel = {
  source: `${JS}/Property.ts @39203736 (Property)`,
  fields: {
    description: 'string',
    fromTime: 'number',
    id: 'number',
    name: 'string',
    selfURI: 'string',
    toTime: 'number',
    updateTime: 'number',
    updatedByDisplayName: 'string',
    updatedById: 'number',
    value: 'string',
  },
};

export const USER_STATISTICS: ClientModel = {
  source: `${JS}/UserStatistics.ts @fd354c99 (UserStatistics)`,
  fields: {
    additionalUsers: 'number',
    allTimeProjects: 'number',
    devicesUsed: 'number',
    id: 'number',
    overallTestCaseSuccessRatio: 'number',
    runningTestRuns: 'number',
    totalTestRuns: 'number',
  },
};

export const DEVICE_USAGE: ClientModel = {
  source: `${JS}/DeviceUsage.ts @5b94bca6 (DeviceUsage)`,
  fields: { device: 'object', failedDeviceSessions: 'number', id: 'number', totalDeviceSessions: 'number' },
};

export const USER_PREFERENCE: ClientModel = {
  source: `${JS}/UserPreference.ts @5d37c5f7 (UserPreference)`,
  fields: {
    defaultHttpSessionMaxInactiveInterval: 'number',
    defaultTestTimeout: 'number',
    httpSessionMaxInactiveInterval: 'number',
    id: 'number',
    testTimeout: 'number',
  },
};

/** Scopes and channels are lists of these (APIEnum.java: the enum's ordinal as id, its name as value). */
export const ENUM: ClientModel = {
  source: `${JS}/Enum.ts @39203736 (Enum)`,
  fields: { id: 'number', selfURI: 'string', value: 'string' },
};
