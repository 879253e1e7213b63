// The XCUITest runner for test/hardware/ios.hw.test.ts: add it as a UI testing target
// ("ConformanceUITests") to any app's Xcode project, build for testing on a device
// (xcodebuild build-for-testing -destination generic/platform=iOS ...), and zip
// ConformanceUITests-Runner.app from Build/Products/Debug-iphoneos. The iOS driver hands the run's
// parameters to the tests as environment variables; SCENARIO picks what they do.
import XCTest

final class ConformanceUITests: XCTestCase {
    private let scenario = ProcessInfo.processInfo.environment["SCENARIO"] ?? "passing"

    /// In the runner's own data container, which only uninstalling the runner removes.
    private var trace: URL {
        FileManager.default.urls(for: .documentDirectory, in: .userDomainMask)[0].appendingPathComponent("left-behind.txt")
    }

    func testA_launchesTheApp() throws {
        let app = XCUIApplication()
        app.launch()
        XCTAssertTrue(app.wait(for: .runningForeground, timeout: 30))
        // Long enough for a CPU sample or two.
        sleep(3)
        if scenario == "endless" {
            while true { sleep(1) }
        }
    }

    func testB_scenario() throws {
        switch scenario {
        case "failing":
            XCTFail("fails on purpose (conformance case: failing tests)")
        case "trace":
            try "secret".write(to: trace, atomically: true, encoding: .utf8)
        case "check-clean":
            XCTAssertFalse(FileManager.default.fileExists(atPath: trace.path), "left-behind.txt survived the cleaning")
        default:
            break
        }
    }
}
