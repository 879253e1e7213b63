/**
 * APKs: the binary AndroidManifest.xml read with DeviceFarmer's apkreader. An APK that declares an
 * <instrumentation> is a test APK; otherwise an app. The crawler needs every activity, so they are
 * all listed, fully qualified.
 */
import ApkReader from '@devicefarmer/adbkit-apkreader';
import { InspectionError } from './errors.ts';

export interface ApkFacts {
  readonly isTest: boolean;
  readonly properties: Record<string, string>;
}

export async function inspectApk(filePath: string, name: string): Promise<ApkFacts> {
  let manifest;
  try {
    manifest = await (await ApkReader.open(filePath)).readManifest();
  } catch (error) {
    throw new InspectionError(
      `${name} is not a valid APK: its AndroidManifest.xml cannot be read (${(error as Error).message.slice(0, 200)})`,
    );
  }
  if (typeof manifest.package !== 'string' || manifest.package === '') {
    throw new InspectionError(`${name} is not a valid APK: its manifest names no package`);
  }
  const qualify = (activity: string) =>
    activity.startsWith('.')
      ? manifest.package + activity
      : activity.includes('.')
        ? activity
        : `${manifest.package}.${activity}`;
  const activities = manifest.application?.activities ?? [];
  const launcher = manifest.application?.launcherActivities?.[0] ?? activities.find(isLauncher);
  const properties: Record<string, string> = { package_name: manifest.package };
  const set = (key: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== '') properties[key] = String(value);
  };
  set('version_name', manifest.versionName);
  set('version_code', manifest.versionCode);
  set('min_sdk', manifest.usesSdk?.minSdkVersion);
  set('target_sdk', manifest.usesSdk?.targetSdkVersion);
  set('main_activity', launcher && qualify(launcher.name));
  set('activities', activities.map((activity) => qualify(activity.name)).join(','));
  set(
    'exported_activities',
    activities
      .filter((activity) => activity.exported === true || activity.intentFilters.length > 0)
      .map((activity) => qualify(activity.name))
      .join(','),
  );
  // Labels are often resource references ("resourceId:0x7f…"); only literal text is worth showing.
  const label = manifest.application?.label;
  if (typeof label === 'string' && !label.startsWith('resourceId:')) set('label', label);
  const instrumentation = manifest.instrumentation;
  if (instrumentation) {
    set('instrumentation_name', qualify(instrumentation.name));
    set('target_package_name', instrumentation.targetPackage);
  }
  return { isTest: Boolean(instrumentation), properties };
}

function isLauncher(activity: {
  intentFilters: Array<{ actions: Array<{ name: string }>; categories: Array<{ name: string }> }>;
}): boolean {
  return activity.intentFilters.some(
    (filter) =>
      filter.actions.some((action) => action.name === 'android.intent.action.MAIN') &&
      filter.categories.some((category) => category.name === 'android.intent.category.LAUNCHER'),
  );
}
