// The instrumentation tests for test/hardware/adb.hw.test.ts (DEVICECLOUD_HW_TEST_APK), so that the
// adb driver's own path (install, `am instrument -r -w`, its status stream) runs on the phone too.
// Put this file in the androidTest source set of the app given as DEVICECLOUD_HW_APK (any app with
// a launcher activity; dependencies androidx.test:runner and junit, testInstrumentationRunner
// "androidx.test.runner.AndroidJUnitRunner"), build `./gradlew assembleDebug assembleDebugAndroidTest`
// and give both APKs. The adb driver hands the run's parameters to the runner as `-e key value`;
// SCENARIO picks what the tests do (the cases of test/drivers/conformance.ts).
package com.devicecloud.conformance;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.fail;

import android.content.Context;
import android.content.Intent;
import android.os.ParcelFileDescriptor;
import androidx.test.platform.app.InstrumentationRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import org.junit.FixMethodOrder;
import org.junit.Test;
import org.junit.runners.MethodSorters;

@FixMethodOrder(MethodSorters.NAME_ASCENDING)
public class ConformanceTest {
    /** Outside the app's own storage, so that only the cleaning's file deletion removes it. */
    private static final String TRACE_DIR = "/data/local/tmp";
    private static final String TRACE = "devicecloud-left-behind.txt";

    private final String scenario = InstrumentationRegistry.getArguments().getString("SCENARIO", "passing");

    @Test
    public void testA_launchesTheApp() throws Exception {
        Context context = InstrumentationRegistry.getInstrumentation().getTargetContext();
        Intent launch = context.getPackageManager().getLaunchIntentForPackage(context.getPackageName());
        assertNotNull("the app under test has no launcher activity", launch);
        launch.addFlags(Intent.FLAG_ACTIVITY_NEW_TASK | Intent.FLAG_ACTIVITY_CLEAR_TASK);
        context.startActivity(launch);
        // Long enough for a CPU and memory sample or two of the app.
        Thread.sleep(3000);
        if (scenario.equals("endless")) {
            while (true) Thread.sleep(1000);
        }
    }

    @Test
    public void testB_scenario() throws Exception {
        switch (scenario) {
            case "failing":
                fail("fails on purpose (conformance case: failing tests)");
                break;
            case "trace":
                // The shell user (not the app) may write there, as adb push does.
                shell("touch " + TRACE_DIR + "/" + TRACE);
                break;
            case "check-clean":
                assertFalse(TRACE + " survived the cleaning", shell("ls " + TRACE_DIR).contains(TRACE));
                break;
            default:
                break;
        }
    }

    /** A command run as the shell user (no shell syntax: it is split on spaces); answers its output. */
    private static String shell(String command) throws IOException {
        ParcelFileDescriptor output = InstrumentationRegistry.getInstrumentation().getUiAutomation().executeShellCommand(command);
        try (InputStream in = new ParcelFileDescriptor.AutoCloseInputStream(output)) {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            byte[] buffer = new byte[4096];
            for (int read; (read = in.read(buffer)) != -1; ) all.write(buffer, 0, read);
            return all.toString("UTF-8");
        }
    }
}
