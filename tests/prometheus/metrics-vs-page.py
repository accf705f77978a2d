#!/usr/bin/python3
# Reads cachectl(1)'s METRICS section and checks live `cachectl metrics`
# output against it and against `cachectl status --json`: every family the
# page lists is exported with the type the page gives it and no family is
# exported that the page does not list; every sample has the value of the
# status field the page names ("status \fBfield\fR"), for the cache or
# volume of its labels; and every measured cache and every volume has a
# sample of each field that is not null.
# Usage: metrics-vs-page.py PAGE METRICS_FILE STATUS_JSON_FILE
# Prints what differs and exits 1, or exits 0 silently.
import json
import re
import sys

page_path, metrics_path, status_path = sys.argv[1:4]
errors = []


def page_entries(path):
    """{name: (type, spec)} from the METRICS part of the page: each metric
    is ".B name" after ".TP", its text starting "Gauge" or "Counter"."""
    text = open(path).read()
    section = text[text.index('.SS metrics'):text.index('.SH PERMISSIONS')]
    entries = {}
    for block in section.split('\n.TP\n')[1:]:
        lines = block.split('\n')
        m = re.fullmatch(r'\.B (cachekeeper_[a-z0-9_]+)', lines[0])
        if not m:
            continue
        body = ' '.join(l for l in lines[1:] if not l.startswith('.PD') and not l.startswith('.PP'))
        t = re.match(r'(Gauge|Counter)\b', body)
        if not t:
            errors.append(f'page: {m.group(1)} does not start with its type (Gauge or Counter)')
            continue
        entries[m.group(1)] = (t.group(1).lower(), body)
    return entries


def parse_metrics(path):
    """(types {family: type}, samples [(name, {label: value}, float)])."""
    types, samples = {}, []
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('# TYPE '):
            _, _, name, kind = line.split(' ')
            types[name] = kind
            continue
        if not line or line.startswith('#'):
            continue
        m = re.fullmatch(r'([a-z_0-9]+)(?:\{(.*)\})? (\S+)', line)
        if not m:
            errors.append(f'metrics: unparsable line {line!r}')
            continue
        labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2) or ''))
        samples.append((m.group(1), labels, float(m.group(3))))
    return types, samples


def number(v):
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    return None


def resolve(obj, path, labels):
    """The value at a page path such as "regret.stores_\\fIwindow" or
    "writers[].entries" in obj, placeholders taken from labels."""
    path = re.sub(r'\\fI([a-z_]+)', lambda m: labels.get(m.group(1), '?'), path)
    for part in path.split('.'):
        if part.endswith('[]'):
            items = obj.get(part[:-2]) or []
            obj = next((w for w in items if w.get('ccache_version') == labels.get('ccache_version') and
                        (w.get('namespace') or '') == labels.get('namespace')), None)
        elif isinstance(obj, dict):
            obj = obj.get(part)
        else:
            return None
        if obj is None:
            return None
    return obj


page = page_entries(page_path)
types, samples = parse_metrics(metrics_path)
status = json.load(open(status_path))
caches = {c['name']: c for c in status['caches']}
volumes = {v['mount']: v for v in status['volumes']}
remotes = {r['name']: r for r in status.get('remotes', [])}

for name in sorted(set(page) - set(types)):
    errors.append(f'{name}: on the page, not exported')
for name in sorted(set(types) - set(page)):
    errors.append(f'{name}: exported, not on the page')
for name in sorted(set(page) & set(types)):
    if page[name][0] != types[name]:
        errors.append(f'{name}: the page says {page[name][0]}, TYPE says {types[name]}')

LEVELS = {'ok': 0, 'warning': 1, 'critical': 2}
seen = set()
for name, labels, value in samples:
    if name not in page:
        continue
    body = page[name][1]
    want_label = 'cache' if name.startswith('cachekeeper_cache_') else \
        'mountpoint' if name.startswith('cachekeeper_volume_') else None
    if want_label and want_label not in labels:
        errors.append(f'{name}{labels}: no label {want_label}')
        continue
    if 'cache' in labels:
        obj = caches.get(labels['cache'])
    elif 'mountpoint' in labels:
        obj = volumes.get(labels['mountpoint'])
    elif 'remote' in labels:
        obj = remotes.get(labels['remote'])
    else:
        obj = status
    if obj is None:
        errors.append(f'{name}{labels}: no such cache or volume in the status')
        continue
    key = labels.get('cache', labels.get('mountpoint', labels.get('remote', '')))
    seen.add((name, key))
    if name == 'cachekeeper_up':
        want = 1.0
    elif name == 'cachekeeper_build_info':
        want = 1.0
        if labels.get('version') != status.get('version', 'unknown'):
            errors.append(f'{name}: version {labels.get("version")!r}, status says {status.get("version")!r}')
    elif name == 'cachekeeper_cache_info':
        want = 1.0
        if labels.get('path') != obj['path'] or labels.get('mountpoint') != obj.get('mount'):
            errors.append(f'{name}{labels}: status has path {obj["path"]!r}, mount {obj.get("mount")!r}')
    elif name == 'cachekeeper_volume_alert_level':
        want = float(LEVELS[obj['alert']])
    elif name == 'cachekeeper_remote_level':
        want = float(LEVELS[obj['level']])
    elif m := re.search(r'1 (unless|while) status \\fBstate\\fR is \\fB([a-z_]+)\\fR', body):
        want = float((obj['state'] == m.group(2)) == (m.group(1) == 'while'))
    elif m := re.search(r'status \\fB([^ ,;)]+?)\\fR', body):
        want = number(resolve(obj, m.group(1), labels))
        if want is None:
            errors.append(f'{name}{labels} {value}: status {m.group(1)} is null or absent, yet sampled')
            continue
    else:
        errors.append(f'{name}: the page names no status field for it')
        continue
    if abs(value - want) > 1e-9 * max(1.0, abs(want)):
        errors.append(f'{name}{labels}: {value!r}, status says {want!r}')

# Each unlabelled-by-window scalar field the page names, present in a
# measured cache (or a volume), has its sample.
for name, (kind, body) in page.items():
    m = re.search(r'status \\fB([a-z_0-9.]+)\\fR', body)
    if not m or '\\fI' in body.split('status', 1)[1].split('\\fR', 1)[0] or 'state' == m.group(1):
        continue
    if name.startswith('cachekeeper_cache_') and name != 'cachekeeper_cache_info':
        objs = {n: c for n, c in caches.items() if c['state'] not in ('unavailable', 'scanning')}
    elif name.startswith('cachekeeper_volume_'):
        objs = volumes
    else:
        continue
    for key, obj in objs.items():
        if number(resolve(obj, m.group(1), {})) is not None and (name, key) not in seen:
            errors.append(f'{name}: no sample for {key}, whose status {m.group(1)} is {resolve(obj, m.group(1), {})!r}')

for e in errors:
    print(e)
sys.exit(1 if errors else 0)
