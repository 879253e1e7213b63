#!/usr/bin/env bash
# Sample server-side test package: one test fails, like a real regression would.
set -euo pipefail

echo "Testing ${APP_PACKAGE:-unknown app} on ${DEVICE_NAME} (${DEVICE_OS} ${DEVICE_OS_VERSION})"
mkdir -p "$OUTPUT_DIR" "$SCREENSHOT_DIR"
sleep 0.5
echo "  com.devicecloud.sample.CheckoutTest#testAddToCart: passed"
sleep 0.5
cp screens/checkout.png "$SCREENSHOT_DIR/01-checkout.png"
echo "  com.devicecloud.sample.CheckoutTest#testPayWithExpiredCard: FAILED"
cat > "$OUTPUT_DIR/junit.xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="SampleShop on ${DEVICE_NAME}" tests="2" failures="1" errors="0">
  <testcase classname="com.devicecloud.sample.CheckoutTest" name="testAddToCart" time="0.512"/>
  <testcase classname="com.devicecloud.sample.CheckoutTest" name="testPayWithExpiredCard" time="0.498">
    <failure message="Expected the payment to be declined, but it was accepted" type="java.lang.AssertionError">java.lang.AssertionError: Expected the payment to be declined, but it was accepted
	at com.devicecloud.sample.CheckoutTest.testPayWithExpiredCard(CheckoutTest.java:42)
	at org.junit.runners.model.FrameworkMethod.invokeExplosively(FrameworkMethod.java:59)</failure>
  </testcase>
</testsuite>
XML
exit 1
