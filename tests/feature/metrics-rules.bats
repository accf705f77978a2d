#!/usr/bin/env bats
# The shipped alert rules (issue 13, item 9): promtool accepts them, and
# promtool test rules runs tests/prometheus/cachekeeper-rules.test.yml, in
# which every alert fires on some series and stays silent on others. That
# every metric the rules query is exported is checked against a live daemon
# in metrics-values.bats.
load ../lib/helper

RULES=$TOP/etc/prometheus/cachekeeper-rules.yml
TESTS=$TOP/tests/prometheus/cachekeeper-rules.test.yml

@test "promtool check rules accepts the shipped rules" {
        run promtool check rules "$RULES"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"SUCCESS: "*" rules found"* ]]
}

@test "promtool test rules: every alert as the tests expect it" {
        run promtool test rules "$TESTS"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *SUCCESS* ]]
        # Not blind: a test expecting the wrong volume fails.
        T=$BATS_TEST_TMPDIR
        mkdir -p "$T/etc/prometheus" "$T/tests/prometheus"
        cp "$RULES" "$T/etc/prometheus/"
        sed 's|mountpoint: /a}|mountpoint: /srv}|' "$TESTS" > "$T/tests/prometheus/broken.test.yml"
        run promtool test rules "$T/tests/prometheus/broken.test.yml"
        [ "$status" -ne 0 ]
        [[ "$output" == *"alertname: CachekeeperVolumeSpaceLow"* ]]
}

@test "each alert has a test where it fires and one where it stays silent; the rules cover what the issue lists" {
        /usr/bin/python3 - "$RULES" "$TESTS" <<'PY'
import sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
tests = yaml.safe_load(open(sys.argv[2]))
alerts = [r['alert'] for g in rules['groups'] for r in g['rules'] if 'alert' in r]
fires, silent = set(), set()
for t in tests['tests']:
    for a in t.get('alert_rule_test', []):
        (fires if a.get('exp_alerts') else silent).add(a['alertname'])
bad = [f"{a}: {'never fires' if a not in fires else 'never shown silent'}"
       for a in alerts if a not in fires or a not in silent]
bad += [f"{a}: tested, not a rule" for a in (fires | silent) - set(alerts)]
exprs = ' '.join(r['expr'] for g in rules['groups'] for r in g['rules'])
for need in ['cachekeeper_volume_warn_free_bytes', 'cachekeeper_volume_crit_free_bytes', 'predict_linear(',
             'cachekeeper_volume_full_within_seconds', 'cachekeeper_cache_max_size_bytes',
             'alarm="cache-silent-miss"', 'alarm="cache-cap-small"', 'alarm="cache-version-mix"',
             'cachekeeper_up == 0', 'absent(cachekeeper_up)', 'cachekeeper_cache_mode_ok == 0',
             'cachekeeper_cache_remote_errors > 0', 'cachekeeper_remote_up == 0', 'cachekeeper_remote_level == 1',
             'cachekeeper_remote_level == 2']:
    if need not in exprs:
        bad.append(f"no rule uses {need}")
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY
        # The critical over-cap factor is cachectl check's.
        factor=$(sed -n 's/^#define REPORT_OVER_CAP_CRITICAL //p' "$TOP/ctl/views/report.h")
        [ -n "$factor" ]
        [ "$(grep -c "> $factor \* cachekeeper_cache_max_size_bytes" "$RULES")" -eq 2 ]
}
