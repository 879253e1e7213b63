#!/usr/bin/env bash
# Sample server-side test package: all tests pass.
# Runs next to the device the way Appium server-side packages do, using the environment the
# agent provides (DEVICE_NAME, APP_PATH, APP_PACKAGE, OUTPUT_DIR, SCREENSHOT_DIR, DEVICE_STORAGE, ...).
set -euo pipefail

echo "Testing ${APP_PACKAGE:-unknown app} on ${DEVICE_NAME} (${DEVICE_OS} ${DEVICE_OS_VERSION})"
mkdir -p "$OUTPUT_DIR" "$SCREENSHOT_DIR"

results=()
run_test() {
  local class=$1 name=$2 seconds=$3
  local started=$(date +%s%N)
  echo "  $class#$name"
  sleep "$seconds"
  local elapsed=$(( ($(date +%s%N) - started) / 1000000 ))
  results+=("<testcase classname=\"$class\" name=\"$name\" time=\"$(printf '%d.%03d' $((elapsed/1000)) $((elapsed%1000)))\"/>")
}

run_test com.devicecloud.sample.LaunchTest testAppInstalled 0.3
test -f "$APP_PATH" || { echo "app not installed at $APP_PATH"; exit 1; }
run_test com.devicecloud.sample.LaunchTest testMainScreenShows 0.6
cp screens/home.png "$SCREENSHOT_DIR/01-home.png"
run_test com.devicecloud.sample.CheckoutTest testAddToCart 0.6
run_test com.devicecloud.sample.CheckoutTest testPayWithValidCard 0.6
cp screens/checkout.png "$SCREENSHOT_DIR/02-checkout.png"
# Leaves a trace on the device on purpose: cleaning must remove it before the next run.
echo "cart of run ${DEVICE_RUN_ID:-?}" > "$DEVICE_STORAGE/cart.txt"

{
  echo '<?xml version="1.0" encoding="UTF-8"?>'
  echo "<testsuite name=\"SampleShop on ${DEVICE_NAME}\" tests=\"${#results[@]}\" failures=\"0\" errors=\"0\">"
  printf '  %s\n' "${results[@]}"
  echo '</testsuite>'
} > "$OUTPUT_DIR/junit.xml"
echo "${#results[@]} tests passed"
