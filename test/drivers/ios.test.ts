/**
 * The iOS driver against the fake go-ios (test/support/fake-ios): the conformance cases with
 * XCUITest runners as the tests. What is particular to iOS is in ios-*.test.ts; no phone is
 * involved, the same cases run on a real one in test/hardware/ios.hw.test.ts.
 */
import { describeDriverConformance } from './conformance.ts';
import { fixtures, world, iosFiles } from './ios-world.ts';

iosFiles();

describeDriverConformance('ios (fake go-ios)', async () => {
  const { driver } = world();
  return { driver, fixtures, cleanup: async () => undefined };
});
