/** Types for the parts of @devicefarmer/adbkit-apkreader we use (the package ships none). */
declare module '@devicefarmer/adbkit-apkreader' {
  interface IntentFilter {
    actions: Array<{ name: string }>;
    categories: Array<{ name: string }>;
  }
  interface Component {
    name: string;
    label?: unknown;
    exported?: boolean;
    intentFilters: IntentFilter[];
  }
  interface Manifest {
    package: string;
    versionCode?: number;
    versionName?: string;
    usesSdk?: { minSdkVersion?: number; targetSdkVersion?: number } | null;
    instrumentation?: { name: string; targetPackage?: string } | null;
    application?: {
      label?: unknown;
      activities: Component[];
      activityAliases: Component[];
      launcherActivities: Component[];
    } | null;
  }
  interface ApkReader {
    readManifest(): Promise<Manifest>;
  }
  const ApkReaderStatic: { open(file: string): Promise<ApkReader> };
  export default ApkReaderStatic;
}
